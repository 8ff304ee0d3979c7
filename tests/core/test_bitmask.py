"""NUMAMask: the kubelet's bitmask vectors, its orderings and subset iteration, past 64 nodes."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cpumanager.core.bitmask import NUMAMask, iterate_masks
from cpumanager.errors import InvalidNUMAMaskError

VECTORS = json.loads((Path(__file__).parent.parent / "data/bitmask_vectors.json").read_text())
CASES: list[dict[str, Any]] = VECTORS["cases"] + VECTORS["derived"]


def _guarded(base: NUMAMask, change: Any) -> NUMAMask:
    """Apply ``change``; like the kubelet, a rejected id leaves the mask as it was."""
    try:
        return change(base)  # type: ignore[no-any-return]
    except InvalidNUMAMaskError:
        return base


def run_vector(case: dict[str, Any]) -> object:
    op = case["op"]
    if op in ("new_empty",):
        return NUMAMask().kubelet_string()
    if op in ("new", "string"):
        return NUMAMask(case["bits"]).kubelet_string()
    if op == "add_to_empty":
        return _guarded(NUMAMask(), lambda m: m | NUMAMask(case["bits"])).kubelet_string()
    if op == "remove":
        start = NUMAMask(case["bits_set"])
        return _guarded(start, lambda m: m - NUMAMask(case["bits_remove"])).kubelet_string()
    if op in ("and", "or"):
        masks = [NUMAMask(bits) for bits in case["masks"]]
        result = masks[0]
        for other in masks[1:]:
            result = result & other if op == "and" else result | other
        return result.kubelet_string()
    if op == "clear":
        return (NUMAMask(case["bits"]) - NUMAMask(case["bits"])).kubelet_string()
    if op == "fill":
        return NUMAMask(range(64)).kubelet_string()
    if op == "is_empty":
        return NUMAMask(case["bits"]).is_empty()
    if op == "is_set":
        return case["bit"] in NUMAMask(case["bits"])
    if op == "any_set":
        mask = NUMAMask(case["bits"])
        return any(bit in mask for bit in case["check_bits"])
    if op == "is_equal":
        return NUMAMask(case["first"]) == NUMAMask(case["second"])
    if op == "count":
        return NUMAMask(case["bits"]).count()
    if op == "get_bits":
        return list(NUMAMask(case["bits"]).ids())
    if op == "is_narrower_than":
        return NUMAMask(case["first"]).is_narrower_than(NUMAMask(case["second"]))
    if op == "is_less_than":
        return NUMAMask(case["first"]).is_less_than(NUMAMask(case["second"]))
    if op == "iterate_count":
        return sum(1 for _ in iterate_masks(case["bits"]))
    if op == "iterate_order":
        return [list(mask) for mask in iterate_masks(case["bits"])]
    raise AssertionError(f"unknown vector op {op!r}")


def _expected(case: dict[str, Any]) -> object:
    for key in ("expected_string", "expected", "expected_order"):
        if key in case:
            return case[key]
    raise AssertionError(f"vector without expectation: {case}")


@pytest.mark.parametrize(
    "case", CASES, ids=[f"{i}-{c['op']}-{c.get('test', 'derived')}" for i, c in enumerate(CASES)]
)
def test_kubelet_vectors(case: dict[str, Any]) -> None:
    assert run_vector(case) == _expected(case)


def test_every_vector_op_is_covered() -> None:
    assert len(CASES) >= 70
    assert {c["op"] for c in CASES} >= {"iterate_order", "string", "is_less_than", "fill"}


# --- no 64-node cap, and the odd String() width -------------------------------------------


def test_ids_past_63_work() -> None:
    mask = NUMAMask([0, 64, 200])
    assert list(mask) == [0, 64, 200]
    assert 200 in mask
    assert mask.count() == 3
    assert NUMAMask([64]).is_narrower_than(NUMAMask([0, 1]))
    assert NUMAMask([65]).kubelet_string() == "1" + "0" * 65


@pytest.mark.parametrize(
    ("bits", "text"),
    [([], "00"), ([2], "100"), ([0, 2], "0101"), ([4], "10000"), ([0, 4], "010001")],
)
def test_kubelet_string_width(bits: list[int], text: str) -> None:
    assert NUMAMask(bits).kubelet_string() == text


def test_value_behaviour() -> None:
    mask = NUMAMask.of(1, 3)
    assert mask == NUMAMask.from_bits(0b1010)
    assert hash(mask) == hash(NUMAMask([3, 1]))
    assert str(mask) == "1,3"
    assert repr(mask) == "NUMAMask([1, 3])"
    assert mask != 0b1010
    assert mask <= NUMAMask.of(1, 2, 3)
    assert mask.is_greater_than(NUMAMask.of(0, 1))
    assert not NUMAMask()
    with pytest.raises(AttributeError):
        mask._bits = 0  # type: ignore[misc]
    with pytest.raises(InvalidNUMAMaskError):
        NUMAMask([-1])
    with pytest.raises(InvalidNUMAMaskError):
        NUMAMask.from_bits(-1)


def test_iterate_order_for_three_nodes() -> None:
    order = [list(m) for m in iterate_masks([0, 1, 2])]
    assert order == [[0], [1], [2], [0, 1], [0, 2], [1, 2], [0, 1, 2]]


def test_iterate_follows_the_given_order_not_numeric_order() -> None:
    order = [list(m) for m in iterate_masks([2, 0])]
    assert order == [[2], [0], [0, 2]]


# --- properties ---------------------------------------------------------------------------

node_sets = st.frozensets(st.integers(0, 130), max_size=12)
masks = node_sets.map(NUMAMask)


@given(masks, masks, masks)
def test_narrower_than_is_a_strict_total_order(a: NUMAMask, b: NUMAMask, c: NUMAMask) -> None:
    assert not a.is_narrower_than(a)
    if a != b:
        assert a.is_narrower_than(b) != b.is_narrower_than(a)
    if a.is_narrower_than(b) and b.is_narrower_than(c):
        assert a.is_narrower_than(c)
    assert a.is_narrower_than(b) == (a.narrow_key() < b.narrow_key())


@given(masks, masks)
def test_narrower_means_fewer_nodes_then_numerically_less(a: NUMAMask, b: NUMAMask) -> None:
    if a.count() != b.count():
        assert a.is_narrower_than(b) == (a.count() < b.count())
    else:
        assert a.is_narrower_than(b) == a.is_less_than(b)
    assert a.is_less_than(b) == (a.bits < b.bits)


@given(node_sets, node_sets)
def test_algebra_agrees_with_sets(a: frozenset[int], b: frozenset[int]) -> None:
    x, y = NUMAMask(a), NUMAMask(b)
    assert set(x | y) == a | b
    assert set(x & y) == a & b
    assert set(x - y) == a - b
    assert (x <= y) == (a <= b)
    assert list(x) == sorted(a)


@given(st.lists(st.integers(0, 100), unique=True, max_size=7))
def test_iterate_masks_order_and_completeness(ids: list[int]) -> None:
    produced = list(iterate_masks(ids))
    assert len(produced) == 2 ** len(ids) - 1
    assert len(set(produced)) == len(produced)
    position = {node: i for i, node in enumerate(ids)}
    keys = [(m.count(), sorted(position[n] for n in m)) for m in produced]
    assert all(m.count() >= 1 for m in produced)
    for earlier, later in pairwise(keys):
        assert earlier < later  # by size, then lexicographic in positions of ``ids``
