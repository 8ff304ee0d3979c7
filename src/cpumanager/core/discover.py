"""The kubelet's ``Discover``: a cadvisor ``MachineInfo`` turned into a :class:`CPUTopology`.

cadvisor reports NUMA nodes, each with cores ``{id, socket_id, threads, uncore_caches}``.
The kubelet walks them in the order given and, per core:

* names the core by its **lowest thread id** (cadvisor's core ids repeat per package);
  a core without threads is an error (``no cpus provided``), duplicate threads too
  (``cpus provided are not unique``);
* takes the **first** uncore cache's id as the CPU's uncore id, or the core's socket id when
  cadvisor reports none (an uncore-unaware machine is "one uncore cache per socket").

The counters come from ``MachineInfo`` as the kubelet reads them: CPUs = ``num_cores``
(logical CPUs; 0 is the error ``could not detect number of cpus``), sockets = ``num_sockets``,
cores = the number of core records, NUMA nodes and uncore caches = distinct ids among CPUs.

Both the field names of cadvisor's JSON (``node_id``, ``core_id``, ``thread_ids``) and the
short ones of our vectors (``id``, ``threads``) are accepted. Node ``memory`` and
``distances`` (a SLIT row over the nodes in ascending id order) are kept when present.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from types import MappingProxyType
from typing import Any

from cpumanager.core.cpuset import CPUSet
from cpumanager.core.topology import CPUInfo, CPUTopology, NUMANodeInfo
from cpumanager.errors import MachineError

__all__ = ["topology_from_cadvisor", "unique_core_id"]


def unique_core_id(threads: Sequence[int]) -> int:
    """The kubelet's core id: the lowest thread id; errors on no or repeated threads."""
    if not threads:
        msg = "no cpus provided"
        raise MachineError(msg)
    if len(set(threads)) != len(threads):
        msg = "cpus provided are not unique"
        raise MachineError(msg)
    return min(threads)


def _field(record: Mapping[str, Any], *names: str, default: Any = None) -> Any:
    for name in names:
        if name in record:
            return record[name]
    return default


def _ints(value: object, where: str) -> list[int]:
    if value is None:
        return []
    if not isinstance(value, Sequence) or isinstance(value, str | bytes):
        msg = f"cadvisor machine info: {where} must be a list of integers, got {value!r}"
        raise MachineError(msg)
    out = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int):
            msg = f"cadvisor machine info: {where} must hold integers, got {item!r}"
            raise MachineError(msg)
        out.append(item)
    return out


def _records(value: object, where: str) -> list[Mapping[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, Sequence) or isinstance(value, str | bytes):
        msg = f"cadvisor machine info: {where} must be a list, got {type(value).__name__}"
        raise MachineError(msg)
    for item in value:
        if not isinstance(item, Mapping):
            msg = f"cadvisor machine info: every entry of {where} must be a mapping"
            raise MachineError(msg)
    return list(value)


def topology_from_cadvisor(machine_info: Mapping[str, Any]) -> CPUTopology:
    """Reproduce the kubelet's ``topology.Discover`` on a cadvisor ``MachineInfo`` mapping."""
    num_cpus = _field(machine_info, "num_cores", "NumCores", default=0)
    if not num_cpus:
        msg = "could not detect number of cpus"
        raise MachineError(msg)
    num_sockets = _field(machine_info, "num_sockets", "NumSockets", default=0)
    details: dict[int, tuple[int, int, int, int]] = {}
    nodes: list[NUMANodeInfo] = []
    rows: list[list[int]] = []
    physical_cores = 0
    for node in _records(_field(machine_info, "topology", "Topology"), "topology"):
        node_id = _field(node, "node_id", "id", "Id", default=0)
        cores = _records(_field(node, "cores", "Cores"), f"node {node_id} cores")
        physical_cores += len(cores)
        for core in cores:
            threads = _ints(_field(core, "thread_ids", "threads", "Threads"), "threads")
            core_id = unique_core_id(threads)
            socket_id = _field(core, "socket_id", "SocketID", default=0)
            uncores = _records(_field(core, "uncore_caches", "UncoreCaches"), "uncore_caches")
            uncore = _field(uncores[0], "id", "Id", default=0) if uncores else socket_id
            for cpu in threads:  # a CPU listed again (in another node) takes the later place
                details[cpu] = (core_id, socket_id, node_id, uncore)
        memory = _field(node, "memory", "Memory")
        rows.append(_ints(_field(node, "distances", "Distances"), f"node {node_id} distances"))
        nodes.append(
            NUMANodeInfo(id=node_id, memory_bytes=memory if isinstance(memory, int) else None)
        )
    node_ids = sorted(node.id for node in nodes)
    if len(node_ids) != len(set(node_ids)):
        msg = "cadvisor machine info lists a NUMA node twice; give each node once"
        raise MachineError(msg)
    # A SLIT row has one entry per node in ascending id order (the kernel's online nodes).
    nodes = [
        NUMANodeInfo(
            id=node.id,
            memory_bytes=node.memory_bytes or None,
            distances=MappingProxyType(
                dict(zip(node_ids, row, strict=True)) if len(row) == len(node_ids) else {}
            ),
        )
        for node, row in zip(nodes, rows, strict=True)
    ]
    shifts, warnings = _negative_shifts(details)
    records = [
        CPUInfo(
            cpu=cpu,
            core=ids[0] + shifts[0],
            socket=ids[1] + shifts[1],
            numa=ids[2] + shifts[2],
            l3=ids[3] + shifts[3],
        )
        for cpu, ids in details.items()
    ]
    if shifts[2]:
        nodes = [
            replace(node, id=node.id + shifts[2], distances=MappingProxyType({})) for node in nodes
        ]
    return CPUTopology(
        records,
        numa_nodes=nodes,
        num_cpus=num_cpus,
        num_cores=physical_cores,
        num_sockets=num_sockets,
        num_numa_nodes=len({ids[2] for ids in details.values()}),
        num_uncore_caches=len({ids[3] for ids in details.values()}),
        name="cadvisor",
        warnings=warnings,
    )


_LEVELS = ("core", "socket", "NUMA node", "uncore cache")


def _negative_shifts(
    details: Mapping[int, tuple[int, int, int, int]],
) -> tuple[tuple[int, int, int, int], list[str]]:
    """Per level, how much to add to every id so none is negative (order kept), and why.

    cadvisor reports ``-1`` for the package of s390 and some POWER CPUs, and then for the
    pseudo-node and uncore cache made from it; the kubelet groups those CPUs like any other
    id. Ids here are non-negative, so such a level is shifted up as a whole."""
    shifts = [0, 0, 0, 0]
    warnings = []
    for level, name in enumerate(_LEVELS):
        lowest = min((ids[level] for ids in details.values()), default=0)
        if lowest < 0:
            shifts[level] = -lowest
            cpus = CPUSet(cpu for cpu, ids in details.items() if ids[level] < 0)
            warnings.append(
                f"cadvisor gives CPUs {cpus} a negative {name} id (down to {lowest}); the "
                f"kubelet uses it like any other id; here every {name} id is raised by {-lowest}"
            )
    return (shifts[0], shifts[1], shifts[2], shifts[3]), warnings
