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
from collections.abc import Iterable, Iterator

from cpumanager.errors import InvalidCPUSetError

__all__ = ["MAX_CPU_ID", "CPUSet"]

_MAX_ATOI = (1 << 63) - 1
# Parsing is where outside text meets memory: "0-4294967296" would be a 512 MiB int. Linux
# caps NR_CPUS at 8192 today; ids up to about a million are accepted, larger ones rejected.
MAX_CPU_ID = (1 << 20) - 1
# Ids of at most 18 digits always fit Go's int64, so text matching this needs no _atoi.
_PLAIN = re.compile(r"\d{1,18}(?:-\d{1,18})?(?:,\d{1,18}(?:-\d{1,18})?)*", re.ASCII)


def _atoi(text: str, element: str, whole: str) -> int:
    """Go's Atoi for the non-negative ids of a CPU list (sign ``+`` allowed)."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits or not digits.isascii() or not digits.isdigit():
        raise InvalidCPUSetError(whole, f"element {element!r} is not a number")
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


class CPUSet:
    """Immutable, hashable set of non-negative CPU ids."""

    __slots__ = ("_bits",)
    _bits: int

    def __init__(self, cpus: Iterable[int] = ()) -> None:
        bits = 0
        for cpu in cpus:
            if cpu < 0:
                msg = f"CPU ids are non-negative, got {cpu}"
                raise ValueError(msg)
            bits |= 1 << cpu
        object.__setattr__(self, "_bits", bits)

    @classmethod
    def from_bits(cls, bits: int) -> CPUSet:
        """Wrap an int whose bit i means CPU i."""
        if bits < 0:
            msg = "a CPU bitmask is non-negative"
            raise ValueError(msg)
        new = cls.__new__(cls)
        object.__setattr__(new, "_bits", bits)
        return new

    @classmethod
    def range(cls, start: int, stop: int) -> CPUSet:
        """CPUs ``start`` .. ``stop - 1`` (like :func:`range`)."""
        if stop <= start:
            return _EMPTY
        return cls.from_bits(((1 << (stop - start)) - 1) << start)

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

    # --- value behaviour -------------------------------------------------------------

    @property
    def bits(self) -> int:
        """The backing integer (bit i set means CPU i is in the set)."""
        return self._bits

    def __setattr__(self, name: str, value: object) -> None:
        msg = "CPUSet is immutable"
        raise AttributeError(msg)

    def __reduce__(self) -> tuple[object, tuple[int]]:
        return (CPUSet.from_bits, (self._bits,))

    def __hash__(self) -> int:
        return hash(("CPUSet", self._bits))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CPUSet):
            return self._bits == other._bits
        return NotImplemented

    def __len__(self) -> int:
        return self._bits.bit_count()

    def __bool__(self) -> bool:
        return self._bits != 0

    def __contains__(self, cpu: object) -> bool:
        return isinstance(cpu, int) and cpu >= 0 and (self._bits >> cpu) & 1 == 1

    def __iter__(self) -> Iterator[int]:
        bits = self._bits
        if bits.bit_count() * 16 >= bits.bit_length():
            # Dense (the usual case): one pass over the binary text beats bit tricks on a
            # wide int, whose every operation costs O(width).
            text = bin(bits)[:1:-1]
            return iter([cpu for cpu, digit in enumerate(text) if digit == "1"])
        return (cpu for start, end in self.runs() for cpu in range(start, end + 1))

    def __str__(self) -> str:
        return ",".join(
            str(start) if start == end else f"{start}-{end}" for start, end in self.runs()
        )

    def __repr__(self) -> str:
        return f'CPUSet("{self}")'

    # --- set algebra -------------------------------------------------------------------

    def __or__(self, other: CPUSet) -> CPUSet:
        return CPUSet.from_bits(self._bits | other._bits)

    def __and__(self, other: CPUSet) -> CPUSet:
        return CPUSet.from_bits(self._bits & other._bits)

    def __sub__(self, other: CPUSet) -> CPUSet:
        return CPUSet.from_bits(self._bits & ~other._bits)

    def __xor__(self, other: CPUSet) -> CPUSet:
        return CPUSet.from_bits(self._bits ^ other._bits)

    def __le__(self, other: CPUSet) -> bool:
        return self._bits & ~other._bits == 0

    def __lt__(self, other: CPUSet) -> bool:
        return self <= other and self._bits != other._bits

    def __ge__(self, other: CPUSet) -> bool:
        return other <= self

    def __gt__(self, other: CPUSet) -> bool:
        return other < self

    def union(self, *others: CPUSet) -> CPUSet:
        bits = self._bits
        for other in others:
            bits |= other._bits
        return CPUSet.from_bits(bits)

    def intersection(self, *others: CPUSet) -> CPUSet:
        bits = self._bits
        for other in others:
            bits &= other._bits
        return CPUSet.from_bits(bits)

    def difference(self, *others: CPUSet) -> CPUSet:
        bits = self._bits
        for other in others:
            bits &= ~other._bits
        return CPUSet.from_bits(bits)

    def is_subset(self, other: CPUSet) -> bool:
        return self <= other

    def is_disjoint(self, other: CPUSet) -> bool:
        return self._bits & other._bits == 0

    def is_empty(self) -> bool:
        return self._bits == 0

    def min(self) -> int:
        """Smallest CPU id; ValueError on an empty set."""
        if not self._bits:
            msg = "min() of an empty CPUSet"
            raise ValueError(msg)
        return (self._bits & -self._bits).bit_length() - 1

    def max(self) -> int:
        """Largest CPU id; ValueError on an empty set."""
        if not self._bits:
            msg = "max() of an empty CPUSet"
            raise ValueError(msg)
        return self._bits.bit_length() - 1

    def sorted(self) -> tuple[int, ...]:
        return tuple(self)

    def lowest(self, count: int) -> CPUSet:
        """The ``count`` smallest ids (all of them when fewer)."""
        bits = self._bits
        taken = 0
        while bits and count > 0:
            low = bits & -bits
            taken |= low
            bits ^= low
            count -= 1
        return CPUSet.from_bits(taken)

    def runs(self) -> Iterator[tuple[int, int]]:
        """Maximal runs of consecutive ids as inclusive ``(start, end)`` pairs, ascending."""
        # The reversed binary text puts bit i at index i; str.find skips runs at C speed,
        # which keeps iteration and formatting linear on sets of thousands of CPUs.
        text = bin(self._bits)[:1:-1]
        start = text.find("1")
        while start != -1:
            end = text.find("0", start)
            if end == -1:
                end = len(text)
            yield start, end - 1
            start = text.find("1", end)


_EMPTY = CPUSet()
