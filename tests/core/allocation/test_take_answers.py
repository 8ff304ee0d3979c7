"""take_by_topology keeps its answers per machine: a kept answer is the one a fresh take
gives (with a trace nothing is kept), for the machine it was taken on and equal ones."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from cpumanager.core.allocation import StaticPolicyOptions, take_by_topology
from cpumanager.core.allocation import take as take_module
from cpumanager.core.allocation.index import topology_index
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.topology import CPUTopology
from cpumanager.errors import NotEnoughCPUsError
from cpumanager.presets import synthetic
from tests.core.allocation.test_properties import OPTION_SETS, requests
from tests.core.twins import equal_machine


def _fresh(
    topology: CPUTopology, available: CPUSet, count: int, options: StaticPolicyOptions
) -> CPUSet | None:
    try:
        bits = take_module._take(topology_index(topology), available, count, options, None)
    except NotEnoughCPUsError:
        return None
    return CPUSet.from_bits(bits)


@settings(max_examples=200, deadline=None)
@given(requests(), st.integers(-1, 2))
def test_kept_answers_equal_fresh_takes(
    request: tuple[CPUTopology, CPUSet, int, StaticPolicyOptions], extra: int
) -> None:
    topology, available, count, _ = request
    count = max(0, count + extra)  # sometimes more than available: refused, never kept
    for options in OPTION_SETS:  # one machine, free set and count: answers per options
        fresh = _fresh(topology, available, count, options)
        for machine in (topology, equal_machine(topology), topology):
            try:
                kept: CPUSet | None = take_by_topology(machine, available, count, options)
            except NotEnoughCPUsError:
                kept = None
            assert kept == fresh
            if fresh is not None:
                traced: list[str] = []
                assert take_by_topology(machine, available, count, options, trace=traced) == fresh
                assert traced or count == 0  # a traced take runs the steps


def test_the_answers_kept_per_machine_are_bounded() -> None:
    machine = synthetic(sockets=1, numa_per_socket=1, cores_per_numa=8, threads=2)
    answers = topology_index(machine).answers
    options = StaticPolicyOptions()
    for bits in range(1, take_module.ANSWERS_LIMIT + 10):
        take_by_topology(machine, CPUSet.from_bits(bits), 1, options)
    assert 0 < len(answers) <= take_module.ANSWERS_LIMIT
