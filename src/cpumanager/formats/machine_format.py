"""The machine file format: a :class:`CPUTopology` as plain JSON/YAML-able data.

This is exactly what ``cpumanager topology -o json`` prints, what ``--save`` writes and what
``--machine FILE`` and scenario files read::

    {
      "name": "dual-socket-ht",
      "cpus": [{"cpu": 0, "socket": 0, "numa": 0, "core": 0, "l3": 0}, ...],
      "numa_nodes": [{"id": 0, "memory_bytes": 68719476736, "cpus": "0-5"}, ...],
      "distances": {"0": {"0": 10, "1": 21}, "1": {"0": 21, "1": 10}},
      "counters": {"cpus": 12, "cores": 6, ...},      # optional
      "warnings": ["..."]                             # optional
    }

* ``cpus``: one record per online logical CPU. ``l3`` is the uncore (last-level) cache group.
* ``numa_nodes``: every node, including nodes without CPUs (HBM, CXL, GPU memory);
  ``memory_bytes`` may be null; ``cpus`` is written for readers and checked when read back.
* ``distances``: the SLIT rows by node id; keys are strings in JSON, ints are accepted too.
* ``counters``: the kubelet's declared counters. Written only when they differ from what the
  CPU records imply (some kubelet fixtures declare odd values); read as given.

Validation errors raise :class:`MachineError` naming the field and what to fix.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from cpumanager.core import limits
from cpumanager.core.cpuset import MAX_CPU_ID, CPUSet
from cpumanager.core.topology import CPUInfo, CPUTopology, NUMANodeInfo
from cpumanager.errors import InvalidCPUSetError, MachineError

__all__ = ["COUNTER_KEYS", "topology_from_dict", "topology_to_dict"]

COUNTER_KEYS: tuple[str, ...] = ("cpus", "cores", "sockets", "numa_nodes", "uncore_caches")
_CPU_KEYS = ("cpu", "socket", "numa", "core", "l3")
_TOP_KEYS = frozenset({"name", "cpus", "numa_nodes", "distances", "counters", "warnings"})


def topology_to_dict(topology: CPUTopology) -> dict[str, Any]:
    """The machine-format dict of ``topology`` (JSON-ready: string keys, plain values)."""
    cpus = [
        {"cpu": r.cpu, "socket": r.socket, "numa": r.numa, "core": r.core, "l3": r.l3}
        for r in topology.cpus.values()
    ]
    nodes: list[dict[str, Any]] = []
    distances: dict[str, dict[str, int]] = {}
    for node in topology.numa_nodes:
        nodes.append(
            {
                "id": node.id,
                "memory_bytes": node.memory_bytes,
                "cpus": str(topology.cpus_in_numa_nodes([node.id])),
            }
        )
        if node.distances:
            distances[str(node.id)] = {str(k): v for k, v in sorted(node.distances.items())}
    out: dict[str, Any] = {
        "name": topology.name,
        "cpus": cpus,
        "numa_nodes": nodes,
        "distances": distances,
    }
    derived = CPUTopology(topology.cpus.values(), numa_nodes=topology.numa_nodes)
    if derived.counters() != topology.counters():
        out["counters"] = dict(zip(COUNTER_KEYS, topology.counters(), strict=True))
    if topology.warnings:
        out["warnings"] = list(topology.warnings)
    return out


_MAX_AMOUNT = (1 << 63) - 1  # bytes, counters, distances: what the kernel can report


def _int(value: object, where: str, *, high: int = MAX_CPU_ID) -> int:
    # Ids (CPUs, cores, sockets, NUMA nodes, caches) index bitmasks: the default bound keeps
    # them in CPUSet's range.
    if isinstance(value, bool) or not isinstance(value, int):
        msg = f"{where} must be an integer, got {value!r}; fix the machine description"
        raise MachineError(msg)
    if value < 0:
        msg = f"{where} must be non-negative, got {value}; fix the machine description"
        raise MachineError(msg)
    if value > high:
        msg = f"{where} is {value}, above the largest supported {high}; fix the machine description"
        raise MachineError(msg)
    return value


def _key(value: object, where: str) -> int:
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return _int(value, where)


def _cpu_records(raw: object) -> list[CPUInfo]:
    if not isinstance(raw, Sequence) or isinstance(raw, str | bytes):
        msg = "machine 'cpus' must be a list of {cpu, socket, numa, core, l3} records"
        raise MachineError(msg)
    if len(raw) > limits.MAX_CPUS:
        msg = f"machine 'cpus' lists {len(raw):,} CPUs, over the limit of {limits.MAX_CPUS:,}"
        raise MachineError(msg)
    records = []
    seen: set[int] = set()
    for index, item in enumerate(raw):
        if not isinstance(item, Mapping):
            msg = f"machine cpus[{index}] must be a mapping with keys {', '.join(_CPU_KEYS)}"
            raise MachineError(msg)
        missing = [key for key in _CPU_KEYS if key not in item]
        if missing:
            msg = f"machine cpus[{index}] lacks {', '.join(missing)}; every CPU needs all five"
            raise MachineError(msg)
        values = {key: _int(item[key], f"cpus[{index}].{key}") for key in _CPU_KEYS}
        if values["cpu"] in seen:
            msg = f"CPU {values['cpu']} is described twice; give each logical CPU one record"
            raise MachineError(msg)
        seen.add(values["cpu"])
        records.append(CPUInfo(**values))
    return records


def _distances(raw: object) -> dict[int, dict[int, int]]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        msg = "machine 'distances' must map node id -> {node id: distance}"
        raise MachineError(msg)
    if len(raw) > limits.MAX_NUMA_NODES:
        msg = (
            f"machine 'distances' has {len(raw):,} rows, over {limits.MAX_NUMA_NODES:,} NUMA nodes"
        )
        raise MachineError(msg)
    table: dict[int, dict[int, int]] = {}
    for src, row in raw.items():
        src_id = _key(src, f"distances key {src!r}")
        if not isinstance(row, Mapping):
            msg = f"machine distances[{src!r}] must map node id -> distance"
            raise MachineError(msg)
        table[src_id] = {
            _key(dst, f"distances[{src!r}] key {dst!r}"): _int(
                d, f"distances[{src!r}][{dst!r}]", high=_MAX_AMOUNT
            )
            for dst, d in row.items()
        }
    return table


def _nodes(
    raw: object, distances: Mapping[int, Mapping[int, int]], cpus: Sequence[CPUInfo]
) -> list[NUMANodeInfo]:
    if raw is None:
        raw = []
    if not isinstance(raw, Sequence) or isinstance(raw, str | bytes):
        msg = "machine 'numa_nodes' must be a list of {id, memory_bytes} records"
        raise MachineError(msg)
    by_node: dict[int, int] = {}
    for rec in cpus:
        by_node[rec.numa] = by_node.get(rec.numa, 0) | (1 << rec.cpu)
    count = max(len(raw), len(by_node))
    if count > limits.MAX_NUMA_NODES:
        msg = f"the machine has {count:,} NUMA nodes, over the limit of {limits.MAX_NUMA_NODES:,}"
        raise MachineError(msg)
    seen: dict[int, NUMANodeInfo] = {}
    for index, item in enumerate(raw):
        if not isinstance(item, Mapping) or "id" not in item:
            msg = f"machine numa_nodes[{index}] must be a mapping with an 'id'"
            raise MachineError(msg)
        node_id = _int(item["id"], f"numa_nodes[{index}].id")
        if node_id in seen:
            msg = f"NUMA node {node_id} is listed twice in numa_nodes; list each node once"
            raise MachineError(msg)
        memory = item.get("memory_bytes")
        memory_bytes = (
            None if memory is None else _int(memory, f"numa_nodes[{index}]", high=_MAX_AMOUNT)
        )
        listed = item.get("cpus")
        if listed is not None:
            try:
                # str() of an int past 4,300 digits raises ValueError; no CPU id is that long
                text = "(a huge number)" if isinstance(listed, int) and listed > 2**64 else listed
                declared = CPUSet.parse(str(text))
            except InvalidCPUSetError as err:
                msg = f"numa_nodes[{index}].cpus: {err.message}"
                raise MachineError(msg) from err
            actual = CPUSet.from_bits(by_node.get(node_id, 0))
            if declared != actual:
                msg = (
                    f"NUMA node {node_id} lists cpus {str(declared)!r} but the CPU records "
                    f"put {str(actual)!r} on it; make them agree or drop the node's 'cpus'"
                )
                raise MachineError(msg)
        seen[node_id] = NUMANodeInfo(
            id=node_id,
            memory_bytes=memory_bytes,
            distances=MappingProxyType(dict(sorted(distances.get(node_id, {}).items()))),
        )
    for node_id in sorted(set(by_node) | set(distances)):
        if node_id not in seen:
            seen[node_id] = NUMANodeInfo(
                id=node_id,
                distances=MappingProxyType(dict(sorted(distances.get(node_id, {}).items()))),
            )
    return [seen[key] for key in sorted(seen)]


def topology_from_dict(data: object) -> CPUTopology:
    """Build and validate a :class:`CPUTopology` from machine-format data (parsed JSON/YAML)."""
    if not isinstance(data, Mapping):
        msg = "a machine description must be a mapping with 'cpus', 'numa_nodes', 'distances'"
        raise MachineError(msg)
    unknown = sorted(str(key) for key in data if key not in _TOP_KEYS)
    if unknown:
        msg = (
            f"unknown machine field(s) {', '.join(unknown)}; "
            f"allowed: {', '.join(sorted(_TOP_KEYS))}"
        )
        raise MachineError(msg)
    if "cpus" not in data:
        msg = "a machine description needs a 'cpus' list of {cpu, socket, numa, core, l3}"
        raise MachineError(msg)
    cpus = _cpu_records(data["cpus"])
    if not cpus:
        msg = "a machine description needs at least one CPU in 'cpus'"
        raise MachineError(msg)
    distances = _distances(data.get("distances"))
    nodes = _nodes(data.get("numa_nodes"), distances, cpus)
    counters: dict[str, int] = {}
    raw_counters = data.get("counters")
    if raw_counters is not None:
        if not isinstance(raw_counters, Mapping):
            msg = f"machine 'counters' must map {', '.join(COUNTER_KEYS)} to integers"
            raise MachineError(msg)
        for key, value in raw_counters.items():
            if key not in COUNTER_KEYS:
                msg = f"unknown counter {key!r}; allowed: {', '.join(COUNTER_KEYS)}"
                raise MachineError(msg)
            counters[key] = _int(value, f"counters.{key}", high=_MAX_AMOUNT)
    name = data.get("name") or ""
    warnings = data.get("warnings") or ()
    if not isinstance(name, str):
        msg = f"machine 'name' must be text, got {name!r}"
        raise MachineError(msg)
    if isinstance(warnings, str) or not isinstance(warnings, Sequence):
        msg = "machine 'warnings' must be a list of strings"
        raise MachineError(msg)
    return CPUTopology(
        cpus,
        numa_nodes=nodes,
        num_cpus=counters.get("cpus"),
        num_cores=counters.get("cores"),
        num_sockets=counters.get("sockets"),
        num_numa_nodes=counters.get("numa_nodes"),
        num_uncore_caches=counters.get("uncore_caches"),
        name=name,
        warnings=tuple(str(w) for w in warnings),
    )
