"""Representative combinations against itertools, on every small key list."""

from __future__ import annotations

from itertools import combinations, product

import pytest

from cpumanager.core.allocation.combos import next_combination, representative_combinations

KEY_LISTS = [list(keys) for n in range(7) for keys in product("ab", repeat=n)] + [
    [1, 1, 2, 1, 2, 2, 3, 3, 1],
    [5] * 9,
    list(range(8)),
]


def _first_of_each_class(keys: list[object], size: int) -> list[tuple[int, ...]]:
    """The brute force: every combination, keeping the first of each sequence of runs.

    A run is a maximal stretch of equal neighbouring keys; two combinations are in one class
    when they take the same number of positions from every run (hence the same keys).
    """
    runs = [0] * len(keys)
    for i in range(1, len(keys)):
        runs[i] = runs[i - 1] + (keys[i] != keys[i - 1])
    seen: dict[tuple[int, ...], tuple[int, ...]] = {}
    for combo in combinations(range(len(keys)), size):
        seen.setdefault(tuple(runs[i] for i in combo), combo)
    return sorted(seen.values())


def test_equal_keys_in_separate_runs_are_separate_classes() -> None:
    assert list(representative_combinations("aba", 1)) == [(0,), (1,), (2,)]
    assert list(representative_combinations("aab", 2)) == [(0, 1), (0, 2)]


@pytest.mark.parametrize("keys", KEY_LISTS, ids=lambda keys: "".join(map(str, keys)) or "empty")
def test_one_representative_per_class_in_lexicographic_order(keys: list[object]) -> None:
    for size in range(len(keys) + 2):
        got = list(representative_combinations(keys, size))
        if size > len(keys):
            assert got == []
            continue
        assert got == _first_of_each_class(keys, size)


@pytest.mark.parametrize(("n", "size"), [(n, k) for n in range(7) for k in range(n + 1)])
def test_next_combination_follows_itertools(n: int, size: int) -> None:
    walk = list(combinations(range(n), size))
    for current, following in zip(walk, [*walk[1:], None], strict=True):
        assert next_combination(current, n) == following
