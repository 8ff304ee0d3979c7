"""Per-topology integer-bitmask indexes for the allocator.

Every query the kubelet's accumulator makes ("CPUs of socket 1", "cores of NUMA node 0
that still have a free CPU") becomes an AND and a popcount on Python ints. The index is
built once per topology and kept in a small LRU keyed by the topology value itself (not by
name), so two different machines never share an index and memory stays bounded.

Core, socket, NUMA and uncore ids are looked up topology-wide, as the kubelet does: a core id
that repeats on two sockets names the CPUs of both.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache

from cpumanager.core.topology import CPUTopology

__all__ = ["Members", "TopologyIndex", "popcount", "topology_index"]

# (element id, bits of that element's CPUs inside the parent element), ascending by id.
Members = tuple[tuple[int, int], ...]


def popcount(bits: int) -> int:
    return bits.bit_count()


def _group(records: Iterable[tuple[int, int, int]]) -> dict[int, Members]:
    """parent -> ((child, bits of child within parent), ...) sorted by child id."""
    nested: dict[int, dict[int, int]] = {}
    for parent, child, cpu in records:
        children = nested.setdefault(parent, {})
        children[child] = children.get(child, 0) | (1 << cpu)
    return {parent: tuple(sorted(children.items())) for parent, children in nested.items()}


class TopologyIndex:
    """Bitmasks of every core, socket, NUMA node and uncore cache, and their nesting."""

    __slots__ = (
        "all_bits",
        "core_bits",
        "cpus_per_core",
        "cpus_per_uncore",
        "l3_bits",
        "l3_cores",
        "numa_bits",
        "numa_cores",
        "numa_first",
        "numa_l3",
        "numa_socket_ids",
        "numa_sockets",
        "smallest_core",
        "socket_bits",
        "socket_cores",
        "socket_numas",
        "topology",
    )

    def __init__(self, topology: CPUTopology) -> None:
        self.topology = topology
        infos = list(topology.cpus.values())
        self.all_bits = topology.all_cpus.bits
        self.core_bits = _bits_by(infos, "core")
        self.socket_bits = _bits_by(infos, "socket")
        self.numa_bits = _bits_by(infos, "numa")
        self.l3_bits = _bits_by(infos, "l3")
        self.socket_cores = _group((i.socket, i.core, i.cpu) for i in infos)
        self.numa_cores = _group((i.numa, i.core, i.cpu) for i in infos)
        self.numa_sockets = _group((i.numa, i.socket, i.cpu) for i in infos)
        self.socket_numas = _group((i.socket, i.numa, i.cpu) for i in infos)
        self.numa_l3 = _group((i.numa, i.l3, i.cpu) for i in infos)
        self.l3_cores = _group((i.l3, i.core, i.cpu) for i in infos)
        self.numa_socket_ids: Mapping[int, frozenset[int]] = {
            numa: frozenset(socket for socket, _ in members)
            for numa, members in self.numa_sockets.items()
        }
        # The kubelet reads the declared counters, never the CPU map, for these.
        self.cpus_per_core = topology.cpus_per_core
        self.cpus_per_uncore = topology.cpus_per_uncore_cache
        self.numa_first = topology.num_sockets >= topology.num_numa_nodes
        self.smallest_core = min((b.bit_count() for b in self.core_bits.values()), default=1)

    def union(self, table: Mapping[int, int], ids: Iterable[int]) -> int:
        bits = 0
        for key in ids:
            bits |= table.get(key, 0)
        return bits

    def numa_nodes_in_same_socket(self, numa_ids: Iterable[int]) -> bool:
        """The kubelet's ``AreNUMANodesInSameSocket`` (false for unknown nodes)."""
        sockets: set[int] = set()
        for numa in numa_ids:
            found = self.numa_socket_ids.get(numa)
            if found is None:
                return False
            sockets |= found
        return len(sockets) <= 1


def _bits_by(infos: Iterable[object], attr: str) -> dict[int, int]:
    table: dict[int, int] = {}
    for info in infos:
        key = getattr(info, attr)
        table[key] = table.get(key, 0) | (1 << info.cpu)  # type: ignore[attr-defined]
    return dict(sorted(table.items()))


@lru_cache(maxsize=16)
def topology_index(topology: CPUTopology) -> TopologyIndex:
    """The index of ``topology``, built on first use (bounded cache keyed by the value)."""
    return TopologyIndex(topology)
