"""The prefer-closest class search inside the whole merge: fast == exact up to 8 NUMA
nodes, and class search == branch and bound (``class_limit=0``) on larger machines.

Machines have distances constant per pair of distance classes (symmetric or not,
sometimes perturbed so that some classes break up), CPUs randomly taken (fragmentation),
and several providers: the CPU manager's rule, device-like capacity rules, explicit lists.
"""

from __future__ import annotations

import math

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from cpumanager.core.cpuset import CPUSet
from cpumanager.core.hints.cpu_hints import cpu_hint_source
from cpumanager.core.hints.source import CapacityHintSource
from cpumanager.core.merge.exact import AnyProviderHints, filter_providers_hints, merge_exact
from cpumanager.core.merge.fast import FastStats, merge_fast
from cpumanager.core.merge.options import NUMAInfo
from cpumanager.core.topology import CPUTopology
from cpumanager.presets import synthetic
from tests.core.merge.test_differential import MAX_PERMUTATIONS, POLICIES, resource_hints

_HEALTH = [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large]
Case = tuple[str, NUMAInfo, list[AnyProviderHints]]


@st.composite
def machines(draw: st.DrawFn, max_nodes: int) -> tuple[CPUTopology, NUMAInfo]:
    """A synthetic machine whose distances depend on the sockets (plus optional skew)."""
    sockets = draw(st.integers(1, 4))
    per_socket = draw(st.integers(1, max(1, max_nodes // sockets)))
    nodes = sockets * per_socket
    values = st.sampled_from([11, 12, 16, 20, 21, 32])
    table = [[draw(values) for _ in range(sockets)] for _ in range(sockets)]
    if draw(st.booleans()):
        table = [[table[min(a, b)][max(a, b)] for b in range(sockets)] for a in range(sockets)]
    skew = draw(st.none() | st.tuples(st.integers(0, nodes - 1), st.integers(0, nodes - 1)))

    def distance(a: int, b: int) -> int:
        if a == b:
            return 10
        if skew == (a, b):
            return 13
        return table[a // per_socket][b // per_socket]

    topo = synthetic(
        sockets=sockets,
        numa_per_socket=per_socket,
        cores_per_numa=draw(st.integers(1, 3)),
        threads=draw(st.integers(1, 2)),
        distance=distance,
    )
    ids = [node.id for node in topo.numa_nodes]
    rows = {node.id: [node.distances.get(other, 0) for other in ids] for node in topo.numa_nodes}
    return topo, NUMAInfo.of(ids, rows)


def _cpu_source(draw: st.DrawFn, topo: CPUTopology) -> CapacityHintSource:
    cpus = sorted(topo.all_cpus)
    taken = draw(st.sets(st.sampled_from(cpus), max_size=len(cpus) - 1))
    available = CPUSet(c for c in cpus if c not in taken)
    reusable = CPUSet(draw(st.sets(st.sampled_from(cpus), max_size=1)) - taken)
    return cpu_hint_source(
        topo,
        available=available,
        reusable=reusable if draw(st.integers(0, 4)) == 0 else CPUSet(),
        count=draw(st.integers(1, len(cpus))),
        align_by_socket=draw(st.integers(0, 5)) == 0,
    )


def _device_source(draw: st.DrawFn, numa: NUMAInfo) -> CapacityHintSource:
    nodes = list(numa.nodes)
    universe = draw(st.sets(st.sampled_from(nodes), min_size=1))
    return CapacityHintSource(
        universe=sum(1 << n for n in universe),
        free={n: draw(st.integers(0, 2)) for n in universe},
        need=draw(st.integers(1, 4)),
        preferred_size=draw(st.integers(1, len(universe))),
        node_order=tuple(sorted(universe)),
    )


@st.composite
def small_cases(draw: st.DrawFn) -> Case:
    topo, numa = draw(machines(8))
    providers: list[AnyProviderHints] = [{"cpu": _cpu_source(draw, topo)}]
    for index in range(draw(st.integers(0, 2))):
        hints = draw(st.one_of(resource_hints(numa), st.builds(lambda: _device_source(draw, numa))))
        providers.append({f"r{index}": hints})  # type: ignore[dict-item]
    size = math.prod(len(hints) for _tag, hints in filter_providers_hints(providers))
    assume(size <= MAX_PERMUTATIONS)
    return draw(st.sampled_from(POLICIES[1:3])), numa, providers


@settings(max_examples=200, deadline=None, suppress_health_check=_HEALTH)
@given(small_cases())
def test_class_search_merge_equals_exact(case: Case) -> None:
    policy, numa, providers = case
    expected = merge_exact(policy, numa, providers, prefer_closest=True)
    for expand_limit in (10, 0):
        for class_limit in (20_000, 0):
            got = merge_fast(
                policy,
                numa,
                providers,
                prefer_closest=True,
                expand_limit=expand_limit,
                class_limit=class_limit,
            )
            assert got == expected, (expand_limit, class_limit)


@st.composite
def large_cases(draw: st.DrawFn) -> Case:
    topo, numa = draw(machines(14))
    assume(len(numa.nodes) >= 9)
    providers: list[AnyProviderHints] = [{"cpu": _cpu_source(draw, topo)}]
    if draw(st.booleans()):
        providers.append({"device": _device_source(draw, numa)})
    return draw(st.sampled_from(POLICIES[1:3])), numa, providers


@settings(max_examples=60, deadline=None, suppress_health_check=_HEALTH)
@given(large_cases())
def test_class_search_equals_branch_and_bound_past_8_nodes(case: Case) -> None:
    policy, numa, providers = case
    classes = FastStats()
    got = merge_fast(policy, numa, providers, prefer_closest=True, stats=classes)
    expected = merge_fast(policy, numa, providers, prefer_closest=True, class_limit=0)
    assert got == expected
