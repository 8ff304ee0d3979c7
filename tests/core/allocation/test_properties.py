"""Properties of take-by-topology over random machines, free sets, counts and options."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from cpumanager.core.allocation import StaticPolicyOptions, take_by_topology
from cpumanager.core.allocation.distribute import take_distributed
from cpumanager.core.allocation.index import topology_index
from cpumanager.core.allocation.packed import take_packed
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.topology import CPUTopology
from cpumanager.errors import NotEnoughCPUsError
from cpumanager.presets import synthetic


@st.composite
def machines(draw: st.DrawFn) -> CPUTopology:
    cores = draw(st.sampled_from([1, 2, 3, 4, 6]))
    return synthetic(
        sockets=draw(st.integers(1, 2)),
        numa_per_socket=draw(st.integers(1, 4)),
        cores_per_numa=cores,
        threads=draw(st.integers(1, 2)),
        l3_per_numa=draw(st.sampled_from([d for d in (1, 2, 3) if cores % d == 0])),
    )


OPTION_SETS = [
    StaticPolicyOptions(),
    StaticPolicyOptions(full_pcpus_only=True),
    StaticPolicyOptions(distribute_cpus_across_cores=True),
    StaticPolicyOptions(prefer_align_cpus_by_uncorecache=True),
    StaticPolicyOptions(prefer_align_cpus_by_uncorecache=True, full_pcpus_only=True),
    StaticPolicyOptions(distribute_cpus_across_numa=True),
    StaticPolicyOptions(distribute_cpus_across_numa=True, full_pcpus_only=True),
    StaticPolicyOptions(distribute_cpus_across_numa=True, align_by_socket=True),
    StaticPolicyOptions(
        distribute_cpus_across_numa=True, full_pcpus_only=True, align_by_socket=True
    ),
]


@st.composite
def requests(draw: st.DrawFn) -> tuple[CPUTopology, CPUSet, int, StaticPolicyOptions]:
    topology = draw(machines())
    chosen = draw(
        st.lists(st.booleans(), min_size=len(topology.all_cpus), max_size=len(topology.all_cpus))
    )
    available = CPUSet(cpu for cpu, keep in zip(topology.all_cpus, chosen, strict=True) if keep)
    count = draw(st.integers(0, len(available)))
    return topology, available, count, draw(st.sampled_from(OPTION_SETS))


@settings(max_examples=300, deadline=None)
@given(requests())
def test_takes_exactly_count_cpus_from_available(
    request: tuple[CPUTopology, CPUSet, int, StaticPolicyOptions],
) -> None:
    topology, available, count, options = request
    cpus = take_by_topology(topology, available, count, options)
    assert cpus <= available
    assert len(cpus) == count


@st.composite
def many_node_requests(draw: st.DrawFn) -> tuple[CPUTopology, CPUSet, int]:
    """Up to 12 small NUMA nodes with uneven free counts: many ties and many classes."""
    topology = synthetic(
        sockets=draw(st.integers(1, 2)),
        numa_per_socket=draw(st.integers(2, 6)),
        cores_per_numa=draw(st.integers(1, 3)),
        threads=draw(st.integers(1, 2)),
    )
    taken = draw(st.sets(st.sampled_from(sorted(topology.all_cpus)), max_size=6))
    available = topology.all_cpus - CPUSet(taken)
    return topology, available, draw(st.integers(0, len(available)))


def _same_as_literal(
    topology: CPUTopology, available: CPUSet, count: int, *, group: int, align: bool, fix: bool
) -> None:
    """The representative search (default) against the literal walk of every combination."""
    ix = topology_index(topology)
    kwargs = {"group": group, "align_by_socket": align, "combination_fix": fix}
    fast = take_distributed(ix, available.bits, count, **kwargs)  # type: ignore[arg-type]
    literal = take_distributed(ix, available.bits, count, literal=True, **kwargs)  # type: ignore[arg-type]
    assert fast == literal


@settings(max_examples=300, deadline=None)
@given(requests(), st.sampled_from([1, 2]), st.booleans(), st.booleans())
def test_memoized_distribution_equals_literal_evaluation(
    request: tuple[CPUTopology, CPUSet, int, StaticPolicyOptions],
    group: int,
    align: bool,
    fix: bool,
) -> None:
    topology, available, count, _ = request
    _same_as_literal(topology, available, count, group=group, align=align, fix=fix)


@settings(max_examples=150, deadline=None)
@given(many_node_requests(), st.sampled_from([1, 2]), st.booleans(), st.booleans())
def test_representative_search_equals_literal_walk_on_many_nodes(
    request: tuple[CPUTopology, CPUSet, int], group: int, align: bool, fix: bool
) -> None:
    topology, available, count = request
    _same_as_literal(topology, available, count, group=group, align=align, fix=fix)


@settings(max_examples=100, deadline=None)
@given(requests())
def test_take_is_deterministic(
    request: tuple[CPUTopology, CPUSet, int, StaticPolicyOptions],
) -> None:
    topology, available, count, options = request
    first = take_by_topology(topology, available, count, options)
    assert take_by_topology(topology, available, count, options) == first


@settings(max_examples=300, deadline=None)
@given(requests(), st.booleans(), st.booleans())
def test_untraced_packing_takes_what_the_traced_steps_take(
    request: tuple[CPUTopology, CPUSet, int, StaticPolicyOptions], one_node: bool, spread: bool
) -> None:
    """Without a trace the packed steps batch their takes and skip work; with one they go
    CPU by CPU. Half the cases ask for every free CPU of one NUMA node (a shortcut)."""
    topology, available, count, _ = request
    ix = topology_index(topology)
    bits = available.bits
    if one_node:
        node = topology.cpu_numa_ids()[count % len(topology.cpu_numa_ids())]
        bits &= topology.cpus_in_numa_nodes([node]).bits
        count = bits.bit_count()

    def run(trace: list[str] | None) -> int | str:
        try:
            return take_packed(ix, bits, count, spread=spread, trace=trace)
        except NotEnoughCPUsError as error:
            return error.message

    assert run(None) == run([])
