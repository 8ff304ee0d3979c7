"""take_by_topology: the one entry point that picks the kubelet's algorithm for the options.

* distribute-cpus-across-numa: the distributed algorithm, in groups of CPUs-per-core with
  full-pcpus-only (else single CPUs), socket-aware with align-by-socket;
* otherwise the packed algorithm, with the uncore-cache step when
  prefer-align-cpus-by-uncorecache is on;
* distribute-cpus-across-cores switches either one to the spread CPU order.

``count <= 0`` returns the empty set before anything else; asking for more CPUs than
``available`` holds raises :class:`NotEnoughCPUsError` with the kubelet's text.
"""

from __future__ import annotations

from cpumanager.core.allocation.distribute import take_distributed
from cpumanager.core.allocation.index import topology_index
from cpumanager.core.allocation.options import StaticPolicyOptions
from cpumanager.core.allocation.packed import take_packed
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.topology import CPUTopology

__all__ = ["take_by_topology"]


def take_by_topology(
    topology: CPUTopology,
    available: CPUSet,
    count: int,
    options: StaticPolicyOptions,
    *,
    trace: list[str] | None = None,
) -> CPUSet:
    """The CPUs the kubelet's static policy would pick; ``trace`` collects the steps."""
    ix = topology_index(topology)
    spread = options.distribute_cpus_across_cores
    if options.distribute_cpus_across_numa:
        group = topology.cpus_per_core if options.full_pcpus_only else 1
        bits = take_distributed(
            ix,
            available.bits,
            count,
            group=group,
            spread=spread,
            align_by_socket=options.align_by_socket,
            trace=trace,
            combination_fix=options.distributed_combination_fix,
        )
    else:
        bits = take_packed(
            ix,
            available.bits,
            count,
            spread=spread,
            uncore=options.prefer_align_cpus_by_uncorecache,
            trace=trace,
        )
    return CPUSet.from_bits(bits)
