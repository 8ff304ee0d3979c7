"""V1 <-> V2 migration through a container map, and the container-map file format.

V1 keys assignments by container ID; V2 by pod UID and container name. The kubelet (v1.18+)
migrates a V1 file at start with the map of the containers the runtime reports, and fails
the whole restore when one ID is unknown (no partial migration). ``v2_to_v1`` is the reverse,
for a downgrade to a pre-1.18 kubelet: every (pod, name) needs a container ID.

When several V1 IDs name the same container, the last one in sorted ID order wins (Go's
order is arbitrary; ours is deterministic). Missing IDs are all listed, sorted; the kubelet
names one of them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from cpumanager.checkpoint.cpu.checksum import checksum_of
from cpumanager.checkpoint.cpu.model import CheckpointV1, CheckpointV2
from cpumanager.core.containermap import ContainerMap
from cpumanager.core.gocompat import one_line
from cpumanager.core.ids import ContainerID, ContainerName, PodUID
from cpumanager.errors import InputError, StateValidationError

__all__ = ["parse_container_map", "v1_to_v2", "v2_to_v1"]


def v1_to_v2(
    checkpoint: CheckpointV1, container_map: ContainerMap, *, source: str = "checkpoint"
) -> CheckpointV2:
    """The V2 checkpoint a v1.18+ kubelet builds in memory from a V1 file (checksum fresh)."""
    entries: dict[str, dict[str, str]] = {}
    missing: list[str] = []
    for container_id, cpus in sorted((checkpoint.entries or {}).items()):
        ref = container_map.container_ref(ContainerID(container_id))
        if ref is None:
            missing.append(container_id)
            continue
        entries.setdefault(ref.pod_uid, {})[ref.container_name] = cpus
    if missing:
        kubelet = (
            "error migrating v1 checkpoint state to v2 checkpoint state: "
            f"containerID '{one_line(missing[0])}' not found in initial containers list"
        )
        unknown = ", ".join(one_line(cid) for cid in missing)
        message = (
            f"checkpoint {source!r}: {kubelet} (unknown IDs: {unknown}); the V1 "
            "file can be migrated only while those containers exist: give their IDs in a "
            "container map ('cpumanager state migrate --containers'), or drain the node and "
            "delete the checkpoint"
        )
        raise StateValidationError(message, reasons=(kubelet,))
    bare = CheckpointV2(checkpoint.policy_name, checkpoint.default_cpu_set, entries, 0)
    return bare.with_checksum(checksum_of(bare))


def v2_to_v1(
    checkpoint: CheckpointV2, container_map: ContainerMap, *, source: str = "checkpoint"
) -> CheckpointV1:
    """A V1 checkpoint for a pre-1.18 kubelet; every container needs an ID in the map.

    Pods without containers have no V1 form and are dropped.
    """
    entries: dict[str, str] = {}
    missing: list[str] = []
    for pod, containers in sorted((checkpoint.entries or {}).items()):
        for name, cpus in sorted((containers or {}).items()):
            container_id = container_map.container_id(PodUID(pod), ContainerName(name))
            if container_id is None:
                missing.append(f"{one_line(pod)}/{one_line(name)}")
                continue
            entries[container_id] = cpus
    if missing:
        message = (
            f"checkpoint {source!r}: no container ID for {', '.join(missing)} in the "
            "container map; a V1 checkpoint is keyed by container ID: add them to the map"
        )
        raise StateValidationError(message)
    bare = CheckpointV1(checkpoint.policy_name, checkpoint.default_cpu_set, entries, 0)
    return bare.with_checksum(checksum_of(bare))


def _field(row: Mapping[str, object], name: str, where: str, source: str) -> str:
    value = row.get(name)
    if not isinstance(value, str) or not value:
        message = (
            f"container map {source!r}: {where} needs a non-empty string {name!r}; write "
            '{"<containerID>": {"podUID": "...", "containerName": "..."}}'
        )
        raise InputError(message)
    return value


def parse_container_map(data: bytes, *, source: str) -> ContainerMap:
    """Read ``{"<containerID>": {"podUID": ..., "containerName": ...}}``.

    A list of ``{"containerID", "podUID", "containerName"}`` objects is accepted too.
    """
    try:
        tree = json.loads(data)
    except (ValueError, RecursionError) as err:
        message = f"container map {source!r} is not JSON ({err}); write a JSON object"
        raise InputError(message) from None
    rows: list[tuple[ContainerID, PodUID, ContainerName]] = []
    if isinstance(tree, dict):
        for container_id, row in tree.items():
            where = f"container {container_id!r}"
            if not isinstance(row, dict):
                message = f"container map {source!r}: {where} must map to an object"
                raise InputError(message)
            rows.append(
                (
                    ContainerID(container_id),
                    PodUID(_field(row, "podUID", where, source)),
                    ContainerName(_field(row, "containerName", where, source)),
                )
            )
    elif isinstance(tree, list):
        for index, row in enumerate(tree):
            where = f"item {index}"
            if not isinstance(row, dict):
                message = f"container map {source!r}: {where} must be an object"
                raise InputError(message)
            rows.append(
                (
                    ContainerID(_field(row, "containerID", where, source)),
                    PodUID(_field(row, "podUID", where, source)),
                    ContainerName(_field(row, "containerName", where, source)),
                )
            )
    else:
        message = (
            f"container map {source!r} must be a JSON object "
            '{"<containerID>": {"podUID": "...", "containerName": "..."}}'
        )
        raise InputError(message)
    return ContainerMap(rows)
