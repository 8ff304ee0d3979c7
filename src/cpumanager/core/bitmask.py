"""NUMAMask: an immutable set of NUMA node ids with the kubelet's orderings.

The kubelet keeps NUMA affinity in a uint64, so node ids stop at 63. Here the mask is a
Python int without that cap; every ordering is the kubelet's:

* ``is_less_than``: numeric comparison of the masks (more low bits sort first);
* ``is_narrower_than``: fewer nodes, then ``is_less_than``;
* :func:`iterate_masks`: every non-empty subset of a list of ids, by increasing size, and
  within a size in lexicographic order of positions in that list.

``kubelet_string`` reproduces the kubelet's zero-padded binary ``String()``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import combinations

from cpumanager.core.bitset import IntBitSet
from cpumanager.errors import InvalidNUMAMaskError

__all__ = ["NUMAMask", "iterate_masks"]


class NUMAMask(IntBitSet):
    """Immutable, hashable set of NUMA node ids."""

    __slots__ = ()

    def __init__(self, node_ids: Iterable[int] = ()) -> None:
        bits = 0
        for node in node_ids:
            if node < 0:
                msg = f"NUMA node ids are non-negative, got {node}"
                raise InvalidNUMAMaskError(msg)
            bits |= 1 << node
        object.__setattr__(self, "_bits", bits)

    @classmethod
    def from_bits(cls, bits: int) -> NUMAMask:
        if bits < 0:
            msg = "a NUMA bitmask is non-negative"
            raise InvalidNUMAMaskError(msg)
        return cls._wrap(bits)

    @classmethod
    def of(cls, *node_ids: int) -> NUMAMask:
        return cls(node_ids)

    def __repr__(self) -> str:
        return f"NUMAMask({list(self)})"

    def __str__(self) -> str:
        return ",".join(str(node) for node in self)

    def ids(self) -> tuple[int, ...]:
        return tuple(self)

    def is_less_than(self, other: NUMAMask) -> bool:
        """The kubelet's ``IsLessThan``: numeric order of the masks."""
        return self._bits < other._bits

    def is_greater_than(self, other: NUMAMask) -> bool:
        return self._bits > other._bits

    def is_narrower_than(self, other: NUMAMask) -> bool:
        """The kubelet's ``IsNarrowerThan``: fewer nodes, then numerically smaller."""
        mine, theirs = self.count(), other.count()
        if mine == theirs:
            return self._bits < other._bits
        return mine < theirs

    def narrow_key(self) -> tuple[int, int]:
        """Sort key equivalent to ``is_narrower_than`` (narrowest first)."""
        return (self._bits.bit_count(), self._bits)

    def kubelet_string(self) -> str:
        """The kubelet's ``String()``: binary, zero-padded to its peculiar minimum width."""
        width = 2
        for shift in range(62, 0, -2):
            if self._bits > (1 << shift):
                width = shift + 2
                break
        return format(self._bits, f"0{width}b")


def iterate_masks(node_ids: Sequence[int]) -> Iterator[NUMAMask]:
    """Every non-empty subset of ``node_ids`` in the kubelet's ``IterateBitMasks`` order."""
    for size in range(1, len(node_ids) + 1):
        for combo in combinations(node_ids, size):
            bits = 0
            for node in combo:
                bits |= 1 << node
            yield NUMAMask.from_bits(bits)
