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


class TopologyIndex:
    """Bitmasks of every core, socket, NUMA node and uncore cache, and their nesting.

    The flat tables are built in one pass over the CPUs; the nesting tables, which only some
    steps read, are built on first use. Together that keeps a machine seen once (a fleet
    evaluation) cheap: index and first take well under a millisecond at 256 CPUs.
    """

    __slots__ = (
        "_nested",
        "all_bits",
        "core_bits",
        "cpus_per_core",
        "cpus_per_uncore",
        "l3_bits",
        "numa_bits",
        "numa_first",
        "smallest_core",
        "socket_bits",
        "topology",
    )

    def __init__(self, topology: CPUTopology) -> None:
        self.topology = topology
        self.all_bits = topology.all_cpus.bits
        cores: dict[int, int] = {}
        sockets: dict[int, int] = {}
        numas: dict[int, int] = {}
        l3s: dict[int, int] = {}
        for info in topology.cpus.values():
            bit = 1 << info.cpu
            key = info.core
            cores[key] = cores.get(key, 0) | bit
            key = info.socket
            sockets[key] = sockets.get(key, 0) | bit
            key = info.numa
            numas[key] = numas.get(key, 0) | bit
            key = info.l3
            l3s[key] = l3s.get(key, 0) | bit
        self.core_bits = dict(sorted(cores.items()))
        self.socket_bits = dict(sorted(sockets.items()))
        self.numa_bits = dict(sorted(numas.items()))
        self.l3_bits = dict(sorted(l3s.items()))
        self._nested: dict[str, dict[int, Members]] = {}
        # The kubelet reads the declared counters, never the CPU map, for these.
        self.cpus_per_core = topology.cpus_per_core
        self.cpus_per_uncore = topology.cpus_per_uncore_cache
        self.numa_first = topology.num_sockets >= topology.num_numa_nodes
        self.smallest_core = min((b.bit_count() for b in cores.values()), default=1)

    def _nesting(self, parent: str, child: str) -> dict[int, Members]:
        name = f"{parent}_{child}"
        found = self._nested.get(name)
        if found is None:
            found = self._nested[name] = self._nest(parent, child)
        return found

    def _nest(self, parent: str, child: str) -> dict[int, Members]:
        """parent -> ((child, bits of child within parent), ...) sorted by child id."""
        tables = {"core": self.core_bits, "socket": self.socket_bits, "numa": self.numa_bits}
        tables["l3"] = self.l3_bits
        parent_bits = tables[parent]
        cpus = self.topology.cpus
        nested: dict[int, list[tuple[int, int]]] = {}
        for element, bits in tables[child].items():  # ascending ids: lists stay sorted
            lowest = (bits & -bits).bit_length() - 1
            owner = getattr(cpus[lowest], parent)
            if bits & ~parent_bits[owner] == 0:  # the usual case: inside one parent
                nested.setdefault(owner, []).append((element, bits))
                continue
            for owner, owner_bits in parent_bits.items():  # spans parents: split it
                if bits & owner_bits:
                    nested.setdefault(owner, []).append((element, bits & owner_bits))
        return {owner: tuple(members) for owner, members in nested.items()}

    @property
    def socket_cores(self) -> dict[int, Members]:
        return self._nesting("socket", "core")

    @property
    def numa_cores(self) -> dict[int, Members]:
        return self._nesting("numa", "core")

    @property
    def numa_sockets(self) -> dict[int, Members]:
        return self._nesting("numa", "socket")

    @property
    def socket_numas(self) -> dict[int, Members]:
        return self._nesting("socket", "numa")

    @property
    def numa_l3(self) -> dict[int, Members]:
        return self._nesting("numa", "l3")

    @property
    def l3_cores(self) -> dict[int, Members]:
        return self._nesting("l3", "core")

    def union(self, table: Mapping[int, int], ids: Iterable[int]) -> int:
        bits = 0
        for key in ids:
            bits |= table.get(key, 0)
        return bits

    def numa_nodes_in_same_socket(self, numa_ids: Iterable[int]) -> bool:
        """The kubelet's ``AreNUMANodesInSameSocket`` (false for unknown nodes)."""
        nesting = self.numa_sockets
        sockets: set[int] = set()
        for numa in numa_ids:
            found = nesting.get(numa)
            if found is None:
                return False
            sockets.update(socket for socket, _ in found)
        return len(sockets) <= 1


@lru_cache(maxsize=16)
def topology_index(topology: CPUTopology) -> TopologyIndex:
    """The index of ``topology``, built on first use (bounded cache keyed by the value)."""
    return TopologyIndex(topology)
