"""take_by_topology: the one entry point that picks the kubelet's algorithm for the options.

* distribute-cpus-across-numa: the distributed algorithm, in groups of CPUs-per-core with
  full-pcpus-only (else single CPUs), socket-aware with align-by-socket;
* otherwise the packed algorithm, with the uncore-cache step when
  prefer-align-cpus-by-uncorecache is on;
* distribute-cpus-across-cores switches either one to the spread CPU order.

``count <= 0`` returns the empty set before anything else; asking for more CPUs than
``available`` holds raises :class:`NotEnoughCPUsError` with the kubelet's text.

The answer is a pure function of the machine, the available CPUs, the count and the
options, so answers given without a trace are kept with the machine's index (shared by
equal machines, bounded): nodes of one shape often take from the same free CPUs (a whole
free NUMA node), and the extender checks thousands of them. Refusals are not kept.
"""

from __future__ import annotations

from cpumanager.core.allocation.distribute import take_distributed
from cpumanager.core.allocation.index import TopologyIndex, topology_index
from cpumanager.core.allocation.options import StaticPolicyOptions
from cpumanager.core.allocation.packed import take_packed
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.kept import kept_answer
from cpumanager.core.topology import CPUTopology

__all__ = ["ANSWERS_LIMIT", "take_by_topology"]

ANSWERS_LIMIT = 4096  # answers kept per machine; the table starts over when full


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
    if trace is not None:
        return CPUSet.from_bits(_take(ix, available, count, options, trace))
    key = (available.bits, count, options)
    found = kept_answer(
        ix.answers, key, lambda: _take(ix, available, count, options, None), ANSWERS_LIMIT
    )
    return CPUSet.from_bits(found)


def _take(
    ix: TopologyIndex,
    available: CPUSet,
    count: int,
    options: StaticPolicyOptions,
    trace: list[str] | None,
) -> int:
    spread = options.distribute_cpus_across_cores
    if options.distribute_cpus_across_numa:
        group = ix.cpus_per_core if options.full_pcpus_only else 1
        bits = take_distributed(
            ix,
            available.bits,
            count,
            group=group,
            spread=spread,
            align_by_socket=options.align_by_socket and options.distributed_by_socket,
            cap_shares=options.distributed_by_socket,
            declared_free=not options.real_free_sizes,
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
            uncore_odd=options.uncore_odd_requests,
            declared_free=not options.real_free_sizes,
            trace=trace,
        )
    return bits
