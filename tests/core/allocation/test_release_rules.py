"""The static policy's allocation rules that changed between kubelet releases
(core/versions.py ``alloc.*``), as flags of StaticPolicyOptions.

Expected values are the kubelet 1.32.10's own answers (its Go code run on the same input,
bench/diff_kubelet_cpu.py); the newest-release answers are ours, shown to differ.
"""

from __future__ import annotations

from cpumanager.core.allocation.options import StaticPolicyOptions
from cpumanager.core.allocation.take import take_by_topology
from cpumanager.core.topology import CPUInfo, CPUTopology
from tests.builders import cpus

# One socket, one NUMA node, five cores of two threads (CPU c and c + 5 are siblings);
# cores 0-2 share uncore cache 0, cores 3-4 cache 1.
UNCORE = CPUTopology(
    CPUInfo(core + 5 * thread, core, 0, 0, 0 if core < 3 else 1)
    for core in range(5)
    for thread in range(2)
)

# Two sockets, four NUMA nodes of four single-thread cores: node n holds n, n+4, n+8, n+12
# and sits on socket n % 2 (nodes 0 and 2 share socket 0).
CROSSED = CPUTopology(CPUInfo(cpu, cpu, cpu % 2, cpu % 4, cpu % 4) for cpu in range(16))

UNCORE_1_32 = StaticPolicyOptions(prefer_align_cpus_by_uncorecache=True, uncore_odd_requests=False)
UNCORE_NEWEST = StaticPolicyOptions(prefer_align_cpus_by_uncorecache=True)


def test_uncore_partial_step_of_1_32_never_fits_an_odd_request() -> None:
    """1.32 takes need // 2 cores of a cache: 0 cores for 1 CPU, 1 core for 3 CPUs, never
    exactly the request, so whole cores and single CPUs decide."""
    # the reservation of one CPU (takeByTopology over every CPU)
    assert take_by_topology(UNCORE, UNCORE.all_cpus, 1, UNCORE_1_32) == cpus("0")
    assert take_by_topology(UNCORE, UNCORE.all_cpus, 1, UNCORE_NEWEST) == cpus("3")
    # a 3-CPU container with CPU 0 reserved
    free = cpus("1-9")
    assert take_by_topology(UNCORE, free, 3, UNCORE_1_32) == cpus("1,5-6")
    assert take_by_topology(UNCORE, free, 3, UNCORE_NEWEST) == cpus("3-4,8")


def test_uncore_partial_step_of_either_release_takes_an_even_request() -> None:
    """An even request takes the same cores either way (the kubelet 1.32's answer)."""
    free = cpus("2-4,7-9")
    assert take_by_topology(UNCORE, free, 2, UNCORE_1_32) == cpus("2,7")
    assert take_by_topology(UNCORE, free, 2, UNCORE_NEWEST) == cpus("2,7")


def test_distributed_search_of_1_32_ignores_align_by_socket() -> None:
    """6 CPUs over two NUMA nodes: 1.32 takes the first balanced pair (0, 1: two sockets);
    from 1.37 a pair inside one socket (0, 2) comes first."""
    free = cpus("0-14")
    released = StaticPolicyOptions(
        distribute_cpus_across_numa=True, align_by_socket=True, distributed_by_socket=False
    )
    newest = StaticPolicyOptions(distribute_cpus_across_numa=True, align_by_socket=True)
    assert take_by_topology(CROSSED, free, 6, released) == cpus("0-1,4-5,8-9")
    assert take_by_topology(CROSSED, free, 6, newest) == cpus("0,2,4,6,8,10")


# Two sockets of unequal size on one NUMA node: socket 0 = CPUs 0-1, socket 1 = CPU 2, so
# the declared CPUsPerSocket is 3 // 2 = 1.
UNEVEN = CPUTopology([CPUInfo(0, 0, 0, 0, 0), CPUInfo(1, 1, 0, 0, 0), CPUInfo(2, 2, 1, 0, 0)])


def test_free_socket_test_before_1_37_uses_the_declared_size() -> None:
    """With CPU 0 unavailable, socket 0 has one free CPU = CPUsPerSocket: kubelets before
    1.37 call it free and take all of it, CPU 0 included (the kubelet 1.32's answer)."""
    released = StaticPolicyOptions(real_free_sizes=False)
    assert take_by_topology(UNEVEN, cpus("1-2"), 2, released) == cpus("0-1")
    assert take_by_topology(UNEVEN, cpus("1-2"), 2, StaticPolicyOptions()) == cpus("1-2")
