"""Readable views of the node's checkpoint files for the snapshot (pure).

The snapshot keeps every checkpoint's exact bytes; this module adds what a person (or
``jq``) wants to read: the format, the fields, and whether the kubelet would accept the file.
``cpu_manager_state`` is read in the released kubelets' order (V1, then V2); a file that
decodes but fails its checksum is still shown, with the kubelet's refusal as ``problem``.
"""

from __future__ import annotations

from cpumanager.checkpoint import codec
from cpumanager.checkpoint.model import CheckpointV1, CheckpointV2

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
            problem = (
                f"checksum mismatch (stored {result.stored_checksum}, computed "
                f"{result.computed_checksum}): the kubelet refuses this file"
            )
            return _cpu_view(result.checkpoint, verified=False), problem
    return None, f"the kubelet cannot decode it: {second.error or first.error}"


def checkpoint_view(kind: str, data: bytes) -> CheckpointView:
    """``(decoded view or None, problem)`` of one checkpoint file's bytes."""
    if kind == "cpu_manager_state":
        return _cpu_manager_state(data)
    return None, ""
