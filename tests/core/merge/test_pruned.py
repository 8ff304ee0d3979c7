"""The branch and bound over explicit lists (merge/pruned.py) against the kubelet's walk.

Random explicit lists on up to 16 NUMA nodes (nil hints, empty lists, empty masks, masks
reaching outside the machine, no-preference answers, absent providers), every policy, with
and without prefer-closest; plus shapes built so that the bound cuts (many lists whose best
AND is found early) and the kubelet's tie rules (equal masks, the running bnp minimum).
"""

from __future__ import annotations

from itertools import combinations

from hypothesis import given, settings
from hypothesis import strategies as st

from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.hints.hint import NO_PREFERENCE, TopologyHint
from cpumanager.core.merge.exact import AnyProviderHints, merge_exact
from cpumanager.core.merge.fast import merge_fast
from cpumanager.core.merge.options import NUMAInfo
from cpumanager.core.merge.pruned import PrunedStats, all_explicit, solve_explicit

POLICIES = ["best-effort", "restricted", "single-numa-node"]


def _hint(bits: int | None, preferred: bool) -> TopologyHint:
    return TopologyHint(None if bits is None else NUMAMask.from_bits(bits), preferred)


@st.composite
def machines(draw: st.DrawFn) -> NUMAInfo:
    size = draw(st.integers(1, 16))
    if draw(st.booleans()):
        ids = list(range(size))
    else:
        ids = sorted(draw(st.sets(st.integers(0, 17), min_size=1, max_size=size)))
    top = max(ids) + 1
    choices = st.sampled_from([11, 12, 20, 21, 30])
    rows = {a: [10 if a == b else draw(choices) for b in range(top)] for a in ids}
    return NUMAInfo.of(ids, rows)


@st.composite
def providers(draw: st.DrawFn, numa: NUMAInfo) -> list[AnyProviderHints]:
    default = numa.default_bits
    spill = 1 << (max(numa.nodes) + 1)
    masks = (
        st.integers(1, default).map(lambda bits: bits & default or bits)
        | st.sampled_from([1 << n for n in numa.nodes])
        | st.just(spill | (default & 1))
        | st.just(0)
    )
    preferred = st.sampled_from([False, False, False, True])
    hint = st.tuples(st.none() | masks, preferred).map(lambda pair: _hint(*pair))
    answer = (
        st.lists(hint, min_size=0, max_size=7).map(tuple)
        | st.just(NO_PREFERENCE)
        | st.lists(hint, min_size=1, max_size=7).map(tuple)
    )
    provider = st.none() | st.dictionaries(
        st.sampled_from(["cpu", "memory", "gpu"]), answer, max_size=2
    )
    return draw(st.lists(provider, min_size=1, max_size=4))


def _permutations(items: list[AnyProviderHints]) -> int:
    total = 1
    for provider in items:
        for hints in (provider or {}).values():
            if isinstance(hints, tuple):
                total *= max(1, len(hints))
    return total


@settings(max_examples=250, deadline=None)
@given(st.data())
def test_same_answer_as_the_walk(data: st.DataObject) -> None:
    numa = data.draw(machines())
    items = data.draw(providers(numa))
    policy = data.draw(st.sampled_from(POLICIES))
    closest = data.draw(st.booleans())
    assert _permutations(items) <= 7**6
    assert all_explicit(items)
    want = merge_exact(policy, numa, items, prefer_closest=closest)
    assert merge_fast(policy, numa, items, prefer_closest=closest) == want


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_many_lists_same_answer_and_cut(data: st.DataObject) -> None:
    """Several long non-preferred lists on 16 nodes: the bound cuts, the answer is the walk's."""
    numa = NUMAInfo.of(list(range(16)))
    default = numa.default_bits
    lists = []
    for _ in range(data.draw(st.integers(2, 3))):
        masks = data.draw(st.lists(st.integers(1, default), min_size=1, max_size=25))
        lists.append({"r": tuple(_hint(bits, False) for bits in masks)})
    policy = data.draw(st.sampled_from(["best-effort", "restricted"]))
    assert merge_fast(policy, numa, lists) == merge_exact(policy, numa, lists)


def test_bound_cuts_the_walk() -> None:
    """Every pair of nodes of 16 in two lists: the walk has 120^2 permutations."""
    numa = NUMAInfo.of(list(range(16)))
    pairs = tuple(_hint((1 << a) | (1 << b), False) for a, b in combinations(range(16), 2))
    triples = tuple(
        _hint((1 << a) | (1 << b) | (1 << c), False) for a, b, c in combinations(range(16), 3)
    )
    items: list[AnyProviderHints] = [{"a": pairs}, {"b": triples}]
    stats = PrunedStats()
    got = solve_explicit("restricted", numa, items, stats=stats)
    assert got == (0b11, False)
    assert (_hint(0b11, False), False) == merge_exact("restricted", numa, items)
    assert stats.visited < 10  # the first pair's walk finds {0, 1}; every other is cut


def test_running_minimum_and_equal_masks() -> None:
    """bnp by the kubelet's running minimum: an empty mask followed by another is unset."""
    numa = NUMAInfo.of(list(range(4)))
    for first in ((0, False), (0b11, False)), ((0b11, False), (0, False)):
        items: list[AnyProviderHints] = [
            {"a": tuple(_hint(bits, pref) for bits, pref in first)},
            {"b": (_hint(0b1, False), _hint(0b111, False), _hint(0b111, True))},
        ]
        for policy in POLICIES:
            assert merge_fast(policy, numa, items) == merge_exact(policy, numa, items)


def test_single_list_reads_the_list_in_place() -> None:
    numa = NUMAInfo.of(list(range(8)))
    hints = tuple(_hint(bits, False) for bits in range(255, 0, -1))
    stats = PrunedStats()
    assert solve_explicit("best-effort", numa, [{"cpu": hints}], stats=stats) == (1, False)
    assert stats.visited == 0
    assert merge_exact("best-effort", numa, [{"cpu": hints}])[0] == _hint(1, False)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_small_machines_with_ties(data: st.DataObject) -> None:
    """Few nodes, many hints: equal counts and equal masks in and across lists."""
    size = data.draw(st.integers(1, 5))
    numa = NUMAInfo.of(
        list(range(size)), {a: [10 + 5 * abs(a - b) for b in range(size)] for a in range(size)}
    )
    default = numa.default_bits
    hint = st.tuples(st.none() | st.integers(0, default), st.sampled_from([False] * 5 + [True]))
    items: list[AnyProviderHints] = [
        {"r": tuple(_hint(*pair) for pair in data.draw(st.lists(hint, min_size=1, max_size=9)))}
        for _ in range(data.draw(st.integers(1, 3)))
    ]
    policy = data.draw(st.sampled_from(POLICIES))
    closest = data.draw(st.booleans())
    want = merge_exact(policy, numa, items, prefer_closest=closest)
    assert merge_fast(policy, numa, items, prefer_closest=closest) == want


def test_no_and_reaches_bnp_every_option_is_walked() -> None:
    """Every AND has one node (below bnp = 3): the bound never cuts a 3-node option, so the
    walk goes past its first rounds to the sorted rest; the answer is still the walk's."""
    numa = NUMAInfo.of(list(range(16)))
    first = tuple(_hint(0b111 << i, False) for i in range(13))
    second = tuple(_hint((1 << i) | (1 << ((i + 7) % 16)) | (1 << ((i + 11) % 16)), False)
                   for i in range(16))  # fmt: skip
    items: list[AnyProviderHints] = [{"a": first}, {"b": second}]
    for policy in ("best-effort", "restricted"):
        assert merge_fast(policy, numa, items) == merge_exact(policy, numa, items)
