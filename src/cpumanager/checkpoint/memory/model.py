"""The memory manager checkpoint's structs and their Go types (``memory_manager_state``, V1).

The readers and writers are in :mod:`codec` (faithful), :mod:`codec_fast_write` and
:mod:`codec_fast_read` (fast paths); all of them import these definitions from here.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import ClassVar, Literal

from cpumanager.checkpoint.go.gotypes import GoField, GoMap, GoPtr, GoScalar, GoSlice, GoStruct

__all__ = [
    "BLOCK_TYPE",
    "CHECKPOINT_TYPE",
    "MEMORY_TABLE_TYPE",
    "NUMA_NODE_STATE_TYPE",
    "Block",
    "Entries",
    "MachineState",
    "MemoryManagerCheckpoint",
    "MemoryMap",
    "MemoryTable",
    "NUMANodeState",
]

MemoryMap = dict[str, "MemoryTable | None"]
MachineState = dict[int, "NUMANodeState | None"]
Entries = dict[str, dict[str, "tuple[Block, ...] | None"] | None]


@dataclass(frozen=True, slots=True)
class MemoryTable:
    """``state.MemoryTable``: one memory type on one NUMA node, in bytes."""

    total: int = 0
    system_reserved: int = 0
    allocatable: int = 0
    reserved: int = 0
    free: int = 0


@dataclass(frozen=True, slots=True)
class NUMANodeState:
    """``state.NUMANodeState``; ``cells`` is the group the node was last allocated with."""

    number_of_assignments: int = 0
    memory_map: MemoryMap | None = None
    cells: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True)
class Block:
    """``state.Block``: memory of one type given to a container, and its NUMA nodes."""

    numa_affinity: tuple[int, ...] | None = None
    type: str = ""
    size: int = 0


@dataclass(frozen=True, slots=True)
class MemoryManagerCheckpoint:
    """``state.MemoryManagerCheckpoint``, nil (None) and empty maps kept apart."""

    policy_name: str = ""
    machine_state: MachineState | None = field(default_factory=dict)
    entries: Entries | None = field(default_factory=dict)
    checksum: int = 0

    kind: ClassVar[Literal["memory"]] = "memory"

    def with_checksum(self, checksum: int) -> MemoryManagerCheckpoint:
        return replace(self, checksum=checksum)


_INT = GoScalar("int", "int")
_UINT64 = GoScalar("uint64", "uint64")
_STRING = GoScalar("string", "string")
_INTS = GoSlice(_INT, "[]int")

MEMORY_TABLE_TYPE = GoStruct(
    "state",
    "MemoryTable",
    MemoryTable,
    (
        GoField("TotalMemSize", "total", _UINT64),
        GoField("SystemReserved", "systemReserved", _UINT64),
        GoField("Allocatable", "allocatable", _UINT64),
        GoField("Reserved", "reserved", _UINT64),
        GoField("Free", "free", _UINT64),
    ),
)
NUMA_NODE_STATE_TYPE = GoStruct(
    "state",
    "NUMANodeState",
    NUMANodeState,
    (
        GoField("NumberOfAssignments", "numberOfAssignments", _INT),
        GoField(
            "MemoryMap",
            "memoryMap",
            GoMap(
                GoScalar("string", "v1.ResourceName"),
                GoPtr(MEMORY_TABLE_TYPE),
                "map[v1.ResourceName]*state.MemoryTable",
            ),
        ),
        GoField("Cells", "cells", _INTS),
    ),
)
BLOCK_TYPE = GoStruct(
    "state",
    "Block",
    Block,
    (
        GoField("NUMAAffinity", "numaAffinity", _INTS),
        GoField("Type", "type", GoScalar("string", "v1.ResourceName")),
        GoField("Size", "size", _UINT64),
    ),
)
CHECKPOINT_TYPE = GoStruct(
    "state",
    "MemoryManagerCheckpoint",
    MemoryManagerCheckpoint,
    (
        GoField("PolicyName", "policyName", _STRING),
        GoField(
            "MachineState",
            "machineState",
            GoMap(_INT, GoPtr(NUMA_NODE_STATE_TYPE), "state.NUMANodeMap"),
        ),
        GoField(
            "Entries",
            "entries",
            GoMap(
                _STRING,
                GoMap(_STRING, GoSlice(BLOCK_TYPE, "[]state.Block"), "map[string][]state.Block"),
                "state.ContainerMemoryAssignments",
            ),
            omitempty=True,
        ),
        GoField("Checksum", "checksum", GoScalar("uint64", "checksum.Checksum")),
    ),
)
