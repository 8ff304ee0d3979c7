"""The prefer-closest searches: distance classes, count vectors in sum order, and both
searches against brute force (every mask of the size, best by (sum of distances, bits))."""

from __future__ import annotations

from collections.abc import Callable
from itertools import combinations, product

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cpumanager.core.hints.source import CapacityHintSource, bits_of
from cpumanager.core.merge.classes import (
    Budget,
    distance_classes,
    vector_count,
    vectors_by_sum,
)
from cpumanager.core.merge.closest import (
    branch_and_bound,
    capacity_bound,
    class_search,
    closest_search,
)

Rows = dict[int, list[int]]
_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large]


def _rows(groups: list[list[int]], inner: int = 12, remote: int = 21) -> Rows:
    """Uniform distances inside each group and between groups (node ids 0..n-1)."""
    where = {n: g for g, group in enumerate(groups) for n in group}
    size = len(where)
    return {
        a: [10 if a == b else inner if where[a] == where[b] else remote for b in range(size)]
        for a in range(size)
    }


def _changed(rows: Rows, a: int, b: int, value: int) -> Rows:
    copy = {node: list(row) for node, row in rows.items()}
    copy[a][b] = value
    return copy


TWO_SOCKETS = _rows([[0, 1, 2, 3], [4, 5, 6, 7]])
CLASS_CASES = [
    pytest.param(TWO_SOCKETS, ((0, 1, 2, 3), (4, 5, 6, 7)), id="two uniform sockets"),
    pytest.param(
        TWO_SOCKETS | {n: [*TWO_SOCKETS[n][:4], 32, 32, 32, 32] for n in (0, 1, 2, 3)},
        ((0, 1, 2, 3), (4, 5, 6, 7)),
        id="asymmetric between sockets (32 out, 21 back)",
    ),
    pytest.param(
        _changed(TWO_SOCKETS, 1, 2, 13), ((0, 3), (1,), (2,), (4, 5, 6, 7)), id="one skewed pair"
    ),
    pytest.param(
        _changed(TWO_SOCKETS, 5, 5, 11), ((0, 1, 2, 3), (4, 6, 7), (5,)), id="own diagonal"
    ),
    pytest.param(_rows([[0], [1], [2]]), ((0, 1, 2),), id="all remote: one class"),
    pytest.param(
        {0: [10, 11, 12], 1: [11, 10, 13], 2: [12, 13, 10]}, ((0,), (1,), (2,)), id="irregular"
    ),
]


@pytest.mark.parametrize(("rows", "expected"), CLASS_CASES)
def test_distance_classes(rows: Rows, expected: tuple[tuple[int, ...], ...]) -> None:
    assert distance_classes(sorted(rows), rows).members == expected


def test_classes_only_look_at_searched_nodes() -> None:
    rows = _changed(TWO_SOCKETS, 3, 0, 40)  # node 3 differs only towards node 0
    assert distance_classes([1, 2, 3, 5], rows).members == ((1, 2, 3), (5,))


def test_vectors_by_sum_groups_equal_sums() -> None:
    classes = distance_classes(range(8), TWO_SOCKETS)
    assert list(vectors_by_sum(classes, 3)) == [(102, [(0, 3), (3, 0)]), (138, [(1, 2), (2, 1)])]
    assert vector_count(classes, 3) == 4
    assert list(vectors_by_sum(classes, 9)) == []
    assert vector_count(classes, 9) == 0


# --- random machines ------------------------------------------------------------------


@st.composite
def structured_rows(draw: st.DrawFn, max_nodes: int = 10, *, dense: bool = False) -> Rows:
    """Distances constant per (class, class) pair: symmetric or not, sometimes perturbed
    (``dense``: more classes and any distance up to 60, so that sums spread out)."""
    size = draw(st.integers(1, max_nodes))
    classes = draw(st.integers(1, 6 if dense else 4))
    where = [draw(st.integers(0, classes - 1)) for _ in range(size)]
    values = st.integers(1, 60) if dense else st.sampled_from([10, 11, 12, 16, 20, 21, 32])
    diagonal = [draw(st.sampled_from([10, 10, 11])) for _ in range(classes)]
    table = [[draw(values) for _ in range(classes)] for _ in range(classes)]
    if draw(st.booleans()):
        table = [[max(table[a][b], table[b][a]) for b in range(classes)] for a in range(classes)]
    rows = {
        a: [diagonal[where[a]] if a == b else table[where[a]][where[b]] for b in range(size)]
        for a in range(size)
    }
    for _ in range(draw(st.integers(0, 2))):
        a, b = draw(st.integers(0, size - 1)), draw(st.integers(0, size - 1))
        rows[a][b] = draw(values)
    return rows


def _pair_sum(rows: Rows) -> Callable[[int], int]:
    def total(bits: int) -> int:
        ids = [n for n in rows if bits >> n & 1]
        return sum(rows[a][b] for a in ids for b in ids)

    return total


def _brute(rows: Rows, nodes: list[int], size: int, accept: Callable[[int], bool]) -> int | None:
    total = _pair_sum(rows)
    masks = [bits_of(combo) for combo in combinations(nodes, size)]
    keyed = sorted((total(bits), bits) for bits in masks if accept(bits))
    return keyed[0][1] if keyed else None


@settings(max_examples=150, deadline=None, suppress_health_check=_HEALTH)
@given(structured_rows(), st.data())
def test_count_vector_sum_is_the_masks_sum(rows: Rows, data: st.DataObject) -> None:
    nodes = sorted(data.draw(st.sets(st.sampled_from(sorted(rows)), min_size=1)))
    classes = distance_classes(nodes, rows)
    chosen = data.draw(st.sets(st.sampled_from(nodes)))
    counts = [sum(1 for n in group if n in chosen) for group in classes.members]
    assert classes.pair_sum(counts) == _pair_sum(rows)(bits_of(sorted(chosen)))


@settings(max_examples=200, deadline=None, suppress_health_check=_HEALTH)
@given(structured_rows(max_nodes=14, dense=True), st.data())
def test_vectors_by_sum_lists_every_vector_once_in_order(rows: Rows, data: st.DataObject) -> None:
    nodes = sorted(data.draw(st.sets(st.sampled_from(sorted(rows)), min_size=1)))
    classes = distance_classes(nodes, rows)
    size = data.draw(st.integers(0, len(nodes) + 1))
    costs = st.none() | st.integers(0, 4)
    budgets = [
        Budget(tuple(tuple(data.draw(costs) for _ in g) for g in classes.members), limit)
        for limit in data.draw(st.lists(st.integers(-1, 12), max_size=2))
    ]

    def within(budget: Budget, counts: tuple[int, ...]) -> bool:
        """Leave out the cheapest members of each class (a required one never)."""
        total = 0
        for costs, n in zip(budget.costs, counts, strict=True):
            dropped = sorted(costs, key=lambda c: (c is None, c or 0))[: len(costs) - n]
            if None in dropped:
                return False
            total += sum(c for c in dropped if c is not None)
        return total <= budget.limit

    every = sorted(
        (classes.pair_sum(counts), counts)
        for counts in product(*(range(len(group) + 1) for group in classes.members))
        if sum(counts) == size
    )
    assert vector_count(classes, size) == len(every)
    kept = [item for item in every if all(within(b, item[1]) for b in budgets)]
    band_cap = data.draw(st.sampled_from([1, 3, 4096]))
    groups = list(vectors_by_sum(classes, size, budgets=budgets, band_cap=band_cap))
    got = [(total, counts) for total, group in groups for counts in group]
    assert sorted(got) == kept
    assert [total for total, _ in groups] == sorted({total for total, _ in kept})
    assert all(classes.pair_sum(counts) == total for total, counts in got)


@st.composite
def search_cases(
    draw: st.DrawFn,
) -> tuple[Rows, list[int], int, Callable[[int], bool], CapacityHintSource | None]:
    rows = draw(structured_rows())
    nodes = sorted(draw(st.sets(st.sampled_from(sorted(rows)), min_size=1)))
    size = draw(st.integers(1, len(nodes)))
    src: CapacityHintSource | None = None
    if draw(st.booleans()):
        universe_nodes = nodes + draw(st.lists(st.integers(10, 12), unique=True, max_size=2))
        required = draw(st.sets(st.sampled_from(universe_nodes), max_size=1))
        src = CapacityHintSource(
            universe=bits_of(universe_nodes),
            free={n: draw(st.integers(0, 5)) for n in universe_nodes},
            need=draw(st.integers(1, 20)),
            preferred_size=size,
            base=draw(st.integers(0, 2)),
            required=bits_of(sorted(required)),
        )
    picked = draw(st.sampled_from(["all", "random", "odd"]))
    salt = draw(st.integers(0, 1 << 16))

    def accept(bits: int) -> bool:
        if src is not None and not src.feasible(bits):
            return False
        if picked == "random":
            return hash((bits, salt)) % 3 == 0
        return picked == "all" or bits.bit_count() % 2 == 1 or bits & 1 == 0

    return rows, nodes, size, accept, src


@settings(max_examples=300, deadline=None, suppress_health_check=_HEALTH)
@given(search_cases(), st.booleans())
def test_searches_match_brute_force(
    case: tuple[Rows, list[int], int, Callable[[int], bool], CapacityHintSource | None],
    exact_viable: bool,
) -> None:
    rows, nodes, size, accept, src = case
    expected = _brute(rows, nodes, size, accept)

    def viable(chosen: int, pool: int, want: int) -> bool:
        if not exact_viable:
            return src is None or src.can_complete(chosen, pool, want)
        free = [n for n in nodes if pool >> n & 1]
        extra = want - chosen.bit_count()
        return any(accept(chosen | bits_of(c)) for c in combinations(free, extra))

    universe = bits_of(nodes)
    bound = capacity_bound(src, universe) if src is not None else None
    bounds = [bound] if bound else []
    classes = distance_classes(nodes, rows)
    total = _pair_sum(rows)
    assert class_search(classes, size, accept, viable, bounds=bounds) == expected
    assert branch_and_bound(nodes, rows, size, accept, viable, pair_sum=total) == expected
    for limit in (0, 3, 20_000):
        found = closest_search(
            nodes, rows, size, accept, viable, bounds=bounds, pair_sum=total, limit=limit
        )
        assert found == expected
