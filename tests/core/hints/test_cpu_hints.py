"""The implicit CPU hint rule describes exactly the list the explicit generator returns."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cpumanager.core.bitmask import iterate_masks
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.hints.cpu_hints import (
    ANSWERS_LIMIT,
    TABLE_NODES,
    _generate_cpu_hints,
    cpu_hint_source,
    generate_cpu_hints,
    mask_table,
)
from cpumanager.core.hints.hint import NO_PREFERENCE
from cpumanager.core.hints.source import HintSource, is_hint_source
from cpumanager.core.policy.static import StaticPolicy
from cpumanager.core.topology import CPUTopology
from cpumanager.presets import get_preset, synthetic
from tests.core.twins import equal_machine

MACHINES = {
    "dual-socket-ht": get_preset("topoDualSocketHT"),
    "2s2n3c2t": synthetic(sockets=2, numa_per_socket=2, cores_per_numa=3),
    "1s4n2c1t": synthetic(sockets=1, numa_per_socket=4, cores_per_numa=2, threads=1),
    "2s3n2c2t": synthetic(sockets=2, numa_per_socket=3, cores_per_numa=2),
    "with-cpuless": synthetic(
        sockets=2, numa_per_socket=1, cores_per_numa=2, threads=1, cpuless_memory_bytes=(0, 0)
    ),
}


def _agree(topo: CPUTopology, available: CPUSet, reusable: CPUSet, count: int, align: bool) -> None:
    explicit = generate_cpu_hints(
        topo, available=available, reusable=reusable, count=count, align_by_socket=align
    )
    source = cpu_hint_source(
        topo, available=available, reusable=reusable, count=count, align_by_socket=align
    )
    assert source.explicit() == explicit
    listed = {hint.mask.bits: hint.preferred for hint in explicit if hint.mask is not None}
    for mask in iterate_masks(topo.numa_ids()):
        assert source.feasible(mask.bits) == (mask.bits in listed)
        assert source.preferred(mask.bits) == listed.get(mask.bits, False)
    counts = [hint.mask.count() for hint in explicit if hint.mask is not None]
    assert source.min_size() == min(counts, default=0)
    assert source.universe & ~sum(1 << n for n in topo.cpu_numa_ids()) == 0


@st.composite
def hint_inputs(draw: st.DrawFn) -> tuple[CPUTopology, CPUSet, CPUSet, int, bool]:
    topo = MACHINES[draw(st.sampled_from(sorted(MACHINES)))]
    cpu_ids = sorted(topo.all_cpus)
    free = draw(st.sets(st.sampled_from(cpu_ids)))
    reusable = draw(st.sets(st.sampled_from(cpu_ids), max_size=3)) - free
    if draw(st.integers(0, 19)) == 0:
        reusable = reusable | {max(cpu_ids) + 5}  # a CPU the machine does not have
    count = draw(st.integers(1, len(cpu_ids) + 1))
    return topo, CPUSet(free), CPUSet(reusable), count, draw(st.booleans())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hint_inputs())
def test_implicit_equals_explicit(case: tuple[CPUTopology, CPUSet, CPUSet, int, bool]) -> None:
    _agree(*case)


@pytest.mark.parametrize("count", [1, 2, 5, 12])
def test_cpuless_nodes_never_widen_cpu_hints(count: int) -> None:
    topo = MACHINES["with-cpuless"]
    source = cpu_hint_source(topo, available=topo.all_cpus, reusable=CPUSet(), count=count)
    assert source.universe == 0b11
    for hint in source.explicit():
        assert hint.mask is not None
        assert hint.mask.bits & ~0b11 == 0


def test_implicit_source_at_64_nodes_is_cheap() -> None:
    topo = get_preset("ia64-4s-64n")
    source = cpu_hint_source(topo, available=topo.all_cpus, reusable=CPUSet(), count=10)
    assert source.universe == (1 << 64) - 1
    assert source.preferred_size == 3  # 4 CPUs per node
    assert source.min_size() == 3
    assert source.preferred(0b111)
    assert not source.preferred(0b1111)
    assert source.feasible(0b1111)
    assert not source.feasible(0b11)
    assert source.can_complete(0b1, (1 << 64) - 2, 3)
    assert not source.can_complete(0b1, 0b10, 3)
    assert "needs 10 free CPUs" in source.describe()


def test_reusable_nodes_are_required() -> None:
    topo = MACHINES["1s4n2c1t"]
    # CPUs 0-1 on node 0, 2-3 on node 1, ...; CPU 2 reusable: node 1 in every hint.
    source = cpu_hint_source(topo, available=CPUSet({4, 5}), reusable=CPUSet({2}), count=3)
    assert source.required == 0b10
    assert source.exclusion_cost(1) is None
    assert source.exclusion_cost(2) == (2,)
    assert source.slack() == (0,)
    assert [h.mask.bits for h in source.explicit() if h.mask] == [0b110, 0b111, 0b1110, 0b1111]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hint_inputs())
def test_tabled_hints_equal_the_direct_walk(
    case: tuple[CPUTopology, CPUSet, CPUSet, int, bool],
) -> None:
    topo, available, reusable, count, align = case
    assert mask_table(topo) is not None
    kwargs = {"available": available, "reusable": reusable, "count": count}
    direct = _generate_cpu_hints(topo, **kwargs, align_by_socket=align)
    # computed, then kept with the machine's table (shared by an equal machine): the same
    for machine in (topo, equal_machine(topo), topo):
        assert generate_cpu_hints(machine, **kwargs, align_by_socket=align) == direct
        assert generate_cpu_hints(machine, **kwargs, align_by_socket=not align) == (
            _generate_cpu_hints(topo, **kwargs, align_by_socket=not align)
        )


def test_kept_hints_are_bounded() -> None:
    topo = MACHINES["2s2n3c2t"]
    table = mask_table(topo)
    assert table is not None
    for bits in range(ANSWERS_LIMIT + 5):
        generate_cpu_hints(topo, available=CPUSet.from_bits(bits), reusable=CPUSet(), count=1)
    assert 0 < len(table.answers) <= ANSWERS_LIMIT


def test_mask_table_is_built_once_per_topology_and_not_past_eight_nodes() -> None:
    topo = MACHINES["2s2n3c2t"]
    table = mask_table(topo)
    assert table is mask_table(topo)
    assert table is not None
    assert [entry.size for entry in table.entries] == [1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 4]
    big = synthetic(sockets=2, numa_per_socket=5, cores_per_numa=1, threads=1)
    assert len(big.cpu_numa_ids()) > TABLE_NODES
    assert mask_table(big) is None
    hints = generate_cpu_hints(big, available=big.all_cpus, reusable=CPUSet(), count=2)
    assert hints == _generate_cpu_hints(big, available=big.all_cpus, reusable=CPUSet(), count=2)
    assert len(hints) == 2**10 - 1 - 10  # every mask of two nodes or more


def test_is_hint_source_answers_as_the_protocol_check() -> None:
    topo = MACHINES["2s2n3c2t"]
    rule = cpu_hint_source(topo, available=topo.all_cpus, reusable=CPUSet(), count=2)

    class Structural:  # a rule of another kind: only the Protocol check knows it
        def __getattr__(self, name: str) -> object:
            return (lambda *args: None) if name != "universe" else 1

    values = [rule, (), rule.explicit(), NO_PREFERENCE, Structural(), "x", None]
    for value in values:
        assert is_hint_source(value) == isinstance(value, HintSource), value


@pytest.mark.parametrize("name", sorted(MACHINES))
def test_the_static_policy_reads_aligned_cpus_from_the_table(name: str) -> None:
    topo = MACHINES[name]
    policy = StaticPolicy(topo)
    pools = [topo.all_cpus, CPUSet(sorted(topo.all_cpus)[::3])]
    for mask in iterate_masks(topo.numa_ids()):  # CPU-less nodes included: not tabled
        for pool in pools:
            assert policy.aligned_cpus(mask, pool) == pool & topo.cpus_in_numa_nodes(mask.ids())
