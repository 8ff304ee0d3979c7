"""CPU topology hints for a request of ``count`` exclusive CPUs (kubelet parity).

Every non-empty subset of NUMA nodes (in the kubelet's iteration order) that can hold the
request from ``available`` plus ``reusable`` CPUs, and that contains every reusable CPU,
becomes a hint. Preferred are the hints whose node count equals the *minimal affinity*: the
fewest nodes whose **total** CPUs (free or not) could ever hold the request. With
align-by-socket, hints spanning the minimal number of sockets are preferred too.

Only NUMA nodes that have CPUs take part: CPU-less nodes (HBM, CXL, GPU memory) never widen
a CPU hint.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from types import MappingProxyType

from cpumanager.core.bitmask import iterate_masks
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.hints.hint import TopologyHint
from cpumanager.core.hints.source import CapacityHintSource
from cpumanager.core.kept import kept_answer
from cpumanager.core.topology import CPUTopology

__all__ = [
    "ANSWERS_LIMIT",
    "TABLE_NODES",
    "MaskTable",
    "cpu_hint_source",
    "generate_cpu_hints",
    "mask_table",
]

# Up to this many NUMA nodes with CPUs, the subsets are tabled once per topology (255
# entries at 8 nodes, the most the kubelet lists); past it hints are computed directly.
TABLE_NODES = 8
# Hints are a pure function of the machine, the free and reusable CPUs, the count and
# align-by-socket: answers are kept with the machine's table, at most this many.
ANSWERS_LIMIT = 4096


def generate_cpu_hints(
    topology: CPUTopology,
    *,
    available: CPUSet,
    reusable: CPUSet,
    count: int,
    align_by_socket: bool = False,
) -> tuple[TopologyHint, ...]:
    """All feasible hints in the kubelet's order (possibly empty: no placement)."""
    table = mask_table(topology)
    if table is None:
        return _generate_cpu_hints(
            topology,
            available=available,
            reusable=reusable,
            count=count,
            align_by_socket=align_by_socket,
        )
    key = (available.bits, reusable.bits, count, align_by_socket)
    return kept_answer(
        table.answers,
        key,
        lambda: _tabled_hints(table, available, reusable, count, align_by_socket),
        ANSWERS_LIMIT,
    )


def _tabled_hints(
    table: MaskTable, available: CPUSet, reusable: CPUSet, count: int, align_by_socket: bool
) -> tuple[TopologyHint, ...]:
    min_affinity = table.min_affinity(count)
    min_sockets = table.min_sockets(min_affinity) if align_by_socket else None
    reuse = reusable.bits
    need = count - reuse.bit_count()
    free = available.bits
    return tuple(
        [
            yes if size == min_affinity or sockets == min_sockets else no
            for cpus, size, sockets, yes, no in table.rows
            if not reuse & ~cpus and (free & cpus).bit_count() >= need
        ]
    )


@dataclass(frozen=True, slots=True)
class MaskEntry:
    """One subset of the CPU NUMA nodes: its CPUs, node and socket counts, and its hints."""

    cpus: int
    size: int
    total: int
    sockets: int
    preferred: TopologyHint
    not_preferred: TopologyHint


@dataclass(frozen=True, slots=True)
class MaskTable:
    """What CPU hints read of a topology, whatever the request: every non-empty subset of
    the NUMA nodes with CPUs, in the kubelet's order (fewer nodes first)."""

    entries: tuple[MaskEntry, ...]
    node_count: int
    numa_per_socket: int  # 0: align-by-socket never prefers by socket count
    # the entries as plain tuples (cpus, size, sockets, preferred, not preferred): the
    # per-request loop unpacks them faster than it reads attributes
    rows: tuple[tuple[int, int, int, TopologyHint, TopologyHint], ...] = ()
    cpus_of: Mapping[int, int] = field(default_factory=dict)  # mask bits -> its CPUs' bits
    # generate_cpu_hints' answers on this machine: (free, reusable, count, align-by-socket)
    # -> the hints (bounded; the table is shared by equal machines)
    answers: dict[tuple[int, int, int, bool], tuple[TopologyHint, ...]] = field(
        default_factory=dict, compare=False, hash=False, repr=False
    )

    def min_affinity(self, count: int) -> int:
        """Fewest nodes whose total CPUs (free or not) could hold ``count``."""
        for entry in self.entries:
            if entry.total >= count:
                return entry.size
        return self.node_count

    def min_sockets(self, min_affinity: int) -> int | None:
        """Sockets an align-by-socket preferred hint spans (None: no such rule)."""
        per_socket = self.numa_per_socket
        return -(-min_affinity // per_socket) if per_socket else None


def mask_table(topology: CPUTopology) -> MaskTable | None:
    """The topology's :class:`MaskTable`, built once per machine (equal machines share it,
    through a small LRU keyed by the topology value) and kept with the topology; None past
    ``TABLE_NODES`` NUMA nodes with CPUs (2^N entries: hints are computed directly)."""
    return topology.derived("cpu-hint-masks", _shared_mask_table)


@lru_cache(maxsize=16)
def _shared_mask_table(topology: CPUTopology) -> MaskTable | None:
    return _build_mask_table(topology)


def _build_mask_table(topology: CPUTopology) -> MaskTable | None:
    node_ids = topology.cpu_numa_ids()
    if len(node_ids) > TABLE_NODES:
        return None
    node_cpus = {node: topology.cpus_in_numa_nodes((node,)).bits for node in node_ids}
    entries = []
    for mask in iterate_masks(node_ids):
        cpus = 0
        for node in mask:
            cpus |= node_cpus[node]
        sockets = len(topology.sockets_in_numa_nodes(mask.ids()))
        entries.append(
            MaskEntry(
                cpus,
                mask.count(),
                cpus.bit_count(),
                sockets,
                TopologyHint(mask, True),
                TopologyHint(mask, False),
            )
        )
    per_socket = 0
    if topology.num_sockets:
        per_socket = topology.num_numa_nodes // topology.num_sockets
    rows = tuple((e.cpus, e.size, e.sockets, e.preferred, e.not_preferred) for e in entries)
    cpus_of = MappingProxyType({e.preferred.mask.bits: e.cpus for e in entries if e.preferred.mask})
    return MaskTable(tuple(entries), len(node_ids), per_socket, rows, cpus_of)


def _generate_cpu_hints(
    topology: CPUTopology,
    *,
    available: CPUSet,
    reusable: CPUSet,
    count: int,
    align_by_socket: bool = False,
) -> tuple[TopologyHint, ...]:
    """:func:`generate_cpu_hints` without the table (many NUMA nodes; the tests' oracle)."""
    node_ids = topology.cpu_numa_ids()
    node_cpus = {node: topology.cpus_in_numa_nodes((node,)).bits for node in node_ids}
    min_affinity = len(node_ids)
    candidates = []
    for mask in iterate_masks(node_ids):
        cpus_bits = 0
        for node in mask:
            cpus_bits |= node_cpus[node]
        if cpus_bits.bit_count() >= count:
            min_affinity = min(min_affinity, mask.count())
        if reusable.bits & ~cpus_bits:
            continue
        if len(reusable) + (available.bits & cpus_bits).bit_count() < count:
            continue
        candidates.append(mask)
    hints = []
    for mask in candidates:
        preferred = mask.count() == min_affinity
        if align_by_socket and _socket_aligned(topology, mask.ids(), min_affinity):
            preferred = True
        hints.append(TopologyHint(mask, preferred))
    return tuple(hints)


def _socket_aligned(topology: CPUTopology, node_ids: tuple[int, ...], min_affinity: int) -> bool:
    if topology.num_sockets == 0:
        return False
    per_socket = topology.num_numa_nodes // topology.num_sockets
    if per_socket == 0:
        return False
    min_sockets = -(-min_affinity // per_socket)
    return len(topology.sockets_in_numa_nodes(node_ids)) == min_sockets


def _min_affinity(totals: list[int], count: int) -> int:
    """Fewest nodes whose total CPUs (free or not) could hold ``count``; all nodes if none."""
    have = 0
    for used, total in enumerate(sorted(totals, reverse=True), start=1):
        have += total
        if have >= count:
            return used
    return len(totals)


def cpu_hint_source(
    topology: CPUTopology,
    *,
    available: CPUSet,
    reusable: CPUSet,
    count: int,
    align_by_socket: bool = False,
) -> CapacityHintSource:
    """The same hints as :func:`generate_cpu_hints`, as a rule (O(CPUs), not O(2^nodes)).

    A mask is a hint iff it contains the node of every reusable CPU and
    ``|reusable| + free CPUs of its nodes >= count``; it is preferred iff it has
    ``min_affinity`` nodes (or, with align-by-socket, spans the minimal number of sockets).
    Only nodes with CPUs are in the universe, so CPU-less nodes never widen a CPU hint.
    """
    node_ids = topology.cpu_numa_ids()
    totals: dict[int, int] = {}
    free: dict[int, int] = {}
    for node in node_ids:
        cpus = topology.cpus_in_numa_nodes((node,)).bits
        totals[node] = cpus.bit_count()
        free[node] = (available.bits & cpus).bit_count()
    min_affinity = _min_affinity([totals[node] for node in node_ids], count)
    required = 0
    covered = 0
    for node in node_ids:
        cpus = topology.cpus_in_numa_nodes((node,)).bits
        if reusable.bits & cpus:
            required |= 1 << node
            covered |= reusable.bits & cpus
    universe = 0
    for node in node_ids:
        universe |= 1 << node
    aligned: int | None = None
    node_sockets: dict[int, int] = {}
    if align_by_socket and topology.num_sockets:
        per_socket = topology.num_numa_nodes // topology.num_sockets
        if per_socket:
            aligned = -(-min_affinity // per_socket)
            for node in node_ids:
                for socket in topology.sockets_in_numa_nodes((node,)):
                    node_sockets[node] = node_sockets.get(node, 0) | (1 << socket)
    return CapacityHintSource(
        universe=universe,
        free=free,
        need=count,
        preferred_size=min_affinity,
        base=len(reusable),
        required=required,
        impossible=covered != reusable.bits,
        node_order=node_ids,
        node_sockets=node_sockets,
        aligned_sockets=aligned,
        unit="CPUs",
    )
