"""The memory manager's restore at kubelet start, as pure functions, with its refusals.

Source: ``memorymanager/state/state_checkpoint.go`` (``restoreState``, ``NewCheckpointState``)
and ``memorymanager/policy_static.go`` (``validateState``, ``areMachineStatesEqual``,
``getDefaultMachineState``). Two stages, each fatal to the kubelet:

1. **Read** (:func:`restore_memory_state`): no file → a fresh one is written; a syntax, type
   or checksum error, or a policy name other than the configured one (``[memorymanager]
   configured policy "Static" differs from state checkpoint policy "None"``) stops the kubelet
   with ``could not restore state from checkpoint: <why>, please drain this node and delete
   the memory manager checkpoint file "<path>" before restarting Kubelet``.
2. **Validate** (:func:`validate_memory_state`, Static policy only): an empty machine state
   with assignments is refused; otherwise the expected state is rebuilt from the default
   machine state (this machine, this ``reservedMemory``) by charging every block to its NUMA
   nodes in order (a block spills to the next node of its affinity when one is full), each
   node's group becomes the block's affinity, and the result must equal the stored state:
   same nodes, assignment counts, groups (as sets), and per memory type the same total,
   system-reserved and allocatable, and the same free and reserved summed over the node's
   group. A mismatch is ``[memorymanager] the expected machine state is different from the
   real one``. The kubelet walks pods and containers in Go's random map order; we walk them
   sorted (the verdict only differs when blocks spill differently, which a state the kubelet
   wrote never needs).
"""

from __future__ import annotations

from collections.abc import Mapping

from cpumanager.checkpoint.memory.codec import (
    MachineState,
    MemoryManagerCheckpoint,
    MemoryTable,
    NUMANodeState,
    attempt_memory,
)
from cpumanager.core.gocompat import go_quote
from cpumanager.errors import CheckpointCorruptError, CheckpointFormatError, StateValidationError

__all__ = [
    "MISMATCH",
    "default_machine_state",
    "expected_machine_state",
    "restore_memory_state",
    "validate_memory_state",
]

MISMATCH = "[memorymanager] the expected machine state is different from the real one"
_EMPTY_WITH_ASSIGNMENTS = (
    "[memorymanager] machine state can not be empty when it has memory assignments"
)


def _refusal(reason: str, source: str) -> str:
    return (
        f"could not restore state from checkpoint: {reason}, please drain this node and "
        f"delete the memory manager checkpoint file {go_quote(source)} before restarting Kubelet"
    )


def restore_memory_state(
    data: bytes | None, *, source: str, configured_policy: str
) -> MemoryManagerCheckpoint | None:
    """What ``NewCheckpointState`` restores from ``data``; None when there is no file.

    Raises CheckpointCorruptError / CheckpointFormatError / StateValidationError whose
    message is the kubelet's own refusal.
    """
    if data is None:
        return None
    result = attempt_memory(data)
    if result.kind == "corrupt":
        err = CheckpointCorruptError(source, result.stored_checksum, result.computed_checksum)
        err.message = _refusal("checkpoint is corrupted", source)
        err.args = (err.message,)
        raise err
    if result.checkpoint is None:
        raise CheckpointFormatError(_refusal(result.error, source))
    policy = result.checkpoint.policy_name
    if policy != configured_policy:
        reason = (
            f"[memorymanager] configured policy {go_quote(configured_policy)} differs from "
            f"state checkpoint policy {go_quote(policy)}"
        )
        raise StateValidationError(_refusal(reason, source), reasons=(reason,))
    return result.checkpoint


def default_machine_state(
    memory: Mapping[int, int],
    *,
    hugepages: Mapping[int, Mapping[str, int]] | None = None,
    system_reserved: Mapping[int, Mapping[str, int]] | None = None,
) -> MachineState:
    """``getDefaultMachineState``: per node, hugepage pools then regular memory.

    ``memory`` is each node's memory in bytes, ``hugepages`` the total bytes of each pool
    (``{"hugepages-2Mi": bytes}``), ``system_reserved`` the ``reservedMemory`` per node and
    type. Regular memory's allocatable excludes the node's hugepages. Values wrap as Go's
    uint64 arithmetic does when the reservation exceeds the memory.
    """
    wrap = (1 << 64) - 1
    state: MachineState = {}
    for node, size in memory.items():
        reserved = (system_reserved or {}).get(node, {})
        tables: dict[str, MemoryTable | None] = {}
        in_pages = 0
        for resource, total in (hugepages or {}).get(node, {}).items():
            held = reserved.get(resource, 0)
            allocatable = (total - held) & wrap
            tables[resource] = MemoryTable(total, held, allocatable, 0, allocatable)
            in_pages += total
        held = reserved.get("memory", 0)
        allocatable = (size - held - in_pages) & wrap
        tables["memory"] = MemoryTable(size, held, allocatable, 0, allocatable)
        state[node] = NUMANodeState(0, tables, (node,))
    return state


class _Node:
    """A mutable copy of one node's state while charging blocks."""

    __slots__ = ("assignments", "cells", "tables")

    def __init__(self, node: NUMANodeState) -> None:
        self.assignments = node.number_of_assignments
        self.cells = node.cells
        self.tables = {
            name: None if table is None else [table.total, table.system_reserved,
                                              table.allocatable, table.reserved, table.free]
            for name, table in (node.memory_map or {}).items()
        }  # fmt: skip


def expected_machine_state(
    checkpoint: MemoryManagerCheckpoint, default: MachineState
) -> MachineState:
    """The default state with every stored block charged; StateValidationError on a bad block."""
    nodes = {node_id: _Node(node or NUMANodeState()) for node_id, node in default.items()}
    for pod, containers in sorted((checkpoint.entries or {}).items()):
        for name, blocks in sorted((containers or {}).items()):
            for block in blocks or ():
                remaining = block.size
                for node_id in block.numa_affinity or ():
                    where = f"(pod: {pod}, container: {name})"
                    node = nodes.get(node_id)
                    if node is None:
                        reason = (
                            f"[memorymanager] {where} the memory assignment uses the NUMA "
                            "that does not exist"
                        )
                        raise StateValidationError(reason)
                    node.assignments += 1
                    node.cells = block.numa_affinity
                    table = node.tables.get(block.type)
                    if table is None:
                        reason = (
                            f"[memorymanager] {where} the memory assignment uses memory "
                            "resource that does not exist"
                        )
                        raise StateValidationError(reason)
                    if remaining == 0 or table[4] <= 0:
                        continue
                    taken = min(table[4], remaining)
                    table[3] += taken
                    table[4] -= taken
                    remaining -= taken
    return {
        node_id: NUMANodeState(
            node.assignments,
            {
                name: None if values is None else MemoryTable(*values)
                for name, values in node.tables.items()
            },
            node.cells,
        )
        for node_id, node in nodes.items()
    }


def _table(state: MachineState, node: int, resource: str) -> MemoryTable:
    entry = state.get(node)
    table = None if entry is None else (entry.memory_map or {}).get(resource)
    return table if table is not None else MemoryTable()


def _states_equal(stored: MachineState, expected: MachineState) -> bool:
    """``areMachineStatesEqual``; a missing node or table where Go would crash is a mismatch."""
    if len(stored) != len(expected):
        return False
    for node_id, node in stored.items():
        other = expected.get(node_id)
        if node is None or other is None or node_id not in expected:
            return False
        if node.number_of_assignments != other.number_of_assignments:
            return False
        if sorted(node.cells or ()) != sorted(other.cells or ()):
            return False
        mine, theirs = node.memory_map or {}, other.memory_map or {}
        if len(mine) != len(theirs):
            return False
        for resource, table in mine.items():
            counterpart = theirs.get(resource)
            if resource not in theirs or table is None or counterpart is None:
                return False
            if (table.total, table.system_reserved, table.allocatable) != (
                counterpart.total,
                counterpart.system_reserved,
                counterpart.allocatable,
            ):
                return False
            group = node.cells or ()
            if any(cell not in stored or cell not in expected for cell in group):
                return False
            free = sum(_table(stored, cell, resource).free for cell in group)
            free_expected = sum(_table(expected, cell, resource).free for cell in group)
            held = sum(_table(stored, cell, resource).reserved for cell in group)
            held_expected = sum(_table(expected, cell, resource).reserved for cell in group)
            if (free, held) != (free_expected, held_expected):
                return False
    return True


def validate_memory_state(
    checkpoint: MemoryManagerCheckpoint, default: MachineState
) -> tuple[str, ...]:
    """Why the Static policy's ``Start`` refuses this state on this machine; () when it starts.

    ``default`` is :func:`default_machine_state` for the machine and reservation at start.
    """
    stored = checkpoint.machine_state or {}
    if not stored:
        return (_EMPTY_WITH_ASSIGNMENTS,) if checkpoint.entries else ()
    try:
        expected = expected_machine_state(checkpoint, default)
    except StateValidationError as err:
        return err.reasons
    return () if _states_equal(stored, expected) else (MISMATCH,)
