"""The ``state`` commands on the memory and device checkpoints: summarise, verify, rewrite.

Pure functions from bytes to results (the CLI reads and writes). Reading is *lenient* for
``inspect`` and ``rewrite`` (a wrong checksum is shown, or fixed) and *strict* for ``verify``
and ``migrate`` (the kubelet's own reading). A file with keys the released formats do not
know (a newer kubelet's layout) is never rewritten: the keys would be lost.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any, Literal

from cpumanager.checkpoint.device import codec as device
from cpumanager.checkpoint.device.codec import DeviceManagerCheckpoint, DeviceManagerCheckpointV1
from cpumanager.checkpoint.device.restore import restore_device_state
from cpumanager.checkpoint.go import fastjson, gojson
from cpumanager.checkpoint.memory import codec as memory
from cpumanager.checkpoint.memory.codec import MachineState, MemoryManagerCheckpoint
from cpumanager.checkpoint.memory.restore import restore_memory_state, validate_memory_state
from cpumanager.core.gocompat import one_line
from cpumanager.errors import CheckpointError, CheckpointFormatError

__all__ = ["NodeVerdict", "read_node_file", "rewrite_node_file", "summary", "verify_node_file"]

OtherKind = Literal["memory", "device"]
OtherCheckpoint = MemoryManagerCheckpoint | DeviceManagerCheckpoint | DeviceManagerCheckpointV1
_KNOWN: dict[OtherKind, frozenset[str]] = {
    "memory": frozenset({"policyname", "machinestate", "entries", "checksum"}),
    "device": frozenset({"data", "checksum"}),
}


@dataclass(frozen=True, slots=True)
class Read:
    """A file read leniently: the checkpoint, its format and its checksum status."""

    kind: OtherKind
    format: str
    checkpoint: OtherCheckpoint
    stored: int
    computed: int

    @property
    def checksum_ok(self) -> bool:
        return self.stored == self.computed


def read_node_file(data: bytes, kind: OtherKind, *, source: str) -> Read:
    """Decode even with a wrong checksum; CheckpointFormatError when the bytes do not decode."""
    if kind == "memory":
        result = memory.attempt_memory(data)
        if result.checkpoint is None:
            message = f"{source!r} is not a memory manager checkpoint: {result.error}"
            raise CheckpointFormatError(message)
        cp = result.checkpoint
        return Read(kind, "v1", cp, cp.checksum, memory.checksum_of_memory(cp))
    attempts = device.attempts_device(data)
    chosen = next((a for a in attempts if a.ok), None) or next(
        (a for a in attempts if a.checkpoint is not None), None
    )
    if chosen is None or chosen.checkpoint is None:
        message = f"{source!r} is not a device manager checkpoint: {attempts[0].error}"
        raise CheckpointFormatError(message)
    found = chosen.checkpoint
    return Read(kind, chosen.format, found, found.checksum, device.checksum_of_device(found))


def unknown_keys(data: bytes, kind: OtherKind) -> tuple[str, ...]:
    """Top-level keys the released format ignores (and a rewrite would drop)."""
    tree = fastjson.parse(data)
    if not isinstance(tree, gojson.JSONObject):
        return ()
    found = (k for k, _ in tree.members if gojson.fold_key(k) not in _KNOWN[kind])
    return tuple(dict.fromkeys(found))


def _ids(values: tuple[str, ...] | None) -> list[str]:
    return list(values or ())


def summary(read: Read) -> dict[str, Any]:
    """What ``inspect`` shows: per kind, the state in plain JSON values."""
    cp = read.checkpoint
    base: dict[str, Any] = {
        "kind": read.kind,
        "format": read.format,
        "checksum": {"stored": read.stored, "computed": read.computed,
                     "status": "ok" if read.checksum_ok else "mismatch"},
    }  # fmt: skip
    if isinstance(cp, MemoryManagerCheckpoint):
        nodes = {}
        for node_id, node in sorted((cp.machine_state or {}).items()):
            tables = {}
            for name, table in sorted(((node.memory_map if node else None) or {}).items()):
                tables[name] = None if table is None else {
                    "total": table.total, "systemReserved": table.system_reserved,
                    "allocatable": table.allocatable, "reserved": table.reserved,
                    "free": table.free,
                }  # fmt: skip
            nodes[str(node_id)] = None if node is None else {
                "assignments": node.number_of_assignments,
                "cells": list(node.cells or ()), "memory": tables,
            }  # fmt: skip
        entries = [
            {"pod": pod, "container": name, "blocks": [
                {"numa": list(b.numa_affinity or ()), "type": b.type, "size": b.size}
                for b in blocks or ()]}
            for pod, containers in sorted((cp.entries or {}).items())
            for name, blocks in sorted((containers or {}).items())
        ]  # fmt: skip
        return {**base, "policyName": cp.policy_name, "machineState": nodes, "entries": entries}
    if isinstance(cp, DeviceManagerCheckpointV1):
        rows = [
            {"pod": e.pod_uid, "container": e.container_name, "resource": e.resource_name,
             "devices": {"none (V1)": _ids(e.device_ids)},
             "allocResp": base64.b64encode(e.alloc_resp or b"").decode()}
            for e in cp.data.pod_device_entries or ()
        ]  # fmt: skip
    else:
        rows = [
            {"pod": e.pod_uid, "container": e.container_name, "resource": e.resource_name,
             "devices": {str(n): _ids(ids) for n, ids in sorted((e.device_ids or {}).items())},
             "allocResp": base64.b64encode(e.alloc_resp or b"").decode()}
            for e in cp.data.pod_device_entries or ()
        ]  # fmt: skip
    registered = {k: _ids(v) for k, v in sorted((cp.data.registered_devices or {}).items())}
    return {**base, "entries": rows, "registeredDevices": registered}


@dataclass(frozen=True, slots=True)
class NodeVerdict:
    """``verify``'s answer: ``ok`` when the kubelet would use the file as it is."""

    ok: bool
    format: str
    checksum: str
    reasons: tuple[str, ...]
    notes: tuple[str, ...]


def verify_node_file(
    data: bytes,
    kind: OtherKind,
    *,
    source: str,
    policy: str | None = None,
    machine: MachineState | None = None,
) -> NodeVerdict:
    """The kubelet's verdict at start (memory: refuses to start; devices: starts without it).

    ``machine`` is the memory manager's default machine state for this machine and
    reservation (:func:`~cpumanager.checkpoint.memory.restore.default_machine_state`); with it
    a ``Static`` state is validated as the policy's ``Start`` does.
    """
    notes: list[str] = []
    if kind == "memory":
        result = memory.attempt_memory(data)
        status = _status(result.kind, result.stored_checksum, result.computed_checksum)
        if not result.ok or result.checkpoint is None:
            return NodeVerdict(False, "", status, (result.error,), ())
        if policy is not None:
            try:
                restore_memory_state(data, source=source, configured_policy=policy)
            except CheckpointError as err:
                return NodeVerdict(False, "v1", status, (err.message,), ())
        else:
            notes.append("the policy was not checked: give --policy None|Static")
        checkpoint = result.checkpoint
        if machine is None:
            notes.append("the machine state was not checked: give --machine or --sysfs")
        elif (policy or checkpoint.policy_name) == "Static":
            refusals = validate_memory_state(checkpoint, machine)
            if refusals:
                return NodeVerdict(False, "v1", status, refusals, tuple(notes))
        else:
            notes.append("the None policy validates nothing against the machine")
        return NodeVerdict(True, "v1", status, (), tuple(notes))
    newest = restore_device_state(data)
    older = restore_device_state(data, order="v2-then-v1")
    chosen = device.attempt_device(data)
    status = _status(chosen.kind, chosen.stored_checksum, chosen.computed_checksum)
    reasons: list[str] = []
    if not newest.read:
        reasons.append(newest.log)
        if older.read:
            notes.append("kubelets v1.20 .. v1.29 read it as a pre-1.20 (V1) file")
    for entry, why in newest.skipped if newest.read else older.skipped:
        reasons.append(
            f"entry pod {entry.pod_uid} container {entry.container_name} "
            f"({entry.resource_name}) is dropped: can't unmarshal allocResp: {why}"
        )
    return NodeVerdict(not reasons, chosen.format if older.read else "", status,
                       tuple(reasons), tuple(notes))  # fmt: skip


def _status(kind: str, stored: int, computed: int) -> str:
    if kind == "ok":
        return f"ok ({stored})"
    if kind == "corrupt":
        return f"mismatch (stored {stored}, computed {computed})"
    return "not decodable"


def rewrite_node_file(data: bytes, kind: OtherKind, *, source: str, to_v2: bool = False) -> bytes:
    """Canonical bytes with a fresh checksum (and V1 → V2 devices when ``to_v2``)."""
    extra = unknown_keys(data, kind) if _parses(data) else ()
    if extra:
        shown = ", ".join(one_line(k) for k in extra)
        message = (
            f"{source!r} has keys the released format does not know ({shown}); a rewrite "
            "would drop them, so nothing was written"
        )
        raise CheckpointFormatError(message)
    cp = read_node_file(data, kind, source=source).checkpoint
    if isinstance(cp, MemoryManagerCheckpoint):
        if to_v2:
            message = "the memory manager checkpoint has one released format; nothing to migrate"
            raise CheckpointFormatError(message)
        return memory.encode_memory(memory.with_fresh_checksum(cp))
    if isinstance(cp, DeviceManagerCheckpointV1) and to_v2:
        return device.encode_device(device.v1_to_v2(cp))
    return device.encode_device(device.with_fresh_checksum(cp))


def _parses(data: bytes) -> bool:
    try:
        fastjson.parse(data)
    except gojson.GoJSONSyntaxError:
        return False
    return True
