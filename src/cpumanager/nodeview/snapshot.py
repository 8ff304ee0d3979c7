"""The node snapshot: one versioned, self-contained JSON file describing a real node (pure).

Written by ``cpumanager node snapshot`` (collection: ``adapters/node_collect.py``), read by
:func:`snapshot_from_json` (and ``adapters/node_collect.load_snapshot`` for files). Layout,
``schemaVersion`` 1 (every key always present; ``null`` where a source gave nothing):

* ``schema``/``schemaVersion``, ``tool`` (cpumanager version), ``collectedAt`` (UTC),
  ``nodeName``, ``root`` and ``kubeletRoot`` (where it was read);
* ``machine``: the machine file format (``formats/machine_format.py``) of the sysfs tree;
* ``hugepages``: per NUMA node, each hugepage pool's total bytes (``{"0": {"hugepages-2Mi":
  2147483648}}``), from ``nodeN/hugepages/hugepages-<kB>kB/nr_hugepages``;
* ``config``: the effective KubeletConfiguration, ``fields`` under v1beta1 names, each
  ``{"value": ..., "from": "default" | "file" | ...}``, with ``status`` and ``problem`` (the
  kubelet's validation error when it would refuse to start);
* ``checkpoints``: by kind (``cpu_manager_state``, ``memory_manager_state``,
  ``kubelet_internal_checkpoint``): ``path``, ``raw`` (base64 of the exact bytes),
  ``decoded`` (a readable view, or null) and ``problem`` (why it does not decode/verify);
* ``podResources``: the PodResources API's answers (``nodeview/podresources.py``);
* ``pods``: the node's pods reduced to what admission reads (``nodeview/pods.py``);
* ``kubeletVersion``: the node's kubelet release (``v1.33.2``) when known (``node snapshot
  --kubelet-version``, ``--node-object``, or a Node in the pod list), else null; optional:
  a file without the key (older cpumanager) reads as null;
* ``sources``: every source with ``status`` (ok, missing, unreadable, invalid, partial,
  not-given) and a one-line ``reason``. A missing source never stops a snapshot.

The raw checkpoint bytes are the truth; ``decoded`` is for people and ``jq``. A newer
``schemaVersion`` is refused with a one-line error rather than half-read.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cpumanager.core import limits
from cpumanager.core.ids import ContainerID, ContainerName, PodUID
from cpumanager.core.topology import CPUTopology
from cpumanager.core.workload import Pod
from cpumanager.errors import ConfigError, InputError, MachineError, SnapshotError, WorkloadError
from cpumanager.formats.kubelet_config import KubeletConfig
from cpumanager.formats.machine_format import topology_from_dict
from cpumanager.nodeview._fields import fail, get_int, get_list, get_map, get_str, obj
from cpumanager.nodeview.node_info import checked_version
from cpumanager.nodeview.podresources import (
    PodResourcesAnswers,
    answers_from_dict,
    answers_to_dict,
)
from cpumanager.nodeview.pods import NodePod, node_pods_from_reduced, running_containers

__all__ = [
    "CHECKPOINT_KINDS",
    "MAX_SNAPSHOT_BYTES",
    "SCHEMA",
    "SCHEMA_VERSION",
    "SOURCE_STATUSES",
    "CheckpointFile",
    "ConfigView",
    "NodeSnapshot",
    "Source",
    "snapshot_from_json",
    "snapshot_from_tree",
    "snapshot_to_dict",
    "snapshot_to_json",
]

SCHEMA = "cpumanager.io/node-snapshot"
SCHEMA_VERSION = 1
MAX_SNAPSHOT_BYTES = limits.MAX_READ_BYTES
CHECKPOINT_KINDS = ("cpu_manager_state", "memory_manager_state", "kubelet_internal_checkpoint")
SOURCE_STATUSES = ("ok", "missing", "unreadable", "invalid", "partial", "not-given")


@dataclass(frozen=True, slots=True)
class Source:
    """Where one part of the snapshot came from and how reading it went."""

    name: str
    status: str
    path: str = ""
    reason: str = ""


@dataclass(frozen=True, slots=True)
class CheckpointFile:
    """One checkpoint file: its exact bytes and a readable decoding (None when it fails)."""

    kind: str
    path: str
    raw: bytes
    decoded: Mapping[str, object] | None
    problem: str = ""


@dataclass(frozen=True, slots=True)
class ConfigView:
    """The effective configuration under v1beta1 names: ``{name: {"value", "from"}}``."""

    fields: Mapping[str, Mapping[str, object]]
    status: str = "ok"
    problem: str = ""
    root_dir: str = ""
    sources: tuple[str, ...] = ()

    def values(self) -> dict[str, object]:
        """The v1beta1 mapping (field name -> value) the kubelet would run with."""
        return {name: entry.get("value") for name, entry in self.fields.items()}

    def origin(self, name: str) -> str:
        """Where a field came from (``default`` when not recorded)."""
        entry = self.fields.get(name, {})
        return str(entry.get("from", "default"))


@dataclass(frozen=True, slots=True)
class NodeSnapshot:
    """Everything read from one node, as values. Parts that could not be read are None."""

    node_name: str
    collected_at: str
    tool: str
    root: str
    kubelet_root: str
    machine: Mapping[str, object] | None
    config: ConfigView | None
    checkpoints: Mapping[str, CheckpointFile]
    pod_resources: PodResourcesAnswers | None
    pods: tuple[NodePod, ...] | None
    sources: tuple[Source, ...]
    schema_version: int = SCHEMA_VERSION
    # NUMA node -> {"hugepages-2Mi": total bytes}: the pools the memory manager splits
    hugepages: Mapping[int, Mapping[str, int]] = field(default_factory=dict)
    kubelet_version: str | None = None  # the node's kubelet release, when known

    def topology(self) -> CPUTopology:
        """The machine as a CPUTopology; SnapshotError when the snapshot has none."""
        if self.machine is None:
            reason = self.source_reason("machine")
            msg = f"the snapshot has no machine ({reason}); take it again with a readable --root"
            raise SnapshotError(msg)
        return topology_from_dict(self.machine)

    def kubelet_config(self) -> KubeletConfig:
        """The effective KubeletConfig; ConfigError when the kubelet would refuse it."""
        if self.config is None:
            return KubeletConfig()
        if self.config.status == "invalid":
            msg = (
                f"the node's kubelet configuration is invalid ({self.config.problem}); the "
                "kubelet would not start with it: fix it, then take the snapshot again"
            )
            raise ConfigError(msg)
        return KubeletConfig.from_mapping(self.config.values())

    def active_pods(self) -> list[Pod]:
        """The pods the kubelet counts as active (not Succeeded or Failed), in list order;
        empty when the snapshot has no pod list."""
        return [p.pod for p in self.pods or () if not p.terminal]

    def running_containers(self) -> list[tuple[ContainerID, PodUID, ContainerName]]:
        """The container map's entries from the pods' statuses, oldest instance first (for
        ``Node.start(running_containers=...)``)."""
        return running_containers(self.pods or ())

    def checkpoint_bytes(self, kind: str) -> bytes | None:
        """A checkpoint's exact bytes, None when the node had no such file."""
        entry = self.checkpoints.get(kind)
        return None if entry is None else entry.raw

    def source_reason(self, name: str) -> str:
        """``status: reason`` of a source, for messages."""
        for source in self.sources:
            if source.name == name:
                return f"{source.status}: {source.reason}" if source.reason else source.status
        return "not recorded"


# --- to JSON ---------------------------------------------------------------------------


def snapshot_to_dict(snapshot: NodeSnapshot) -> dict[str, object]:
    """The JSON object of a snapshot (see the module docstring for the layout)."""
    config: dict[str, object] | None = None
    if snapshot.config is not None:
        config = {
            "status": snapshot.config.status,
            "problem": snapshot.config.problem,
            "rootDir": snapshot.config.root_dir,
            "sources": list(snapshot.config.sources),
            "fields": {name: dict(entry) for name, entry in sorted(snapshot.config.fields.items())},
        }
    return {
        "schema": SCHEMA,
        "schemaVersion": snapshot.schema_version,
        "tool": snapshot.tool,
        "collectedAt": snapshot.collected_at,
        "nodeName": snapshot.node_name,
        "kubeletVersion": snapshot.kubelet_version,
        "root": snapshot.root,
        "kubeletRoot": snapshot.kubelet_root,
        "machine": None if snapshot.machine is None else dict(snapshot.machine),
        "hugepages": {
            str(node): dict(sorted(pools.items()))
            for node, pools in sorted(snapshot.hugepages.items())
        },
        "config": config,
        "checkpoints": {
            kind: {
                "path": entry.path,
                "raw": base64.b64encode(entry.raw).decode("ascii"),
                "decoded": None if entry.decoded is None else dict(entry.decoded),
                "problem": entry.problem,
            }
            for kind, entry in sorted(snapshot.checkpoints.items())
        },
        "podResources": (
            None if snapshot.pod_resources is None else answers_to_dict(snapshot.pod_resources)
        ),
        "pods": None if snapshot.pods is None else [dict(p.manifest) for p in snapshot.pods],
        "sources": [
            {"name": s.name, "status": s.status, "path": s.path, "reason": s.reason}
            for s in snapshot.sources
        ],
    }


def snapshot_to_json(snapshot: NodeSnapshot) -> bytes:
    """The file's bytes: indented, key-sorted UTF-8 JSON with a trailing newline."""
    text = json.dumps(snapshot_to_dict(snapshot), indent=1, sort_keys=True, ensure_ascii=False)
    return (text + "\n").encode("utf-8")


# --- from JSON -------------------------------------------------------------------------


def _sources(body: Mapping[str, object]) -> tuple[Source, ...]:
    result = []
    for index, raw in enumerate(get_list(body, "sources", "")):
        where = f"sources[{index}]"
        item = obj(raw, where)
        status = get_str(item, "status", where)
        if status not in SOURCE_STATUSES:
            fail(f"{where}.status", f"{status!r} is not one of {', '.join(SOURCE_STATUSES)}")
        result.append(
            Source(
                name=get_str(item, "name", where),
                status=status,
                path=get_str(item, "path", where),
                reason=get_str(item, "reason", where),
            )
        )
    return tuple(result)


def _checkpoints(body: Mapping[str, object]) -> dict[str, CheckpointFile]:
    result = {}
    for kind, raw in get_map(body, "checkpoints", "").items():
        where = f"checkpoints.{kind}"
        if kind not in CHECKPOINT_KINDS:
            fail(where, f"unknown checkpoint kind; expected one of {', '.join(CHECKPOINT_KINDS)}")
        item = obj(raw, where)
        try:
            data = base64.b64decode(get_str(item, "raw", where), validate=True)
        except (binascii.Error, ValueError):
            fail(f"{where}.raw", "not base64")
        decoded = item.get("decoded")
        result[kind] = CheckpointFile(
            kind=kind,
            path=get_str(item, "path", where),
            raw=data,
            decoded=None if decoded is None else obj(decoded, f"{where}.decoded"),
            problem=get_str(item, "problem", where),
        )
    return result


def _config(raw: object) -> ConfigView | None:
    if raw is None:
        return None
    body = obj(raw, "config")
    fields = {}
    for name, entry in get_map(body, "fields", "config").items():
        fields[name] = obj(entry, f"config.fields.{name}")
    sources = get_list(body, "sources", "config")
    if not all(isinstance(name, str) for name in sources):
        fail("config.sources", "expected a list of strings")
    return ConfigView(
        fields=fields,
        status=get_str(body, "status", "config", default="ok"),
        problem=get_str(body, "problem", "config"),
        root_dir=get_str(body, "rootDir", "config"),
        sources=tuple(str(name) for name in sources),
    )


def _hugepages(body: Mapping[str, object]) -> dict[int, dict[str, int]]:
    result: dict[int, dict[str, int]] = {}
    for node, raw in get_map(body, "hugepages", "").items():
        where = f"hugepages.{node}"
        if not node.isdigit() or len(node) > 7:
            fail(where, "keys are NUMA node ids")
        pools = obj(raw, where)
        for name in pools:
            if not name.startswith("hugepages-"):
                fail(f"{where}.{name}", "expected a hugepages-<size> resource name")
        result[int(node)] = {name: get_int(pools, name, where) for name in pools}
    return result


def _pods(raw: object) -> tuple[NodePod, ...] | None:
    if raw is None:
        return None
    if not isinstance(raw, list):
        fail("pods", "expected a list of reduced Pod manifests")
    manifests = [obj(item, f"pods[{i}]") for i, item in enumerate(raw)]
    try:
        return node_pods_from_reduced(manifests)
    except WorkloadError as err:
        fail("pods", err.message)


def _kubelet_version(raw: object) -> str | None:
    if raw is None:
        return None
    try:
        return checked_version(raw, "kubeletVersion")
    except InputError as err:
        fail("kubeletVersion", err.message)


def snapshot_from_json(data: bytes, *, source: str = "snapshot") -> NodeSnapshot:
    """Read a snapshot file's bytes; SnapshotError (one line) when it is not one we can use."""
    if len(data) > MAX_SNAPSHOT_BYTES:
        msg = f"{source}: {len(data)} bytes is more than a snapshot may hold ({MAX_SNAPSHOT_BYTES})"
        raise SnapshotError(msg)
    try:
        tree: Any = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as err:
        msg = f"{source}: not UTF-8 text; give a file written by 'cpumanager node snapshot'"
        raise SnapshotError(msg) from err
    except json.JSONDecodeError as err:
        msg = (
            f"{source}: not JSON (line {err.lineno}, column {err.colno}: {err.msg}); give a "
            "file written by 'cpumanager node snapshot'"
        )
        raise SnapshotError(msg) from err
    except RecursionError as err:
        msg = f"{source}: JSON nested too deeply; give a file written by 'cpumanager node snapshot'"
        raise SnapshotError(msg) from err
    return snapshot_from_tree(tree, source=source)


def snapshot_from_tree(tree: Any, *, source: str = "snapshot") -> NodeSnapshot:
    """:func:`snapshot_from_json` of a document already decoded (a caller that needs the
    tree too decodes once)."""
    if limits.depth_of(tree) > limits.MAX_DEPTH:
        msg = (
            f"{source}: JSON nested deeper than {limits.MAX_DEPTH} levels; give a file "
            "written by 'cpumanager node snapshot'"
        )
        raise SnapshotError(msg)
    if not isinstance(tree, dict) or tree.get("schema") != SCHEMA:
        msg = (
            f'{source}: not a node snapshot (no "schema": {SCHEMA!r}); take one with '
            "'cpumanager node snapshot'"
        )
        raise SnapshotError(msg)
    version = get_int(tree, "schemaVersion", "")
    if version != SCHEMA_VERSION:
        newer = "a newer" if version > SCHEMA_VERSION else "an older"
        msg = (
            f"{source}: schemaVersion {version} is from {newer} cpumanager (this one reads "
            f"{SCHEMA_VERSION}); read it with a matching cpumanager or take the snapshot again"
        )
        raise SnapshotError(msg)
    machine = tree.get("machine")
    if machine is not None:
        try:
            topology_from_dict(machine)
        except MachineError as err:
            fail("machine", err.message)
    answers = tree.get("podResources")
    return NodeSnapshot(
        node_name=get_str(tree, "nodeName", ""),
        collected_at=get_str(tree, "collectedAt", ""),
        tool=get_str(tree, "tool", ""),
        root=get_str(tree, "root", ""),
        kubelet_root=get_str(tree, "kubeletRoot", ""),
        machine=None if machine is None else obj(machine, "machine"),
        config=_config(tree.get("config")),
        checkpoints=_checkpoints(tree),
        pod_resources=None if answers is None else answers_from_dict(answers),
        pods=_pods(tree.get("pods")),
        sources=_sources(tree),
        schema_version=version,
        hugepages=_hugepages(tree),
        kubelet_version=_kubelet_version(tree.get("kubeletVersion")),
    )
