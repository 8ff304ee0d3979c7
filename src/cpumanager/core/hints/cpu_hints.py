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

from cpumanager.core.bitmask import iterate_masks
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.hints.hint import TopologyHint
from cpumanager.core.topology import CPUTopology

__all__ = ["generate_cpu_hints"]


def generate_cpu_hints(
    topology: CPUTopology,
    *,
    available: CPUSet,
    reusable: CPUSet,
    count: int,
    align_by_socket: bool = False,
) -> tuple[TopologyHint, ...]:
    """All feasible hints in the kubelet's order (possibly empty: no placement)."""
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
