"""Kubernetes quantities: parsing, Value() and MilliValue() rounding (kubelet's rules)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cpumanager.core.quantity import milli_value, parse_quantity, value
from cpumanager.errors import WorkloadError

PARSE = [
    ("2", Fraction(2)),
    ("1500m", Fraction(3, 2)),
    ("2.5", Fraction(5, 2)),
    (".5", Fraction(1, 2)),
    ("5.", Fraction(5)),
    ("+3", Fraction(3)),
    ("-3", Fraction(-3)),
    ("100n", Fraction(1, 10**7)),
    ("7u", Fraction(7, 10**6)),
    ("1k", Fraction(1000)),
    ("1M", Fraction(10**6)),
    ("1G", Fraction(10**9)),
    ("1T", Fraction(10**12)),
    ("1P", Fraction(10**15)),
    ("1E", Fraction(10**18)),
    ("1Ki", Fraction(1024)),
    ("1Mi", Fraction(2**20)),
    ("1Gi", Fraction(2**30)),
    ("1.5Gi", Fraction(3 * 2**29)),
    ("1Ti", Fraction(2**40)),
    ("1Pi", Fraction(2**50)),
    ("1Ei", Fraction(2**60)),
    ("1e3", Fraction(1000)),
    ("1E3", Fraction(1000)),
    ("12e-1", Fraction(6, 5)),
    (" 4 ", Fraction(4)),
    (2, Fraction(2)),
    (0, Fraction(0)),
    (2.5, Fraction(5, 2)),
    (0.1, Fraction(1, 10)),
]


@pytest.mark.parametrize(("raw", "expected"), PARSE, ids=[repr(r) for r, _ in PARSE])
def test_parse(raw: str | int | float, expected: Fraction) -> None:
    assert parse_quantity(raw) == expected


BAD = ["abc", "", "1x", "1 Gi", "--1", "1.2.3", "Pi", "1mi", "Ei", "1e", "0x10"]


@pytest.mark.parametrize("raw", BAD)
def test_bad_quantities_name_the_field(raw: str) -> None:
    with pytest.raises(WorkloadError, match=rf"^limits\.cpu: {raw!r} is not a quantity"):
        parse_quantity(raw, field="limits.cpu")


@pytest.mark.parametrize("raw", [True, False, float("inf"), float("nan")])
def test_bools_and_non_finite_are_rejected(raw: object) -> None:
    with pytest.raises(WorkloadError, match=r"^q: "):
        parse_quantity(raw, field="q")  # type: ignore[arg-type]


ROUNDING = [
    # (quantity, Value(), MilliValue()) -- both round away from zero, as the kubelet's Quantity does
    ("2", 2, 2000),
    ("1500m", 2, 1500),
    ("1001m", 2, 1001),
    ("999m", 1, 999),
    ("0.0001", 1, 1),
    ("100n", 1, 1),
    ("0", 0, 0),
    ("1Gi", 2**30, 2**30 * 1000),
    ("-1500m", -2, -1500),  # away from zero, as int64Amount does
]


@pytest.mark.parametrize(("raw", "whole", "milli"), ROUNDING)
def test_value_and_milli_value_round_up(raw: str, whole: int, milli: int) -> None:
    quantity = parse_quantity(raw)
    assert (value(quantity), milli_value(quantity)) == (whole, milli)


@given(st.integers(min_value=0, max_value=10**9))
def test_milli_suffix_is_exact(millis: int) -> None:
    quantity = parse_quantity(f"{millis}m")
    assert milli_value(quantity) == millis
    assert (value(quantity) * 1000 == milli_value(quantity)) == (millis % 1000 == 0)
