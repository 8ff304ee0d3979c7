"""fast == exact on generated inputs up to 8 NUMA nodes: every policy, with and without
prefer-closest-numa-nodes, random (possibly asymmetric) distance matrices, explicit hint
lists (nil, empty, masks reaching outside the machine) and implicit capacity sources (one
need, or several needs with extra hints as the memory manager gives them).

The merge itself does not know about scopes: container and pod scope only change which
hints the providers return, so covering all hint shapes covers both scopes.
"""

from __future__ import annotations

import math
import os
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.hints.hint import NO_PREFERENCE, TopologyHint
from cpumanager.core.hints.source import CapacityHintSource, MultiCapacityHintSource
from cpumanager.core.merge.exact import AnyProviderHints, filter_providers_hints, merge_exact
from cpumanager.core.merge.fast import merge_fast
from cpumanager.core.merge.options import NUMAInfo

POLICIES = ["none", "best-effort", "restricted", "single-numa-node"]
MAX_PERMUTATIONS = 20_000


@st.composite
def numa_infos(draw: st.DrawFn) -> NUMAInfo:
    ids = sorted(draw(st.sets(st.integers(0, 9), min_size=1, max_size=8)))
    top = max(ids) + 1
    choices = st.sampled_from([11, 12, 13, 20, 21, 30, 32])
    rows = {a: [10 if a == b else draw(choices) for b in range(top)] for a in ids}
    return NUMAInfo.of(ids, rows)


def _masks(numa: NUMAInfo) -> st.SearchStrategy[int]:
    default = numa.default_bits
    spill = 1 << (max(numa.nodes) + 1)
    return st.integers(1, default).map(lambda bits: bits & default or bits) | st.just(
        spill | (default & 1)
    )


@st.composite
def explicit_hints(draw: st.DrawFn, numa: NUMAInfo) -> tuple[TopologyHint, ...]:
    items = draw(
        st.lists(st.tuples(st.none() | _masks(numa), st.booleans()), min_size=1, max_size=6)
    )
    return tuple(
        TopologyHint(None if bits is None else NUMAMask.from_bits(bits), pref)
        for bits, pref in items
    )


@st.composite
def capacity_sources(draw: st.DrawFn, numa: NUMAInfo) -> CapacityHintSource:
    nodes = list(numa.nodes)
    universe_nodes = draw(st.lists(st.sampled_from(nodes), min_size=1, unique=True))
    universe = sum(1 << n for n in universe_nodes)
    free = {n: draw(st.integers(0, 4)) for n in universe_nodes}
    required = 0
    if draw(st.booleans()):
        required = 1 << draw(st.sampled_from(universe_nodes))
    return CapacityHintSource(
        universe=universe,
        free=free,
        need=draw(st.integers(1, 10)),
        preferred_size=draw(st.integers(1, len(universe_nodes))),
        base=draw(st.integers(0, 2)),
        required=required,
        node_order=tuple(sorted(universe_nodes)),
    )


@st.composite
def multi_capacity_sources(draw: st.DrawFn, numa: NUMAInfo) -> MultiCapacityHintSource:
    """Several needs at once plus extra hints (the memory manager's shape)."""
    nodes = list(numa.nodes)
    universe_nodes = draw(st.lists(st.sampled_from(nodes), unique=True))
    dims = draw(st.integers(1, 3))
    free = {n: tuple(draw(st.integers(0, 4)) for _ in range(dims)) for n in universe_nodes}
    family = MultiCapacityHintSource(
        universe=sum(1 << n for n in universe_nodes),
        free=free,
        needs=tuple(draw(st.integers(0, 8)) for _ in range(dims)),
        preferred_size=draw(st.integers(1, len(nodes))),
        node_order=tuple(nodes),
    )
    default = numa.default_bits
    extra_bits = draw(st.lists(st.integers(1, default), max_size=3, unique=True))
    extras = tuple(
        TopologyHint(NUMAMask.from_bits(bits & default), draw(st.booleans()))
        for bits in sorted(extra_bits)
        if bits & default and not family.feasible(bits & default)
    )
    unique = {h.mask: h for h in extras}
    return replace(family, extra_hints=tuple(unique.values()))


def resource_hints(numa: NUMAInfo) -> st.SearchStrategy[object]:
    return st.one_of(
        st.just(NO_PREFERENCE),
        st.just(()),
        explicit_hints(numa),
        explicit_hints(numa),
        capacity_sources(numa),
        multi_capacity_sources(numa),
    )


@st.composite
def merge_inputs(draw: st.DrawFn) -> tuple[str, NUMAInfo, list[AnyProviderHints], bool]:
    numa = draw(numa_infos())
    providers: list[AnyProviderHints] = []
    for index in range(draw(st.integers(0, 4))):
        if draw(st.integers(0, 9)) == 0:
            providers.append(None)
            continue
        count = draw(st.integers(1, 2))
        providers.append(
            {f"r{index}.{k}": draw(resource_hints(numa)) for k in range(count)}  # type: ignore[misc]
        )
    size = math.prod(len(hints) for _tag, hints in filter_providers_hints(providers))
    assume(size <= MAX_PERMUTATIONS)
    return draw(st.sampled_from(POLICIES)), numa, providers, draw(st.booleans())


def _check(policy: str, numa: NUMAInfo, providers: list[AnyProviderHints], closest: bool) -> None:
    expected = merge_exact(policy, numa, providers, prefer_closest=closest)
    for limit in (10, 0):
        got = merge_fast(policy, numa, providers, prefer_closest=closest, expand_limit=limit)
        assert got == expected, (limit, policy, closest)


_HEALTH = [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large]


@settings(max_examples=400, deadline=None, suppress_health_check=_HEALTH)
@given(merge_inputs())
def test_fast_equals_exact(case: tuple[str, NUMAInfo, list[AnyProviderHints], bool]) -> None:
    _check(*case)


@pytest.mark.slow
@pytest.mark.skipif(
    not os.environ.get("CPUMANAGER_SLOW"), reason="long fuzzer: set CPUMANAGER_SLOW=1 to run it"
)
@settings(max_examples=5000, deadline=None, suppress_health_check=_HEALTH)
@given(merge_inputs())
def test_fast_equals_exact_long(case: tuple[str, NUMAInfo, list[AnyProviderHints], bool]) -> None:
    _check(*case)
