"""Per-topology integer-bitmask indexes for the allocator.

Every query the kubelet's accumulator makes ("CPUs of socket 1", "cores of NUMA node 0
that still have a free CPU") becomes an AND and a popcount on Python ints. The index is
built once per topology and kept in a small LRU keyed by the topology value itself (not by
name), so two different machines never share an index and memory stays bounded; each
topology object then keeps the index it was given, so later takes skip the lookup by value.

Core, socket, NUMA and uncore ids are looked up topology-wide, as the kubelet does: a core id
that repeats on two sockets names the CPUs of both.

A machine seen once (a fleet evaluation) pays the build, so the build does as little as it
can: the flat tables are the topology's own per-level sets turned into ints, and the
nesting ("cores of NUMA node 3") is worked out one parent at a time, when a take first asks
for that parent, by reading the child ids of the parent's own CPUs.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from operator import attrgetter

from cpumanager.core.topology import CPUInfo, CPUTopology

__all__ = ["Members", "Nesting", "TopologyIndex", "forget_index", "popcount", "topology_index"]

# (element id, bits of that element's CPUs inside the parent element), ascending by id.
Members = tuple[tuple[int, int], ...]


def popcount(bits: int) -> int:
    return bits.bit_count()


def _bits_by_id(topology: CPUTopology, level: str) -> dict[int, int]:
    return dict(topology.group_bits(level))


class Nesting:
    """parent id -> Members of one child level; each parent's entry is built on first use.

    A child that spans two parents (a core id repeated on two sockets) appears under each,
    with only its CPUs inside that parent. Unknown parents raise KeyError, as a dict does.
    """

    __slots__ = ("_built", "_child", "_children", "_cpus", "_parents")

    def __init__(
        self,
        parents: Mapping[int, int],
        children: Mapping[int, int],
        child_level: str,
        cpus: Mapping[int, CPUInfo],
    ) -> None:
        self._parents = parents
        self._children = children
        self._child = attrgetter(child_level)
        self._cpus = cpus
        self._built: dict[int, Members] = {}

    def __getitem__(self, parent: int) -> Members:
        found = self._built.get(parent)
        if found is None:
            found = self._built[parent] = self._build(self._parents[parent])
        return found

    def __contains__(self, parent: object) -> bool:
        return parent in self._parents

    def get(self, parent: int, default: Members = ()) -> Members:
        if parent in self._parents:
            return self[parent]
        return default

    def _build(self, parent_bits: int) -> Members:
        """Children holding a CPU of the parent, by id, clipped to the parent's CPUs.

        Whichever is shorter is walked: the child table (few big children, such as the
        NUMA nodes of a socket) or the parent's children one by one (many small ones, such
        as cores), each found from the lowest CPU of the parent not yet covered.
        """
        children = self._children
        if len(children) <= parent_bits.bit_count():
            return tuple(
                (element, bits & parent_bits)
                for element, bits in children.items()
                if bits & parent_bits
            )
        cpus, child = self._cpus, self._child
        members = []
        rest = parent_bits
        while rest:  # one lookup per child: its lowest CPU left in the parent names it
            element = child(cpus[(rest & -rest).bit_length() - 1])
            bits = children[element]
            rest &= ~bits
            members.append((element, bits & parent_bits))
        members.sort()
        return tuple(members)


class TopologyIndex:
    """Bitmasks of every core, socket, NUMA node and uncore cache, and their nesting."""

    __slots__ = (
        "_smallest",
        "all_bits",
        "answers",
        "core_bits",
        "cpus_per_core",
        "cpus_per_uncore",
        "l3_bits",
        "l3_cores",
        "numa_bits",
        "numa_cores",
        "numa_first",
        "numa_l3",
        "numa_sockets",
        "socket_bits",
        "socket_cores",
        "socket_numas",
        "topology",
    )

    def __init__(self, topology: CPUTopology) -> None:
        self.topology = topology
        self.all_bits = topology.all_cpus.bits
        self.core_bits = cores = _bits_by_id(topology, "core")
        self.socket_bits = sockets = _bits_by_id(topology, "socket")
        self.numa_bits = numas = _bits_by_id(topology, "numa")
        self.l3_bits = l3s = _bits_by_id(topology, "l3")
        cpus = topology.cpus
        self.socket_cores = Nesting(sockets, cores, "core", cpus)
        self.numa_cores = Nesting(numas, cores, "core", cpus)
        self.numa_sockets = Nesting(numas, sockets, "socket", cpus)
        self.socket_numas = Nesting(sockets, numas, "numa", cpus)
        self.numa_l3 = Nesting(numas, l3s, "l3", cpus)
        self.l3_cores = Nesting(l3s, cores, "core", cpus)
        # The kubelet reads the declared counters, never the CPU map, for these.
        self.cpus_per_core = topology.cpus_per_core
        self.cpus_per_uncore = topology.cpus_per_uncore_cache
        self.numa_first = topology.num_sockets >= topology.num_numa_nodes
        self._smallest: dict[str, int] = {}
        # take_by_topology's answers on this machine (take.py): (available, count, options)
        # -> the CPUs taken, as bits
        self.answers: dict[tuple[int, int, object], int] = {}

    def smallest(self, level: str) -> int:
        """CPUs of the smallest ``core``, ``socket``, ``numa`` node or ``l3`` cache (1: none).

        A step that takes whole elements only while at least their size is needed can
        stop before computing its order when less than this is needed.
        """
        found = self._smallest.get(level)
        if found is None:
            table: dict[int, int] = getattr(self, f"{level}_bits")
            found = self._smallest[level] = min(map(int.bit_count, table.values()), default=1)
        return found

    @property
    def smallest_core(self) -> int:
        return self.smallest("core")

    def numa_nodes_in_same_socket(self, numa_ids: list[int] | tuple[int, ...]) -> bool:
        """The kubelet's ``AreNUMANodesInSameSocket`` (false for unknown nodes)."""
        nesting = self.numa_sockets
        sockets: set[int] = set()
        for numa in numa_ids:
            if numa not in nesting:
                return False
            sockets.update(socket for socket, _ in nesting[numa])
        return len(sockets) <= 1


_INDEX = "allocation index"


@lru_cache(maxsize=16)
def _shared_index(topology: CPUTopology) -> TopologyIndex:
    return TopologyIndex(topology)


def topology_index(topology: CPUTopology) -> TopologyIndex:
    """The index of ``topology``: kept with the topology object once found (the LRU finds
    it by value, which compares whole CPU maps when equal machines are different objects:
    the extender holds one topology per node)."""
    return topology.derived(_INDEX, _shared_index)


def forget_index(topology: CPUTopology) -> None:
    """Drop the machine's index and the answers kept with it, here and in the LRU of equal
    machines: the next take is that of a machine never seen (benches' cold figures)."""
    topology.forget(_INDEX)
    _shared_index.cache_clear()
