"""A direct writer for the usual ``memory_manager_state``: the same bytes and checksum text.

The exact path (:mod:`goencode`, :mod:`gospew`) walks Go types as data, one value at a
time; on 1,000 containers that walk is most of the time. The kubelet's own files have one
shape: every pointer set, every string printable ASCII with nothing JSON would escape (no
``"``, ``\\``, ``<``, ``>``, ``&``). For that shape both texts are written here with one
f-string per table, node or block. Any other checkpoint (a nil pointer, map or slice, an
unusual string) returns None and the exact path decides; tests compare the two.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # memory.py imports this module
    from cpumanager.checkpoint.memory import (
        Block,
        MemoryManagerCheckpoint,
        MemoryTable,
        NUMANodeState,
    )

__all__ = ["marshal_memory", "spew_memory"]

# Printable ASCII that json.Marshal writes as is and go-spew prints unchanged.
_RAW = re.compile(r"[ !#-%'-;=?-\[\]-~]*")
_PREFIX = "(*state.MemoryManagerCheckpoint){PolicyName:(string)"
_MAP_TYPE = "(map[v1.ResourceName]*state.MemoryTable)"


def _raw(*texts: str) -> bool:
    return all(type(text) is str and _RAW.fullmatch(text) is not None for text in texts)


def _plain(checkpoint: MemoryManagerCheckpoint) -> bool:
    """Every pointer, map and slice set and every string raw: the shape written here."""
    machine = checkpoint.machine_state
    entries = checkpoint.entries
    if machine is None or entries is None or not _raw(checkpoint.policy_name):
        return False
    for node in machine.values():
        if node is None or node.memory_map is None or node.cells is None:
            return False
        if not _raw(*node.memory_map) or None in node.memory_map.values():
            return False
    for containers in entries.values():
        if containers is None or not _raw(*containers):
            return False
        for blocks in containers.values():
            if blocks is None:
                return False
            for block in blocks:
                if block.numa_affinity is None or not _raw(block.type):
                    return False
    return _raw(*entries)


def _ints(values: tuple[int, ...], separator: str) -> str:
    return separator.join(map(str, values))


def _spew_table(table: MemoryTable) -> str:
    return (
        f"<*>{{TotalMemSize:(uint64){table.total} SystemReserved:(uint64){table.system_reserved}"
        f" Allocatable:(uint64){table.allocatable} Reserved:(uint64){table.reserved}"
        f" Free:(uint64){table.free}}}"
    )


def _spew_node(node: NUMANodeState) -> str:
    tables = node.memory_map or {}
    rendered = " ".join(
        f"{name}:{_spew_table(table)}" for name, table in sorted(tables.items()) if table
    )
    return (
        f"<*>{{NumberOfAssignments:(int){node.number_of_assignments} "
        f"MemoryMap:{_MAP_TYPE}map[{rendered}] Cells:([]int)[{_ints(node.cells or (), ' ')}]}}"
    )


def _spew_block(block: Block) -> str:
    return (
        f"{{NUMAAffinity:([]int)[{_ints(block.numa_affinity or (), ' ')}]"
        f" Type:(v1.ResourceName){block.type} Size:(uint64){block.size}}}"
    )


def spew_memory(checkpoint: MemoryManagerCheckpoint) -> str | None:
    """go-spew's text of ``&checkpoint`` with the checksum zeroed, or None (exact path)."""
    if not _plain(checkpoint):
        return None
    machine = checkpoint.machine_state or {}
    entries = checkpoint.entries or {}
    nodes = " ".join(f"{key}:{_spew_node(node)}" for key, node in sorted(machine.items()) if node)
    pods = " ".join(
        f"{pod}:map["
        + " ".join(
            f"{name}:[{' '.join(map(_spew_block, blocks or ()))}]"
            for name, blocks in sorted((containers or {}).items())
        )
        + "]"
        for pod, containers in sorted(entries.items())
    )
    return (
        f"{_PREFIX}{checkpoint.policy_name} MachineState:(state.NUMANodeMap)map[{nodes}]"
        f" Entries:(state.ContainerMemoryAssignments)map[{pods}] Checksum:(checksum.Checksum)0}}"
    )


def _json_table(table: MemoryTable) -> str:
    return (
        f'{{"total":{table.total},"systemReserved":{table.system_reserved},'
        f'"allocatable":{table.allocatable},"reserved":{table.reserved},"free":{table.free}}}'
    )


def _json_node(node: NUMANodeState) -> str:
    tables = node.memory_map or {}
    rendered = ",".join(
        f'"{name}":{_json_table(table)}' for name, table in sorted(tables.items()) if table
    )
    return (
        f'{{"numberOfAssignments":{node.number_of_assignments},"memoryMap":{{{rendered}}},'
        f'"cells":[{_ints(node.cells or (), ",")}]}}'
    )


def _json_block(block: Block) -> str:
    return (
        f'{{"numaAffinity":[{_ints(block.numa_affinity or (), ",")}],'
        f'"type":"{block.type}","size":{block.size}}}'
    )


def marshal_memory(checkpoint: MemoryManagerCheckpoint) -> bytes | None:
    """``json.Marshal`` of the checkpoint, or None when the exact writer must decide."""
    if not _plain(checkpoint):
        return None
    machine = checkpoint.machine_state or {}
    entries = checkpoint.entries or {}
    # Go sorts the int keys as strings ("10" before "2")
    keyed = sorted((str(key), node) for key, node in machine.items() if node)
    nodes = ",".join(f'"{text}":{_json_node(node)}' for text, node in keyed)
    text = f'{{"policyName":"{checkpoint.policy_name}","machineState":{{{nodes}}}'
    if entries:
        pods = ",".join(
            f'"{pod}":{{'
            + ",".join(
                f'"{name}":[{",".join(map(_json_block, blocks or ()))}]'
                for name, blocks in sorted((containers or {}).items())
            )
            + "}"
            for pod, containers in sorted(entries.items())
        )
        text += f',"entries":{{{pods}}}'
    return f'{text},"checksum":{checkpoint.checksum}}}'.encode("ascii")
