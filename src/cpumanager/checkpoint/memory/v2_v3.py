"""Memory manager checkpoints after v1.35: V2 (``podEntries``) and V3 (``data``/``dataChecksum``).

The kubelet's ``pkg/kubelet/cm/memorymanager/state/checkpoint.go``; the formats are described
in :mod:`cpumanager.checkpoint.newer`. Pure: bytes in, models and bytes out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cpumanager.checkpoint.go import gojson
from cpumanager.checkpoint.go.fnv import fnv1a_32
from cpumanager.checkpoint.go.godecode import GoTypeError, unmarshal
from cpumanager.checkpoint.go.goencode import marshal
from cpumanager.checkpoint.go.gospew import spew
from cpumanager.checkpoint.go.gotypes import GoField, GoMap, GoSlice, GoStruct
from cpumanager.checkpoint.memory.codec import (
    BLOCK_TYPE,
    Block,
    MachineState,
    MemoryManagerCheckpoint,
)
from cpumanager.checkpoint.memory.codec import CHECKPOINT_TYPE as MEMORY_V1_TYPE
from cpumanager.checkpoint.newer_common import CHECKSUM as _CHECKSUM
from cpumanager.checkpoint.newer_common import STRING as _STRING
from cpumanager.checkpoint.newer_common import NewerAttempt, attempt_wrapped, data_checksum
from cpumanager.checkpoint.newer_common import parse as _parse

__all__ = [
    "MEMORY_DATA_TYPE",
    "MEMORY_V2_TYPE",
    "MEMORY_V3_TYPE",
    "MemoryCheckpointData",
    "MemoryCheckpointV2",
    "MemoryCheckpointV3",
    "MemoryEntries",
    "MemoryPodEntries",
    "MemoryPodEntry",
    "attempt_memory_v2",
    "attempt_memory_v3",
    "encode_memory_v2",
    "encode_memory_v3",
    "memory_v2_checksum",
]


@dataclass(frozen=True, slots=True)
class MemoryPodEntry:
    """``state.PodEntry`` of the memory manager."""

    memory_blocks: tuple[Block, ...] | None = None


MemoryPodEntries = dict[str, MemoryPodEntry | None]
MemoryEntries = dict[str, dict[str, "tuple[Block, ...] | None"] | None]


@dataclass(frozen=True, slots=True)
class MemoryCheckpointV2:
    """``MemoryManagerCheckpointV2`` (v1.36 with the gate)."""

    policy_name: str = ""
    machine_state: MachineState | None = field(default_factory=dict)
    entries: MemoryEntries | None = field(default_factory=dict)
    pod_entries: MemoryPodEntries | None = field(default_factory=dict)
    checksum: int = 0


@dataclass(frozen=True, slots=True)
class MemoryCheckpointData:
    """``MemoryManagerCheckpointData``: what memory V3's ``data`` string holds."""

    policy_name: str = ""
    machine_state: MachineState | None = field(default_factory=dict)
    entries: MemoryEntries | None = field(default_factory=dict)
    pod_entries: MemoryPodEntries | None = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class MemoryCheckpointV3:
    """``MemoryManagerCheckpointV3``: inline V1 fields (own checksum), data, dataChecksum."""

    policy_name: str = ""
    machine_state: MachineState | None = field(default_factory=dict)
    entries: MemoryEntries | None = field(default_factory=dict)
    checksum: int = 0
    data: str = ""
    data_checksum: int = 0


_MEMORY_V1_FIELDS = MEMORY_V1_TYPE.fields  # PolicyName, MachineState, Entries, Checksum
_MEMORY_POD_ENTRY = GoStruct(
    "state",
    "PodEntry",
    MemoryPodEntry,
    (
        GoField(
            "MemoryBlocks", "memoryBlocks", GoSlice(BLOCK_TYPE, "[]state.Block"), omitempty=True
        ),
    ),
)
_MEMORY_POD_ENTRIES = GoField(
    "PodEntries",
    "podEntries",
    GoMap(_STRING, _MEMORY_POD_ENTRY, "state.PodMemoryAssignments"),
    omitempty=True,
)
MEMORY_V2_TYPE = GoStruct(
    "state",
    "MemoryManagerCheckpoint",
    MemoryCheckpointV2,
    (*_MEMORY_V1_FIELDS[:3], _MEMORY_POD_ENTRIES, _MEMORY_V1_FIELDS[3]),
)
MEMORY_DATA_TYPE = GoStruct(
    "state",
    "MemoryManagerCheckpointData",
    MemoryCheckpointData,
    (*_MEMORY_V1_FIELDS[:3], _MEMORY_POD_ENTRIES),
)
MEMORY_V3_TYPE = GoStruct(
    "state",
    "MemoryManagerCheckpoint",
    MemoryCheckpointV3,
    (
        *_MEMORY_V1_FIELDS,
        GoField("Data", "data", _STRING),
        GoField("DataChecksum", "dataChecksum", _CHECKSUM),
    ),
)


def memory_v2_checksum(checkpoint: MemoryCheckpointV2) -> int:
    """FNV-1a 32 of go-spew's ``&checkpoint`` named ``MemoryManagerCheckpoint``, checksum 0."""
    bare = MemoryCheckpointV2(
        checkpoint.policy_name, checkpoint.machine_state, checkpoint.entries, checkpoint.pod_entries
    )
    return fnv1a_32(spew(bare, MEMORY_V2_TYPE, pointer=True).encode("utf-8"))


def _memory_v1_checksum(policy: str, machine: Any, entries: Any) -> int:
    bare = MemoryManagerCheckpoint(policy, machine, entries, 0)
    return fnv1a_32(spew(bare, MEMORY_V1_TYPE, pointer=True).encode("utf-8"))


def encode_memory_v2(
    policy: str, machine: MachineState, entries: MemoryEntries, pod_entries: MemoryPodEntries
) -> bytes:
    """The bytes a v1.36 kubelet with PodLevelResourceManagers writes for the memory manager."""
    bare = MemoryCheckpointV2(policy, machine, entries, pod_entries, 0)
    stored = MemoryCheckpointV2(policy, machine, entries, pod_entries, memory_v2_checksum(bare))
    return marshal(stored, MEMORY_V2_TYPE)


def encode_memory_v3(
    policy: str, machine: MachineState, entries: MemoryEntries, pod_entries: MemoryPodEntries
) -> bytes:
    """The bytes of PR #139626's layout: V1 fields with their checksum, data, dataChecksum."""
    payload = MemoryCheckpointData(policy, machine, entries, pod_entries)
    data = marshal(payload, MEMORY_DATA_TYPE).decode("utf-8")
    stored = MemoryCheckpointV3(
        policy,
        machine,
        entries,
        _memory_v1_checksum(policy, machine, entries),
        data,
        data_checksum(data),
    )
    return marshal(stored, MEMORY_V3_TYPE)


def attempt_memory_v2(data: bytes) -> NewerAttempt:
    """Read as ``MemoryManagerCheckpointV2`` (checksum verified exactly, 0 not exempt)."""
    try:
        checkpoint = unmarshal(_parse(data), MEMORY_V2_TYPE, MemoryCheckpointV2())
    except gojson.GoJSONSyntaxError as err:
        return NewerAttempt("memory-v2", "syntax", error=err.message)
    except GoTypeError as err:
        return NewerAttempt("memory-v2", "type", error=str(err))
    computed = memory_v2_checksum(checkpoint)
    if checkpoint.checksum != computed:
        return NewerAttempt(
            "memory-v2",
            "corrupt",
            checkpoint,
            None,
            "checkpoint is corrupted",
            checkpoint.checksum,
            computed,
        )
    return NewerAttempt("memory-v2", "ok", checkpoint, None, "", computed, computed)


def attempt_memory_v3(data: bytes) -> NewerAttempt:
    """Read as ``MemoryManagerCheckpointV3``: ``dataChecksum`` over ``data`` is authoritative."""
    return attempt_wrapped(
        data,
        "memory-v3",
        "memory",
        (MEMORY_V3_TYPE, MemoryCheckpointV3()),
        (MEMORY_DATA_TYPE, MemoryCheckpointData()),
    )
