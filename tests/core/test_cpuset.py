"""CPUSet: the kubelet's list format (vectors from k8s.io/utils cpuset) and set-algebra laws."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cpumanager.core.cpuset import MAX_CPU_ID, CPUSet
from cpumanager.errors import InputError, InvalidCPUSetError

# --- kubelet vectors (k8s.io/utils cpuset/cpuset_test.go) ----------------------------------

PARSE_OK = [
    ("", []),
    ("5", [5]),
    ("1,2,3,4,5", [1, 2, 3, 4, 5]),
    ("1-5", [1, 2, 3, 4, 5]),
    ("1-2,3-5", [1, 2, 3, 4, 5]),
    ("5,4,3,2,1", [1, 2, 3, 4, 5]),
    ("3-6,1-5", [1, 2, 3, 4, 5, 6]),
    ("3-3,5-5", [3, 5]),
]

PARSE_ERRORS = [
    "nonnumeric", "non-numeric", "no,numbers", "0-a", "a-0", "0,a", "a,0", "1-2,a,3-5",
    "0,", "0,,", ",3", ",,3", "0,,3", "-1", "1-", "1,2-,3", "1,-2,3", "-1--2", "--1",
    "1--", "3-0", "0--3",
]  # fmt: skip

FORMAT = [
    ([], ""),
    ([5], "5"),
    ([1, 2, 3, 4, 5], "1-5"),
    ([1, 2, 3, 5, 6, 8], "1-3,5-6,8"),
]


@pytest.mark.parametrize(("text", "expected"), PARSE_OK, ids=[repr(t) for t, _ in PARSE_OK])
def test_parse_vectors(text: str, expected: list[int]) -> None:
    assert CPUSet.parse(text) == CPUSet(expected)
    assert list(CPUSet.parse(text)) == expected


@pytest.mark.parametrize("text", PARSE_ERRORS)
def test_parse_error_vectors(text: str) -> None:
    with pytest.raises(InvalidCPUSetError) as info:
        CPUSet.parse(text)
    assert repr(text) in str(info.value)
    assert info.value.text == text
    assert isinstance(info.value, InputError)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(("cpus", "expected"), FORMAT, ids=[e or "empty" for _, e in FORMAT])
def test_format_vectors(cpus: list[int], expected: str) -> None:
    assert str(CPUSet(cpus)) == expected


# --- our own edge cases ---------------------------------------------------------------------

EDGES = [
    ("+5", [5]),  # Go's Atoi accepts a sign
    ("+1-+3", [1, 2, 3]),
    ("0-0", [0]),
    ("8191", [8191]),
    ("8190-8192", [8190, 8191, 8192]),
    ("0,65535", [0, 65535]),
]


@pytest.mark.parametrize(("text", "expected"), EDGES, ids=[t for t, _ in EDGES])
def test_parse_edges(text: str, expected: list[int]) -> None:
    assert CPUSet.parse(text) == CPUSet(expected)


@pytest.mark.parametrize("text", [" 1", "1 ", "1, 2", "0x1", "\uff11", "1-3-5", "9" * 30, "\n"])
def test_parse_rejects(text: str) -> None:
    with pytest.raises(InvalidCPUSetError):
        CPUSet.parse(text)


@pytest.mark.parametrize("text", ["0-4294967296", "4294967296", "+1048576", "1,2-9999999"])
def test_ids_past_the_cap_are_rejected_before_allocating(text: str) -> None:
    with pytest.raises(InvalidCPUSetError, match=f"above {MAX_CPU_ID}"):
        CPUSet.parse(text)
    assert CPUSet.parse(str(MAX_CPU_ID)).max() == MAX_CPU_ID


def test_reversed_range_message_names_the_range() -> None:
    with pytest.raises(InvalidCPUSetError, match=r'invalid range "3-0" \(3 > 0\)'):
        CPUSet.parse("3-0")


def test_two_element_runs_are_ranges() -> None:
    assert str(CPUSet([5, 6])) == "5-6"
    assert str(CPUSet([1, 3, 4, 9])) == "1,3-4,9"


def test_large_ids_work() -> None:
    big = CPUSet([8191, 8192, 100_000])
    assert str(big) == "8191-8192,100000"
    assert 100_000 in big
    assert big.max() == 100_000
    assert big.min() == 8191
    assert len(CPUSet.range(0, 8192)) == 8192
    assert str(CPUSet.range(0, 8192)) == "0-8191"


def test_value_behaviour() -> None:
    s = CPUSet.parse("0-3,8")
    assert s == CPUSet([8, 3, 2, 1, 0])
    assert hash(s) == hash(CPUSet.parse("8,0-3"))
    assert s != "0-3,8"
    assert repr(s) == 'CPUSet("0-3,8")'
    assert pickle.loads(pickle.dumps(s)) == s
    assert bool(CPUSet()) is False
    assert CPUSet().is_empty()
    assert -1 not in s
    assert "1" not in s
    with pytest.raises(AttributeError):
        s._bits = 0  # type: ignore[misc]
    with pytest.raises(ValueError, match="non-negative"):
        CPUSet([-1])
    with pytest.raises(ValueError, match="non-negative"):
        CPUSet.from_bits(-1)
    with pytest.raises(ValueError, match="empty"):
        CPUSet().min()
    with pytest.raises(ValueError, match="empty"):
        CPUSet().max()


def test_range_and_lowest() -> None:
    assert CPUSet.range(4, 4) == CPUSet()
    assert CPUSet.range(2, 5) == CPUSet([2, 3, 4])
    assert CPUSet.parse("1,5,9,12").lowest(2) == CPUSet([1, 5])
    assert CPUSet.parse("1,5").lowest(9) == CPUSet([1, 5])
    assert CPUSet.parse("1,5").lowest(0) == CPUSet()


def test_variadic_algebra() -> None:
    a, b, c = CPUSet.parse("0-3"), CPUSet.parse("2-5"), CPUSet.parse("3,9")
    assert a.union(b, c) == CPUSet.parse("0-5,9")
    assert a.intersection(b, c) == CPUSet([3])
    assert a.difference(b, c) == CPUSet([0, 1])
    assert a.union() == a
    assert a.is_subset(a | b)
    assert a.is_disjoint(CPUSet([7]))
    assert a.sorted() == (0, 1, 2, 3)
    assert list(CPUSet.parse("0-2,7,9-10").runs()) == [(0, 2), (7, 7), (9, 10)]


# --- properties ------------------------------------------------------------------------------

ids = st.integers(min_value=0, max_value=9000)
id_sets = st.frozensets(ids, max_size=60) | st.frozensets(st.integers(0, 70), max_size=70)
cpusets = id_sets.map(CPUSet)


def reference_format(values: frozenset[int]) -> str:
    """The list format written the slow, obvious way."""
    parts: list[str] = []
    ordered = sorted(values)
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        parts.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(parts)


@given(id_sets)
def test_format_matches_reference_and_round_trips(values: frozenset[int]) -> None:
    s = CPUSet(values)
    assert str(s) == reference_format(values)
    assert CPUSet.parse(str(s)) == s


@given(id_sets, st.randoms(use_true_random=False))
def test_parse_accepts_any_order_and_overlap(values: frozenset[int], rnd: object) -> None:
    items = [str(v) for v in values] + [f"{v}-{v + 2}" for v in list(values)[:3]]
    rnd.shuffle(items)  # type: ignore[attr-defined]
    expected = set(values) | {v + k for v in list(values)[:3] for k in range(3)}
    assert CPUSet.parse(",".join(items)) == CPUSet(expected)


@given(id_sets)
def test_iteration_is_ascending_and_sized(values: frozenset[int]) -> None:
    s = CPUSet(values)
    assert list(s) == sorted(values)
    assert len(s) == len(values)
    assert all(v in s for v in values)
    if values:
        assert s.min() == min(values)
        assert s.max() == max(values)


@given(id_sets, id_sets)
def test_operators_agree_with_python_sets(a: frozenset[int], b: frozenset[int]) -> None:
    x, y = CPUSet(a), CPUSet(b)
    assert set(x | y) == a | b
    assert set(x & y) == a & b
    assert set(x - y) == a - b
    assert set(x ^ y) == a ^ b
    assert (x <= y) == (a <= b)
    assert (x < y) == (a < b)
    assert (x >= y) == (a >= b)
    assert (x > y) == (a > b)
    assert x.is_disjoint(y) == a.isdisjoint(b)


@given(cpusets, cpusets, cpusets)
def test_algebra_laws(x: CPUSet, y: CPUSet, z: CPUSet) -> None:
    assert x | y == y | x
    assert x & y == y & x
    assert (x | y) | z == x | (y | z)
    assert (x & y) & z == x & (y & z)
    assert x & (y | z) == (x & y) | (x & z)
    assert x | (y & z) == (x | y) & (x | z)
    universe = x | y | z
    assert universe - (x | y) == (universe - x) & (universe - y)
    assert universe - (x & y) == (universe - x) | (universe - y)
    assert x | CPUSet() == x
    assert x & CPUSet() == CPUSet()
    assert x - x == CPUSet()
    assert (x - y) | (x & y) == x


@given(cpusets, cpusets, cpusets)
def test_subset_is_a_partial_order(x: CPUSet, y: CPUSet, z: CPUSet) -> None:
    assert x <= x
    if x <= y and y <= x:
        assert x == y
    if x <= y and y <= z:
        assert x <= z
    assert x & y <= x <= x | y
    assert not x < x


@given(cpusets, cpusets)
def test_equal_sets_hash_equal(x: CPUSet, y: CPUSet) -> None:
    assert (x == y) == (set(x) == set(y))
    if x == y:
        assert hash(x) == hash(y)
    assert CPUSet.from_bits(x.bits) == x


@given(cpusets, st.integers(0, 80))
def test_lowest_takes_the_smallest(x: CPUSet, count: int) -> None:
    assert list(x.lowest(count)) == sorted(x)[:count]


def test_ids_too_wide_for_a_bitmask_are_refused() -> None:
    with pytest.raises(ValueError, match="above"):
        CPUSet([2**40])
