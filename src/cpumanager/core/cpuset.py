"""CPUSet: an immutable set of CPU ids, backed by one Python int used as a bitmask.

An int has no width limit, so machines with thousands of CPUs cost nothing special, and
union / intersection / difference are single machine-level operations.

Text form is the Linux cpuset list format exactly as the kubelet reads and writes it:
ascending, runs of consecutive ids as ``a-b`` (two-element runs too), singles as ``a``,
joined with ``,``; the empty set is ``""``. Parsing follows Go's ``strconv.Atoi`` per
element (an optional leading ``+`` is accepted, no whitespace) and splits each element at
the *first* ``-``, so ``-1``, ``1-``, ``3-0`` and empty elements are errors.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from cpumanager.core.bitset import IntBitSet
from cpumanager.errors import InvalidCPUSetError

__all__ = ["MAX_CHECKPOINT_CPU_ID", "MAX_CPU_ID", "CPUSet"]

_MAX_ATOI = (1 << 63) - 1
# Parsing is where outside text meets memory: "0-4294967296" would be a 512 MiB int. Linux
# caps NR_CPUS at 8192 today; ids up to about a million are accepted, larger ones rejected.
MAX_CPU_ID = (1 << 20) - 1
# A checkpoint is stricter: every CPU list in a cpu_manager_state file is parsed before the
# machine is known, so a hand-edited typo is refused at 65,535 rather than at MAX_CPU_ID.
MAX_CHECKPOINT_CPU_ID = 65_535
# Ids of at most 18 digits always fit Go's int64, so text matching this needs no _atoi.
_PLAIN = re.compile(r"\d{1,18}(?:-\d{1,18})?(?:,\d{1,18}(?:-\d{1,18})?)*", re.ASCII)


def _atoi(text: str, element: str, whole: str) -> int:
    """Go's Atoi for the non-negative ids of a CPU list (sign ``+`` allowed)."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits or not digits.isascii() or not digits.isdigit():
        raise InvalidCPUSetError(whole, f"element {element!r} is not a number")
    if len(digits.lstrip("0")) > 19:  # past int64 whatever the digits; int() refuses 4,300+
        raise InvalidCPUSetError(whole, f"element {element[:40]!r} is out of range")
    value = int(digits)
    if text[:1] == "-":
        value = -value
    if value > _MAX_ATOI:
        raise InvalidCPUSetError(whole, f"element {element!r} is out of range")
    if value < 0:
        raise InvalidCPUSetError(whole, f"element {element!r} is negative")
    return value


def _checked(ranges: list[tuple[int, int]], text: str) -> list[tuple[int, int]]:
    top = max(end for _start, end in ranges)
    if top > MAX_CPU_ID:
        raise InvalidCPUSetError(text, f"CPU id {top} is above {MAX_CPU_ID}, the largest accepted")
    return ranges


def _bits_of(ranges: list[tuple[int, int]]) -> int:
    """The bitmask of inclusive ranges; many ranges go through binary text, which stays
    linear where OR-ing into a wide int would cost O(width) per range."""
    if len(ranges) <= 16:
        bits = 0
        for start, end in ranges:
            bits |= ((1 << (end - start + 1)) - 1) << start
        return bits
    top = max(end for _start, end in ranges)
    digits = bytearray(b"0") * (top + 1)
    for start, end in ranges:
        digits[start : end + 1] = b"1" * (end - start + 1)
    digits.reverse()
    return int(digits, 2)


class CPUSet(IntBitSet):
    """Immutable, hashable set of non-negative CPU ids."""

    __slots__ = ()

    def __init__(self, cpus: Iterable[int] = ()) -> None:
        bits = 0
        for cpu in cpus:
            if cpu < 0:
                msg = f"CPU ids are non-negative, got {cpu}"
                raise ValueError(msg)
            if cpu > MAX_CPU_ID:  # a bitmask that wide would take gigabytes
                msg = f"CPU id {cpu} is above {MAX_CPU_ID}, the largest accepted"
                raise ValueError(msg)
            bits |= 1 << cpu
        object.__setattr__(self, "_bits", bits)

    @classmethod
    def from_bits(cls, bits: int) -> CPUSet:
        """Wrap an int whose bit i means CPU i."""
        if bits < 0:
            msg = "a CPU bitmask is non-negative"
            raise ValueError(msg)
        return cls._wrap(bits)

    @classmethod
    def range(cls, start: int, stop: int) -> CPUSet:
        """CPUs ``start`` .. ``stop - 1`` (like :func:`range`)."""
        if stop <= start:
            return _EMPTY
        return cls._wrap(((1 << (stop - start)) - 1) << start)

    @classmethod
    def parse(cls, text: str) -> CPUSet:
        """Parse the Linux list format; raise :class:`InvalidCPUSetError` naming the text."""
        if text == "":
            return _EMPTY
        ranges: list[tuple[int, int]] = []
        if _PLAIN.fullmatch(text):  # the common case: plain decimal ids, checked in one pass
            for element in text.split(","):
                start_text, _dash, end_text = element.partition("-")
                start = int(start_text)
                end = int(end_text) if end_text else start
                if start > end:
                    raise InvalidCPUSetError(text, f'invalid range "{element}" ({start} > {end})')
                ranges.append((start, end))
            return cls.from_bits(_bits_of(_checked(ranges, text)))
        for element in text.split(","):
            if element == "":
                raise InvalidCPUSetError(text, "empty element")
            start_text, dash, end_text = element.partition("-")
            start = _atoi(start_text, element, text)
            if not dash:
                ranges.append((start, start))
                continue
            end = _atoi(end_text, element, text)
            if start > end:
                raise InvalidCPUSetError(text, f'invalid range "{element}" ({start} > {end})')
            ranges.append((start, end))
        return cls.from_bits(_bits_of(_checked(ranges, text)))

    def __str__(self) -> str:
        bits = self._bits
        if bits:
            low = (bits & -bits).bit_length() - 1
            run = bits >> low
            if run & (run + 1) == 0:  # one run of consecutive ids: the usual container
                high = low + run.bit_length() - 1
                return str(low) if high == low else f"{low}-{high}"
        return ",".join(
            str(start) if start == end else f"{start}-{end}" for start, end in self.runs()
        )

    def __repr__(self) -> str:
        return f'CPUSet("{self}")'


_EMPTY = CPUSet()
