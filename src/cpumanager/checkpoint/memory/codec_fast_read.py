"""A fast reader for the usual ``memory_manager_state``: the faithful reader's result, sooner.

The faithful reader (:mod:`gojson` tree, :mod:`godecode` walk, :mod:`gospew` checksum)
follows every rule of Go's decoder one value at a time. A file the kubelet wrote has one
shape, read here from the C scanner (:mod:`plainjson`: ASCII, no escapes; duplicate keys
and negative numbers found by counting strings and dashes) with each kind of value checked
a whole column at a time:

* every object holds exactly its struct's JSON keys, spelled as written (Go would also
  match other cases and ignore unknown keys; ``policyName``, ``entries`` and ``checksum`` may
  be missing, as they keep their pre-initialised values);
* no ``null``; integers in their field's range; machine-state keys in canonical decimal
  (``"07"`` or ``"+7"`` are Go integers too, and could collide);
* pods and each pod's containers in sorted order (``json.Marshal`` writes them so; the
  checksum text is then built in document order);
* the stored checksum equals the one computed from the go-spew text built here (each
  distinct block and list of blocks built and rendered once: requests repeat).

Columns zipped together come from the same values, so they are as long as each other:
``zip`` takes no ``strict=`` here (the keyword alone costs it a slow argument parse).

Anything else, a mismatching checksum included, returns None and the faithful reader gives
the verdict and its wording. Tests compare the two on random and mutated files.
"""

from __future__ import annotations

import re
from itertools import chain, islice, repeat
from operator import itemgetter
from typing import Any

from cpumanager.checkpoint.go.fnv import fnv1a_32
from cpumanager.checkpoint.go.plainjson import (
    INT64_MAX,
    INT64_MIN,
    UINT64_MAX,
    PlainDocument,
    all_of_type,
    build_slotted,
    columns,
    fields_only,
    ints_within,
    keys_sorted,
    load_plain,
    without_cycle_collection,
)
from cpumanager.checkpoint.memory.model import (
    Block,
    MemoryManagerCheckpoint,
    MemoryTable,
    NUMANodeState,
)

__all__ = ["decode_memory_plain", "decode_memory_tree"]

_TOP = frozenset({"policyName", "machineState", "entries", "checksum"})
_NODE_KEYS = re.compile(r"(?:0|[1-9][0-9]{0,17})(?:,(?:0|[1-9][0-9]{0,17}))*")
_NODE_VALUES = itemgetter("numberOfAssignments", "memoryMap", "cells")
_TABLE_VALUES = itemgetter("total", "systemReserved", "allocatable", "reserved", "free")
_AFFINITY = itemgetter("numaAffinity")
_TYPE = itemgetter("type")
_SIZE = itemgetter("size")
_PREFIX = "(*state.MemoryManagerCheckpoint){PolicyName:(string)"
_MAP_TYPE = "(map[v1.ResourceName]*state.MemoryTable)"


def _machine(
    raw: object,
) -> tuple[dict[int, NUMANodeState | None], str, int, int] | None:
    """The machine state, its go-spew text, its string and dash counts, or None."""
    if type(raw) is not dict:
        return None
    nodes = list(raw.values())
    if not nodes:
        return {}, "", 0, 0
    rows = fields_only(nodes, 3, _NODE_VALUES)
    if rows is None or not _NODE_KEYS.fullmatch(",".join(raw)):
        return None
    counts, maps, cells = columns(rows, 3)
    if not all_of_type(maps, dict) or not all_of_type(cells, list) or not keys_sorted(maps):
        return None
    if not ints_within([*counts, *chain.from_iterable(cells)], INT64_MIN, INT64_MAX):
        return None
    names = list(chain.from_iterable(maps))
    tables = fields_only(list(chain.from_iterable(map(dict.values, maps))), 5, _TABLE_VALUES)
    if tables is None or not ints_within(list(chain.from_iterable(tables)), 0, UINT64_MAX):
        return None
    made = iter(build_slotted(MemoryTable, columns(tables, 5), len(tables)))
    memory_maps = [dict(zip(names_, made)) for names_ in maps]  # noqa: B905 - to each map's end
    states = build_slotted(
        NUMANodeState, [counts, memory_maps, list(map(tuple, cells))], len(nodes)
    )
    keys = list(map(int, raw))
    # Nodes repeat their tables (the same sizes on every node): each distinct row of checked
    # ints is rendered once, its five numbers the costly part.
    rendered = {
        row: f"TotalMemSize:(uint64){row[0]} SystemReserved:(uint64){row[1]}"
        f" Allocatable:(uint64){row[2]} Reserved:(uint64){row[3]} Free:(uint64){row[4]}"
        for row in dict.fromkeys(tables)
    }
    spewed = iter(
        [
            f"{name}:<*>{{{text}}}"
            for name, text in zip(names, map(rendered.__getitem__, tables))  # noqa: B905
        ]
    )
    texts = [
        f"{key}:<*>{{NumberOfAssignments:(int){count} MemoryMap:{_MAP_TYPE}map["
        f"{' '.join(islice(spewed, len(tables_)))}] Cells:([]int)[{' '.join(map(str, cells_))}]}}"
        for key, count, tables_, cells_ in zip(keys, counts, maps, cells)  # noqa: B905
    ]
    if keys != sorted(keys):  # go-spew sorts the int keys as numbers ("2" before "10")
        texts = [text for _, text in sorted(zip(keys, texts))]  # noqa: B905
    strings = 4 * len(nodes) + 6 * len(names)
    machine: dict[int, NUMANodeState | None] = dict(zip(keys, states))  # noqa: B905
    return machine, " ".join(texts), strings, "".join(names).count("-")


_SMALL_PODS = 16  # up to this many pods, one loop beats the column passes
_BLOCK_SETTERS = tuple(Block.__dict__[name].__set__ for name in Block.__slots__)
_new = object.__new__


def _entries_small(raw: dict[str, Any]) -> tuple[dict[str, Any], str, int, int] | None:
    """:func:`_entries`' answer by one loop, for the few pods of a usual node: the same
    checks value by value, each distinct block built and rendered once."""
    pod_names = list(raw)
    if pod_names != sorted(pod_names):
        return None
    set_affinity, set_type, set_size = _BLOCK_SETTERS
    blocks: dict[tuple[Any, ...], tuple[Block, str]] = {}
    entries: dict[str, Any] = {}
    pod_texts: list[str] = []
    dashed: list[str] = [*pod_names]
    strings = len(raw)
    for pod, containers in raw.items():
        if type(containers) is not dict:
            return None
        names = list(containers)
        if names != sorted(names):
            return None
        dashed += names
        strings += len(names)
        held: dict[str, tuple[Block, ...]] = {}
        rendered: list[str] = []
        for name, listed in containers.items():
            if type(listed) is not list:
                return None
            made: list[Block] = []
            texts: list[str] = []
            for block in listed:
                if type(block) is not dict or len(block) != 3:
                    return None
                try:  # an object of three keys: these three are all of them
                    affinity, kind, size = block["numaAffinity"], block["type"], block["size"]
                except KeyError:
                    return None
                if type(affinity) is not list or type(kind) is not str or type(size) is not int:
                    return None
                if not 0 <= size <= UINT64_MAX:
                    return None
                if len(affinity) == 1:  # one NUMA node: the usual block
                    node = affinity[0]
                    if type(node) is not int or not INT64_MIN <= node <= INT64_MAX:
                        return None
                elif not ints_within(affinity, INT64_MIN, INT64_MAX):
                    return None
                key = (tuple(affinity), kind, size)
                found = blocks.get(key)
                if found is None:
                    value = _new(Block)
                    set_affinity(value, key[0])
                    set_type(value, kind)
                    set_size(value, size)
                    text = (
                        f"{{NUMAAffinity:([]int)[{' '.join(map(str, affinity))}]"
                        f" Type:(v1.ResourceName){kind} Size:(uint64){size}}}"
                    )
                    found = blocks[key] = (value, text)
                made.append(found[0])
                texts.append(found[1])
                dashed.append(kind)
            strings += 4 * len(listed)
            held[name] = tuple(made)
            rendered.append(f"{name}:[{' '.join(texts)}]")
        entries[pod] = held
        pod_texts.append(f"{pod}:map[{' '.join(rendered)}]")
    return entries, " ".join(pod_texts), strings, "".join(dashed).count("-")


def _entries(raw: object) -> tuple[dict[str, Any], str, int, int] | None:
    """The entries, their go-spew text, their string and dash counts, or None."""
    if type(raw) is not dict:
        return None
    if len(raw) <= _SMALL_PODS:
        return _entries_small(raw)
    return _entries_columns(raw)


def _entries_columns(raw: dict[str, Any]) -> tuple[dict[str, Any], str, int, int] | None:
    """:func:`_entries` a column at a time (many pods: a few C passes over each column)."""
    pods = list(raw.values())
    if not all_of_type(pods, dict) or not keys_sorted(pods) or list(raw) != sorted(raw):
        return None
    lists = list(chain.from_iterable(map(dict.values, pods)))
    if not all_of_type(lists, list):
        return None
    flat = list(chain.from_iterable(lists))
    sizes = fields_only(flat, 3, _SIZE)
    if sizes is None:
        return None
    try:  # objects of three keys: these three are all of them
        affinities = list(map(_AFFINITY, flat))
        types = list(map(_TYPE, flat))
    except KeyError:
        return None
    if not all_of_type(affinities, list) or not all_of_type(types, str):
        return None
    if not ints_within(sizes, 0, UINT64_MAX):
        return None
    if not ints_within(list(chain.from_iterable(affinities)), INT64_MIN, INT64_MAX):
        return None
    # Blocks repeat (the same request on the same node), and so do containers' lists of
    # them: each distinct block and list is built and rendered once.
    keys = list(zip(map(tuple, affinities), types, sizes))  # noqa: B905
    distinct = list(dict.fromkeys(keys))
    blocks = dict(zip(distinct, build_slotted(Block, columns(distinct, 3), len(distinct))))  # noqa: B905
    texts = {
        key: f"{{NUMAAffinity:([]int)[{' '.join(map(str, key[0]))}]"
        f" Type:(v1.ResourceName){key[1]} Size:(uint64){key[2]}}}"
        for key in distinct
    }
    shapes = list(map(tuple, map(islice, repeat(iter(keys)), map(len, lists))))
    made = {shape: tuple(map(blocks.__getitem__, shape)) for shape in dict.fromkeys(shapes)}
    spewed = {shape: " ".join(map(texts.__getitem__, shape)) for shape in made}
    names = list(chain.from_iterable(pods))
    per_container = iter(list(map(made.__getitem__, shapes)))
    entries = {
        pod: dict(zip(containers, islice(per_container, len(containers))))  # noqa: B905
        for pod, containers in raw.items()
    }
    rendered = iter(
        [
            f"{name}:[{text}]"
            for name, text in zip(names, map(spewed.__getitem__, shapes))  # noqa: B905
        ]
    )
    text = " ".join(
        [
            f"{pod}:map[{' '.join(islice(rendered, len(containers)))}]"
            for pod, containers in raw.items()
        ]
    )
    joined = "".join(raw) + "".join(names) + "".join(types)
    return entries, text, len(raw) + len(lists) + 4 * len(flat), joined.count("-")


def decode_memory_tree(document: PlainDocument) -> MemoryManagerCheckpoint | None:
    """The verified checkpoint in a :func:`~plainjson.load_plain` document, or None."""
    tree = document.tree
    if "machineState" not in tree or not _TOP.issuperset(tree):
        return None
    policy = tree.get("policyName", "")
    checksum = tree.get("checksum", 0)
    if type(policy) is not str or not ints_within([checksum], 0, UINT64_MAX):
        return None
    machine = _machine(tree["machineState"])
    entries = _entries(tree.get("entries", {}))
    if machine is None or entries is None:
        return None
    strings = len(tree) + ("policyName" in tree) + machine[2] + entries[2]
    if strings != document.strings:
        return None  # a duplicate key collapsed: Go merges or overrides
    if policy.count("-") + machine[3] + entries[3] != document.dashes:
        return None  # a negative number: Go refuses -0 where Python reads 0
    text = (
        f"{_PREFIX}{policy} MachineState:(state.NUMANodeMap)map[{machine[1]}]"
        f" Entries:(state.ContainerMemoryAssignments)map[{entries[1]}]"
        " Checksum:(checksum.Checksum)0}"
    )
    if fnv1a_32(text.encode("ascii")) != checksum:
        return None  # corrupt: the faithful reader words it
    return MemoryManagerCheckpoint(policy, machine[0], entries[0], checksum)


def decode_memory_plain(data: bytes) -> MemoryManagerCheckpoint | None:
    """The checkpoint a released kubelet reads from ``data``, when it is plain and verifies."""
    return without_cycle_collection(_read, data)


def _read(data: bytes) -> MemoryManagerCheckpoint | None:
    document = load_plain(data)
    return None if document is None else decode_memory_tree(document)
