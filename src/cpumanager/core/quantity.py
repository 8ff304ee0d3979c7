"""Kubernetes resource quantities (``"2"``, ``"1500m"``, ``"2.5"``, ``"1Gi"``, ``"1e3"``).

Quantities are kept as exact fractions, with the apimachinery parser's own adjustments:
a non-zero amount is rounded up (away from zero) to a whole number of nano-units, a binary
(``Ki`` ... ``Ei``) amount is capped at 2^63 - 1, and a number without digits (``"."``,
``"-"``, ``"m"``, ``"Gi"``) is zero wherever the kubelet's integer fast path takes it. The
kubelet's ``Value()`` and ``MilliValue()`` round away from zero, which is what decides
whether a CPU request is an integer.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from cpumanager.core import limits
from cpumanager.errors import WorkloadError

__all__ = ["milli_value", "parse_quantity", "value"]

_DECIMAL_EXPONENTS: dict[str, int] = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_BINARY_EXPONENTS: dict[str, int] = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_PATTERN = re.compile(
    r"^(?P<sign>[+-]?)(?P<int>[0-9]*)(?:\.(?P<frac>[0-9]*))?"
    r"(?:[eE](?P<exp>[+-]?[0-9]+)|(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$"
)
_NANO = 10**9
_BINARY_CAP = 2**63 - 1  # the parser caps binary-suffixed amounts at int64's maximum
_MAX_INT32 = 2**31 - 1  # exponents past int32 are refused by the kubelet's parser
# Digits of the integer part, and of the mantissa, past which we refuse rather than build a
# number too large to print (core/limits.py).
_MAX_DIGITS = limits.MAX_QUANTITY_DIGITS
# Go's unicode.IsSpace for the characters JSON decoding trims around a quantity.
_GO_SPACE = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


def parse_quantity(raw: str | int | float, *, field: str = "quantity") -> Fraction:
    """Parse a quantity; ``field`` names it in the error (e.g. ``containers[0].cpu``)."""
    if isinstance(raw, bool):
        msg = f"{field}: expected a quantity such as '2' or '500m', got {raw!r}"
        raise WorkloadError(msg)
    if isinstance(raw, int):
        return _canonical(Fraction(raw), binary=False)
    if isinstance(raw, float):
        if not math.isfinite(raw):
            msg = f"{field}: quantity {raw!r} is not finite"
            raise WorkloadError(msg)
        return _canonical(Fraction(str(raw)), binary=False)
    text = raw.strip(_GO_SPACE) if isinstance(raw, str) else raw
    match = _PATTERN.match(text) if isinstance(text, str) and text else None
    if match is None:
        msg = f"{field}: {raw!r} is not a quantity; write e.g. '2', '1500m', '2.5' or '1Gi'"
        raise WorkloadError(msg)
    return _from_match(match, raw, field)


def _from_match(match: re.Match[str], raw: object, field: str) -> Fraction:
    whole, frac = match["int"], match["frac"] or ""
    binary = match["suffix"] in _BINARY_EXPONENTS
    if match["exp"] is not None:
        exponent = int(match["exp"])
        if abs(exponent) > _MAX_INT32:
            msg = f"{field}: {raw!r} has an exponent out of range; write a smaller exponent"
            raise WorkloadError(msg)
    elif binary:
        exponent = _BINARY_EXPONENTS[match["suffix"]]
    else:
        exponent = _DECIMAL_EXPONENTS[match["suffix"] or ""]
    if not whole and not frac:
        # No digits at all: zero where the kubelet's integer fast path parses it, else an
        # error (its decimal fallback needs a digit).
        if _fast_path_takes_no_digits(exponent, binary=binary):
            return Fraction(0)
        msg = f"{field}: {raw!r} is not a quantity; write e.g. '2', '1500m', '2.5' or '1Gi'"
        raise WorkloadError(msg)
    digits = (whole + frac).lstrip("0")
    if digits and (
        len(digits) > _MAX_DIGITS
        or len(whole.lstrip("0")) + (exponent if not binary else exponent * 3 // 10) > _MAX_DIGITS
    ):
        shown = raw if len(str(raw)) <= 40 else f"{str(raw)[:40]}..."
        msg = f"{field}: {shown!r} is too large to be a resource quantity"
        raise WorkloadError(msg)
    sign = -1 if match["sign"] == "-" else 1
    if not digits:
        return Fraction(0)
    if not binary and len(whole.lstrip("0")) + exponent < -9:
        return Fraction(sign, _NANO)  # below one nano-unit: rounded up to it
    try:
        mantissa = int(digits)
    except ValueError as err:  # more digits than Python converts at once
        msg = f"{field}: {raw!r} has too many digits to be a resource quantity"
        raise WorkloadError(msg) from err
    scale = Fraction(10) ** -len(frac)
    if binary:
        amount = mantissa * scale * 2**exponent
    else:
        amount = mantissa * scale * Fraction(10) ** exponent
    return sign * _canonical(amount, binary=binary)


def _fast_path_takes_no_digits(exponent: int, *, binary: bool) -> bool:
    """Whether the kubelet's int64 fast path handles a digit-less number with this suffix."""
    if binary:
        return 15 - 1 - int(exponent * 3 / 10) - 1 >= 0
    return exponent >= -9


def _canonical(amount: Fraction, *, binary: bool) -> Fraction:
    """Round a non-zero magnitude up to whole nano-units; cap binary amounts at 2^63 - 1."""
    magnitude = abs(amount)
    if magnitude.denominator != 1 and (magnitude * _NANO).denominator != 1:
        magnitude = Fraction(math.ceil(magnitude * _NANO), _NANO)
    if binary and magnitude > _BINARY_CAP:
        magnitude = Fraction(_BINARY_CAP)
    return magnitude if amount >= 0 else -magnitude


def value(quantity: Fraction) -> int:
    """``Quantity.Value()``: whole units, rounded away from zero."""
    return _away_from_zero(quantity)


def milli_value(quantity: Fraction) -> int:
    """``Quantity.MilliValue()``: thousandths, rounded away from zero."""
    return _away_from_zero(quantity * 1000)


def _away_from_zero(amount: Fraction) -> int:
    return math.ceil(amount) if amount >= 0 else -math.ceil(-amount)
