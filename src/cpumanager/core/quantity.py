"""Kubernetes resource quantities (``"2"``, ``"1500m"``, ``"2.5"``, ``"1Gi"``, ``"1e3"``).

Quantities are kept as exact fractions; the kubelet's ``Value()`` and ``MilliValue()`` round
up, which is what decides whether a CPU request is an integer.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from cpumanager.errors import WorkloadError

__all__ = ["milli_value", "parse_quantity", "value"]

_SUFFIXES: dict[str, Fraction] = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
    "Ki": Fraction(2**10),
    "Mi": Fraction(2**20),
    "Gi": Fraction(2**30),
    "Ti": Fraction(2**40),
    "Pi": Fraction(2**50),
    "Ei": Fraction(2**60),
}
_PATTERN = re.compile(
    r"^(?P<sign>[+-]?)(?P<num>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?:(?P<exp>[eE][+-]?[0-9]+)|(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$"
)


def parse_quantity(raw: str | int | float, *, field: str = "quantity") -> Fraction:
    """Parse a quantity; ``field`` names it in the error (e.g. ``containers[0].cpu``)."""
    if isinstance(raw, bool):
        msg = f"{field}: expected a quantity such as '2' or '500m', got {raw!r}"
        raise WorkloadError(msg)
    if isinstance(raw, int):
        return Fraction(raw)
    if isinstance(raw, float):
        if not math.isfinite(raw):
            msg = f"{field}: quantity {raw!r} is not finite"
            raise WorkloadError(msg)
        return Fraction(str(raw))
    text = raw.strip() if isinstance(raw, str) else raw
    match = _PATTERN.match(text) if isinstance(text, str) else None
    if match is None:
        msg = f"{field}: {raw!r} is not a quantity; write e.g. '2', '1500m', '2.5' or '1Gi'"
        raise WorkloadError(msg)
    number = Fraction(match["num"])
    if match["exp"]:
        number *= Fraction(10) ** int(match["exp"][1:])
    else:
        number *= _SUFFIXES[match["suffix"] or ""]
    return -number if match["sign"] == "-" else number


def value(quantity: Fraction) -> int:
    """``Quantity.Value()``: whole units, rounded up."""
    return math.ceil(quantity)


def milli_value(quantity: Fraction) -> int:
    """``Quantity.MilliValue()``: thousandths, rounded up."""
    return math.ceil(quantity * 1000)
