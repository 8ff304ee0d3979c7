"""A direct writer for ``memory_manager_state``: the same bytes and checksum text, in bulk.

The exact path (:mod:`goencode`, :mod:`gospew`) walks Go types as data, one value at a
time; on 1,000 containers that walk is most of the time. Here both texts are built with
one f-string per table, node and block (each distinct NUMA affinity joined once), and
checked once at the end instead of string by string:

* **nil**: a nil map, slice or pointer (None) makes the builders raise (AttributeError,
  TypeError): the exact path decides;
* **JSON**: the text must be printable ASCII with no ``\\``, ``<``, ``>``, ``&`` (what
  ``json.Marshal`` would escape) and hold exactly two quotes per string written (a ``"``
  inside a name would add more);
* **go-spew**: prints strings raw, so any ASCII text is right as built (non-ASCII: exact path,
  which replaces surrogates as Go does).

Tests compare both texts with the exact path's on random checkpoints.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cpumanager.checkpoint.go.plainjson import marshal_safe

if TYPE_CHECKING:
    from cpumanager.checkpoint.memory.model import MemoryManagerCheckpoint

__all__ = ["marshal_memory", "spew_memory"]

_PREFIX = "(*state.MemoryManagerCheckpoint){PolicyName:(string)"
_MAP_TYPE = "(map[v1.ResourceName]*state.MemoryTable)"


class _IntListTexts(dict[tuple[int, ...], str]):
    """NUMA affinities as text, each distinct tuple joined once per file (few differ)."""

    def __init__(self, separator: str) -> None:
        super().__init__()
        self.separator = separator

    def __missing__(self, key: tuple[int, ...]) -> str:
        text = self[key] = self.separator.join(map(str, key))
        return text


def _spew_entries(entries: dict[str, Any]) -> str:
    affinity = _IntListTexts(" ")
    return " ".join(
        [
            f"{pod}:map["
            + " ".join(
                [
                    f"{name}:["
                    + " ".join(
                        [
                            f"{{NUMAAffinity:([]int)[{affinity[block.numa_affinity]}]"
                            f" Type:(v1.ResourceName){block.type} Size:(uint64){block.size}}}"
                            for block in blocks
                        ]
                    )
                    + "]"
                    for name, blocks in sorted(containers.items())
                ]
            )
            + "]"
            for pod, containers in sorted(entries.items())
        ]
    )


def _json_entries(entries: dict[str, Any]) -> tuple[str, int]:
    """The JSON of ``entries`` and the number of strings in it."""
    affinity = _IntListTexts(",")
    strings = len(entries)
    pods = []
    for pod, containers in sorted(entries.items()):
        strings += len(containers)
        rendered = []
        for name, blocks in sorted(containers.items()):
            strings += 4 * len(blocks)
            rendered.append(
                f'"{name}":['
                + ",".join(
                    [
                        f'{{"numaAffinity":[{affinity[block.numa_affinity]}],'
                        f'"type":"{block.type}","size":{block.size}}}'
                        for block in blocks
                    ]
                )
                + "]"
            )
        pods.append(f'"{pod}":{{{",".join(rendered)}}}')
    return ",".join(pods), strings


def _spew_table(name: str, table: Any) -> str:
    return (
        f"{name}:<*>{{TotalMemSize:(uint64){table.total} SystemReserved:(uint64)"
        f"{table.system_reserved} Allocatable:(uint64){table.allocatable} Reserved:(uint64)"
        f"{table.reserved} Free:(uint64){table.free}}}"
    )


def _spew_node(key: int, node: Any) -> str:
    """go-spew's ``key:<*>{...}`` of one machine-state node (raises on a nil inside)."""
    tables = " ".join([_spew_table(name, table) for name, table in sorted(node.memory_map.items())])
    cells = " ".join(map(str, node.cells))
    return (
        f"{key}:<*>{{NumberOfAssignments:(int){node.number_of_assignments} "
        f"MemoryMap:{_MAP_TYPE}map[{tables}] Cells:([]int)[{cells}]}}"
    )


def spew_memory(checkpoint: MemoryManagerCheckpoint) -> str | None:
    """go-spew's text of ``&checkpoint`` with the checksum zeroed, or None (exact path)."""
    machine = checkpoint.machine_state
    entries = checkpoint.entries
    if machine is None or entries is None or type(checkpoint.policy_name) is not str:
        return None
    try:
        nodes = " ".join([_spew_node(key, node) for key, node in sorted(machine.items())])
        pods = _spew_entries(entries)
    except (AttributeError, TypeError):
        return None
    text = (
        f"{_PREFIX}{checkpoint.policy_name} MachineState:(state.NUMANodeMap)map[{nodes}]"
        f" Entries:(state.ContainerMemoryAssignments)map[{pods}] Checksum:(checksum.Checksum)0}}"
    )
    return text if text.isascii() else None


def _json_table(name: str, table: Any) -> str:
    return (
        f'"{name}":{{"total":{table.total},"systemReserved":{table.system_reserved},'
        f'"allocatable":{table.allocatable},"reserved":{table.reserved},"free":{table.free}}}'
    )


def _json_node(key: str, node: Any) -> str:
    tables = ",".join([_json_table(name, table) for name, table in sorted(node.memory_map.items())])
    cells = ",".join(map(str, node.cells))
    return (
        f'"{key}":{{"numberOfAssignments":{node.number_of_assignments},"memoryMap":{{{tables}}},'
        f'"cells":[{cells}]}}'
    )


def marshal_memory(checkpoint: MemoryManagerCheckpoint) -> bytes | None:
    """``json.Marshal`` of the checkpoint, or None when the exact writer must decide."""
    machine = checkpoint.machine_state
    entries = checkpoint.entries
    if machine is None or entries is None or type(checkpoint.policy_name) is not str:
        return None
    strings = 4  # policyName and its value, machineState, checksum
    try:
        # Go sorts the int keys as strings ("10" before "2")
        keyed: list[tuple[str, Any]] = sorted((str(key), node) for key, node in machine.items())
        nodes = ",".join([_json_node(key, node) for key, node in keyed])
        strings += sum(4 + 6 * len(node.memory_map) for _, node in keyed)
        text = f'{{"policyName":"{checkpoint.policy_name}","machineState":{{{nodes}}}'
        if entries:
            pods, counted = _json_entries(entries)
            text += f',"entries":{{{pods}}}'
            strings += 1 + counted
    except (AttributeError, TypeError):
        return None
    text = f'{text},"checksum":{checkpoint.checksum}}}'
    if not marshal_safe(text) or text.count('"') != 2 * strings:
        return None
    return text.encode("ascii")
