"""IntBitSet: the immutable int-backed set that CPUSet and NUMAMask share.

Bit i of one Python int means member i. An int has no width limit, and union,
intersection and difference are single operations on it. Subclasses add their own
construction checks, text forms and domain queries; a CPUSet never equals a NUMAMask.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Self

__all__ = ["IntBitSet"]


class IntBitSet:
    """Immutable, hashable set of non-negative ints (equal only to its own kind)."""

    __slots__ = ("_bits",)
    _bits: int

    @classmethod
    def _wrap(cls, bits: int) -> Self:
        new = cls.__new__(cls)
        object.__setattr__(new, "_bits", bits)
        return new

    @property
    def bits(self) -> int:
        """The backing integer (bit i set means member i)."""
        return self._bits

    def __setattr__(self, name: str, value: object) -> None:
        msg = f"{type(self).__name__} is immutable"
        raise AttributeError(msg)

    def __reduce__(self) -> tuple[object, tuple[int]]:
        return (type(self)._wrap, (self._bits,))

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._bits))

    def __eq__(self, other: object) -> bool:
        if type(other) is type(self):
            return self._bits == other._bits
        return NotImplemented

    def __len__(self) -> int:
        return self._bits.bit_count()

    def __bool__(self) -> bool:
        return self._bits != 0

    def __contains__(self, member: object) -> bool:
        return isinstance(member, int) and member >= 0 and (self._bits >> member) & 1 == 1

    def __iter__(self) -> Iterator[int]:
        bits = self._bits
        if bits.bit_count() * 16 >= bits.bit_length():
            # Dense (the usual case): one pass over the binary text beats bit tricks on a
            # wide int, whose every operation costs O(width).
            text = bin(bits)[:1:-1]
            return iter([member for member, digit in enumerate(text) if digit == "1"])
        return (member for start, end in self.runs() for member in range(start, end + 1))

    def runs(self) -> Iterator[tuple[int, int]]:
        """Maximal runs of consecutive members as inclusive ``(start, end)`` pairs."""
        # The reversed binary text puts bit i at index i; str.find skips runs at C speed,
        # which keeps iteration and formatting linear on sets of thousands of members.
        # Shifting the lowest member to bit 0 first keeps a small set of high ids cheap.
        bits = self._bits
        if not bits:
            return
        low = (bits & -bits).bit_length() - 1
        text = bin(bits >> low)[:1:-1]
        start = 0
        while start != -1:
            end = text.find("0", start)
            if end == -1:
                end = len(text)
            yield start + low, end - 1 + low
            start = text.find("1", end)

    # --- set algebra -------------------------------------------------------------------

    def __or__(self, other: Self) -> Self:
        return self._wrap(self._bits | other._bits)

    def __and__(self, other: Self) -> Self:
        return self._wrap(self._bits & other._bits)

    def __sub__(self, other: Self) -> Self:
        return self._wrap(self._bits & ~other._bits)

    def __xor__(self, other: Self) -> Self:
        return self._wrap(self._bits ^ other._bits)

    def __le__(self, other: Self) -> bool:
        return self._bits & ~other._bits == 0

    def __lt__(self, other: Self) -> bool:
        return self._bits & ~other._bits == 0 and self._bits != other._bits

    def __ge__(self, other: Self) -> bool:
        return other._bits & ~self._bits == 0

    def __gt__(self, other: Self) -> bool:
        return other._bits & ~self._bits == 0 and self._bits != other._bits

    def union(self, *others: Self) -> Self:
        bits = self._bits
        for other in others:
            bits |= other._bits
        return self._wrap(bits)

    def intersection(self, *others: Self) -> Self:
        bits = self._bits
        for other in others:
            bits &= other._bits
        return self._wrap(bits)

    def difference(self, *others: Self) -> Self:
        bits = self._bits
        for other in others:
            bits &= ~other._bits
        return self._wrap(bits)

    def is_subset(self, other: Self) -> bool:
        return self._bits & ~other._bits == 0

    def is_disjoint(self, other: Self) -> bool:
        return self._bits & other._bits == 0

    def is_empty(self) -> bool:
        return self._bits == 0

    def count(self) -> int:
        return self._bits.bit_count()

    def min(self) -> int:
        """Smallest member; ValueError on an empty set."""
        if not self._bits:
            msg = f"min() of an empty {type(self).__name__}"
            raise ValueError(msg)
        return (self._bits & -self._bits).bit_length() - 1

    def max(self) -> int:
        """Largest member; ValueError on an empty set."""
        if not self._bits:
            msg = f"max() of an empty {type(self).__name__}"
            raise ValueError(msg)
        return self._bits.bit_length() - 1

    def sorted(self) -> tuple[int, ...]:
        return tuple(self)

    def lowest(self, count: int) -> Self:
        """The ``count`` smallest members (all of them when fewer)."""
        bits = self._bits
        taken = 0
        while bits and count > 0:
            low = bits & -bits
            taken |= low
            bits ^= low
            count -= 1
        return self._wrap(taken)
