"""The exact merge against every kubelet table: merge cases, compare steps, bnp, filtering."""

from __future__ import annotations

import pytest

from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.hints.hint import NO_PREFERENCE, TopologyHint
from cpumanager.core.merge.exact import (
    HintMerger,
    filter_providers_hints,
    filter_single_numa_hints,
    max_of_min_affinity_counts,
    merge_exact,
    merge_permutation,
)
from tests.core.merge._vectors import DATA, MERGE_CASES, MergeCase, hint, numa_info


def _raw(h: dict | None) -> tuple[int | None, bool]:
    parsed = hint(h)
    return (None if parsed.mask is None else parsed.mask.bits, parsed.preferred)


@pytest.mark.parametrize("case", MERGE_CASES, ids=lambda c: c.name)
def test_exact_merge_matches_kubelet(case: MergeCase) -> None:
    got = merge_exact(case.policy, case.numa, case.providers, prefer_closest=case.prefer_closest)
    assert got == (case.expected, case.admit)


@pytest.mark.parametrize(
    "case", DATA["compare_cases"], ids=lambda c: f"{c['description']}-{c['expected']}"
)
def test_compare_step(case: dict) -> None:
    merger = HintMerger(
        numa_info("four"), (), closest=False, bnp=case["best_non_preferred_affinity_count"]
    )
    current = None if case["current"] is None else _raw(case["current"])
    candidate = _raw(case["candidate"])
    kept = merger.compare(current, candidate)
    assert kept is (candidate if case["expected"] == "candidate" else current)


@pytest.mark.parametrize("case", DATA["max_of_min_affinity_counts"], ids=str)
def test_max_of_min_affinity_counts(case: dict) -> None:
    lists = [[_raw(h) for h in hints] for hints in case["hints"]]
    assert max_of_min_affinity_counts(lists) == case["expected"]


@pytest.mark.parametrize("case", DATA["filter_single_numa_hints"], ids=lambda c: c["description"])
def test_filter_single_numa_hints(case: dict) -> None:
    lists = [[_raw(h) for h in hints] for hints in case["input"]]
    expected = [[_raw(h) for h in hints] for hints in case["expected"]]
    got = filter_single_numa_hints(lists)
    assert [g for g in got if g] == [e for e in expected if e]
    assert len(got) == len(lists)


def test_filter_providers_maps_absence_the_kubelet_way() -> None:
    h0 = TopologyHint(NUMAMask.of(0), True)
    lists = filter_providers_hints([None, {}, {"a": NO_PREFERENCE, "b": (), "c": (h0,)}])
    assert [hints for _tag, hints in lists] == [
        [(None, True)],
        [(None, True)],
        [(None, True)],
        [(None, False)],
        [(1, True)],
    ]
    assert [tag for tag, _ in lists][2:] == [(2, "a"), (2, "b"), (2, "c")]


@pytest.mark.parametrize(
    ("perm", "expected"),
    [
        ([], (0b1111, True)),
        ([(0b1, True), (0b1, True)], (0b1, True)),
        ([(0b1, True), (0b11, True)], (0b1, False)),  # masks differ: not preferred
        ([(None, True), (0b10, True)], (0b10, True)),  # nil does not count as a mask
        ([(0b10, True), (None, False)], (0b10, False)),
        ([(0b10000, True)], (0, True)),  # outside the machine: empty AND
    ],
)
def test_merge_permutation(perm: list, expected: tuple) -> None:
    assert merge_permutation(0b1111, perm) == expected


def test_no_providers_gives_default_preferred() -> None:
    numa = numa_info("four")
    assert merge_exact("restricted", numa, []) == (
        TopologyHint(NUMAMask.of(0, 1, 2, 3), True),
        True,
    )


def test_single_numa_node_rewrites_default_to_nil() -> None:
    numa = numa_info("two")
    got = merge_exact("single-numa-node", numa, [{"cpu": NO_PREFERENCE}])
    assert got == (TopologyHint(None, True), True)
    got = merge_exact("single-numa-node", numa, [{"cpu": ()}])
    assert got == (TopologyHint(None, False), False)
