"""Readable views of the node's checkpoint files for the snapshot (pure).

The snapshot keeps every checkpoint's exact bytes; this module adds what a person (or
``jq``) wants to read: the format, the content, and whether the kubelet would accept the
file (``checksumOk``). Each kind is read in the released kubelets' order: the CPU file V1
then V2, the device file V2 then V1. A file that decodes but fails its checksum is still
shown, with the kubelet's refusal as ``problem``.

The memory and device files are shown as their JSON content (already readable: Go field
names, device ids per NUMA node, ``AllocResp`` in base64).
"""

from __future__ import annotations

import json

from cpumanager.checkpoint.cpu import codec
from cpumanager.checkpoint.cpu.model import CheckpointV1, CheckpointV2
from cpumanager.checkpoint.device import codec as device
from cpumanager.checkpoint.memory import codec as memory

__all__ = ["CheckpointView", "checkpoint_view"]

CheckpointView = tuple[dict[str, object] | None, str]


def _cpu_view(checkpoint: CheckpointV1 | CheckpointV2, *, verified: bool) -> dict[str, object]:
    return {
        "format": checkpoint.format,
        "policyName": checkpoint.policy_name,
        "defaultCpuSet": checkpoint.default_cpu_set,
        "entries": checkpoint.plain_entries(),
        "checksum": checkpoint.checksum,
        "checksumOk": verified,
    }


def _cpu_manager_state(data: bytes) -> CheckpointView:
    first, second = codec.attempts(data, order="v1-first")
    for result in (first, second):
        if result.ok and result.checkpoint is not None:
            return _cpu_view(result.checkpoint, verified=True), ""
    for result in (second, first):  # V2's reading first: the newer and likelier format
        if result.kind == "corrupt" and result.checkpoint is not None:
            problem = _corrupt(result.stored_checksum, result.computed_checksum)
            return _cpu_view(result.checkpoint, verified=False), problem
    return None, f"the kubelet cannot decode it: {second.error or first.error}"


def _content(data: bytes) -> object:
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None


def _corrupt(stored: int, computed: int) -> str:
    return (
        f"checksum mismatch (stored {stored}, computed {computed}): the kubelet refuses this file"
    )


def _memory_manager_state(data: bytes) -> CheckpointView:
    result = memory.attempt_memory(data)
    if result.ok:
        return {"format": "v1", "checksumOk": True, "content": _content(data)}, ""
    if result.kind == "corrupt":
        view = {"format": "v1", "checksumOk": False, "content": _content(data)}
        return view, _corrupt(result.stored_checksum, result.computed_checksum)
    return None, f"the kubelet cannot decode it: {result.error}"


def _device_checkpoint(data: bytes) -> CheckpointView:
    result = device.attempt_device(data)
    if result.ok:
        return {"format": result.format, "checksumOk": True, "content": _content(data)}, ""
    if result.kind == "corrupt":
        view = {"format": result.format, "checksumOk": False, "content": _content(data)}
        return view, _corrupt(result.stored_checksum, result.computed_checksum)
    return None, f"the kubelet cannot decode it: {result.error}"


def checkpoint_view(kind: str, data: bytes) -> CheckpointView:
    """``(decoded view or None, problem)`` of one checkpoint file's bytes."""
    if kind == "cpu_manager_state":
        return _cpu_manager_state(data)
    if kind == "memory_manager_state":
        return _memory_manager_state(data)
    if kind == "kubelet_internal_checkpoint":
        return _device_checkpoint(data)
    return None, f"unknown checkpoint kind {kind!r}"
