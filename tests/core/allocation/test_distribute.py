"""distribute-cpus-across-numa: the kubelet's non-terminating input, and the balance score."""

from __future__ import annotations

import pytest

from cpumanager.core.allocation import StaticPolicyOptions, take_by_topology
from cpumanager.core.allocation.balance import balance_score, round_robin
from cpumanager.core.cpuset import CPUSet
from cpumanager.presets import synthetic

DIST_FULL = StaticPolicyOptions(distribute_cpus_across_numa=True, full_pcpus_only=True)


def _issue_machine() -> tuple[object, CPUSet]:
    """One socket, 4 NUMA nodes x 3 cores, siblings c and c+12; CPUs 0,3,6,9 taken."""
    topology = synthetic(sockets=1, numa_per_socket=4, cores_per_numa=3, threads=2)
    return topology, topology.all_cpus - CPUSet.parse("0,3,6,9")


def test_kubelet_loop_would_spin_on_this_input() -> None:
    """Every node keeps 3 free CPUs after the even share of 2; remainder 6 in pairs.

    The kubelet admits the 2-node subset (3 + 3 >= 6 CPUs) but can hand out only one pair
    per node, so its ``for remainder > 0`` never ends. We check whole groups instead.
    """
    after, remainder, group = [3, 3], 6, 2
    assert sum(after) >= remainder  # the kubelet's only test
    assert sum(a // group for a in after) * group < remainder  # ours: skip the subset


def test_issue_input_terminates_with_a_balanced_answer() -> None:
    topology, available = _issue_machine()
    trace: list[str] = []
    cpus = take_by_topology(topology, available, 14, DIST_FULL, trace=trace)  # type: ignore[arg-type]
    assert cpus <= available
    assert len(cpus) == 14
    # whole cores only: every chosen CPU's sibling is chosen too
    assert all((c + 12 if c < 12 else c - 12) in cpus for c in cpus)
    # 2 CPUs from every node, then the remainder pairs on the first three nodes of the order
    assert cpus == CPUSet.parse("1-2,4-5,7-8,10,13-14,16-17,19-20,22")
    assert any("spreading 14 CPUs over NUMA nodes 0,1,2,3" in step for step in trace)


@pytest.mark.parametrize(
    ("values", "score"),
    [([0, 0], 0.0), ([1, 3], 1.0), ([1, 1, 1, 3], 0.866), ([2, 2, 4], 0.943), ([5], 0.0)],
)
def test_balance_score(values: list[int], score: float) -> None:
    assert balance_score(values) == score


def test_round_robin_skips_exhausted_nodes() -> None:
    after = [3, 5, 2]
    round_robin(after, (0, 1, 2), 8, 2)
    assert after == [1, 1, 0]
