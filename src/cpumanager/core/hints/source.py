"""Implicit hint lists: a provider's hints described by a rule instead of enumerated.

The kubelet's providers (CPU manager, device manager, memory manager) all build their hints
the same way: every non-empty mask of NUMA nodes (from some *universe* of nodes) whose free
capacity covers the request is a hint, and the hints with the fewest nodes the request could
ever need are preferred. At 64 NUMA nodes that is up to 2^64 - 1 hints, so the fast merge
takes the rule instead. :class:`HintSource` is the interface it needs; every implementation
must describe exactly the list its ``explicit()`` returns:

* **membership** ``feasible(bits)``: the mask is one of the hints. The family must be
  *upward closed within the universe*: a feasible mask stays feasible when nodes of the
  universe are added (more nodes never hold less). Masks leaving the universe are never hints.
* **preference** ``preferred(bits)``: the hint is preferred (implies feasible);
  ``preferred_sizes()`` lists every node count a preferred hint can have.
* **narrowest** ``min_size()``: the fewest nodes of any hint (0 when there is none); it feeds
  the merge's "best non-preferred affinity count".
* **search support**: ``can_complete(chosen, pool, size)`` says whether a hint of exactly
  ``size`` nodes lies between ``chosen`` and ``chosen | pool``; ``slack()`` and
  ``exclusion_cost(node)`` describe how many nodes can be left out of the universe while a
  hint remains (additive capacity: leaving out a node costs its free capacity, and the total
  left out must not exceed the slack; ``None`` = the node can never be left out).

:class:`CapacityHintSource` is the additive-capacity rule shared by the kubelet's CPU and
device hint generators: ``base + sum(free[node] for node in mask) >= need``, every node of
``required`` in the mask, and ``|mask| == preferred_size`` preferred (optionally also every
mask spanning exactly ``aligned_sockets`` sockets, the CPU manager's align-by-socket rule;
``node_sockets`` maps a node to the bits of its sockets).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Protocol, runtime_checkable

from cpumanager.core.bitmask import NUMAMask, iterate_masks
from cpumanager.core.hints.hint import TopologyHint

__all__ = ["CapacityHintSource", "HintSource", "bits_of", "iter_bits"]


def iter_bits(bits: int) -> Iterator[int]:
    """Node ids of a bit mask, ascending."""
    while bits:
        low = bits & -bits
        yield low.bit_length() - 1
        bits ^= low


def bits_of(nodes: Iterator[int] | tuple[int, ...] | list[int]) -> int:
    """Bit mask of node ids."""
    bits = 0
    for node in nodes:
        bits |= 1 << node
    return bits


@runtime_checkable
class HintSource(Protocol):
    """One resource's hints as a rule (see the module docstring for the contract)."""

    @property
    def universe(self) -> int: ...

    def explicit(self) -> tuple[TopologyHint, ...]: ...

    def feasible(self, bits: int) -> bool: ...

    def preferred(self, bits: int) -> bool: ...

    def preferred_sizes(self) -> tuple[int, ...]: ...

    def min_size(self) -> int: ...

    def can_complete(self, chosen: int, pool: int, size: int) -> bool: ...

    def slack(self) -> int | None: ...

    def exclusion_cost(self, node: int) -> int | None: ...

    def describe(self) -> str: ...


@dataclass(frozen=True, slots=True)
class CapacityHintSource:
    """Hints = masks of ``universe`` nodes whose free capacity covers ``need``.

    ``free`` maps each universe node to its free units (CPUs, devices, bytes); ``base``
    counts units usable whatever the mask (the CPU manager's reusable CPUs); ``required``
    nodes must be in every hint; ``impossible`` marks a source with no hints at all (e.g.
    reusable CPUs outside the machine). ``node_order`` is the order in which ``explicit``
    enumerates masks (the kubelet's ``IterateBitMasks`` order over its node list).
    """

    universe: int
    free: Mapping[int, int]
    need: int
    preferred_size: int
    base: int = 0
    required: int = 0
    impossible: bool = False
    node_order: tuple[int, ...] = ()
    node_sockets: Mapping[int, int] = field(default_factory=lambda: MappingProxyType({}))
    aligned_sockets: int | None = None
    unit: str = "units"

    # --- membership ---------------------------------------------------------------------
    def _capacity(self, bits: int) -> int:
        free = self.free
        return self.base + sum(free.get(node, 0) for node in iter_bits(bits))

    def feasible(self, bits: int) -> bool:
        if self.impossible or bits == 0 or bits & ~self.universe:
            return False
        if self.required & ~bits:
            return False
        return self._capacity(bits) >= self.need

    def _socket_aligned(self, bits: int) -> bool:
        if self.aligned_sockets is None:
            return False
        sockets = 0
        for node in iter_bits(bits):
            sockets |= self.node_sockets.get(node, 0)
        return sockets.bit_count() == self.aligned_sockets

    def preferred(self, bits: int) -> bool:
        if not self.feasible(bits):
            return False
        return bits.bit_count() == self.preferred_size or self._socket_aligned(bits)

    def preferred_sizes(self) -> tuple[int, ...]:
        if self.aligned_sockets is not None:
            return tuple(range(1, self.universe.bit_count() + 1))
        return (self.preferred_size,)

    def explicit(self) -> tuple[TopologyHint, ...]:
        """Every hint in the kubelet's order (2^N masks: for small N and for tests)."""
        order = self.node_order or tuple(iter_bits(self.universe))
        return tuple(
            TopologyHint(mask, self.preferred(mask.bits))
            for mask in iterate_masks(order)
            if self.feasible(mask.bits)
        )

    # --- search support -----------------------------------------------------------------
    def _top_capacity(self, pool: int, take: int) -> int:
        if take <= 0:
            return 0
        values = sorted((self.free.get(node, 0) for node in iter_bits(pool)), reverse=True)
        return sum(values[:take])

    def min_size(self) -> int:
        if self.impossible or self.required & ~self.universe:
            return 0
        forced = self.required
        have = self._capacity(forced)
        size = forced.bit_count()
        if size and have >= self.need:
            return size
        values = sorted(
            (self.free.get(node, 0) for node in iter_bits(self.universe & ~forced)),
            reverse=True,
        )
        for value in values:
            have += value
            size += 1
            if have >= self.need:
                return size
        return 0

    def can_complete(self, chosen: int, pool: int, size: int) -> bool:
        if self.impossible:
            return False
        forced = chosen | self.required
        if forced & ~self.universe or self.required & ~(chosen | pool):
            return False
        extra = size - forced.bit_count()
        if extra < 0 or size == 0:
            return False
        rest = pool & self.universe & ~forced
        if rest.bit_count() < extra:
            return False
        return self._capacity(forced) + self._top_capacity(rest, extra) >= self.need

    def slack(self) -> int | None:
        """Free units above the need when every universe node is used; None: no hint at all."""
        if self.impossible or self.required & ~self.universe or self.universe == 0:
            return None
        spare = self._capacity(self.universe) - self.need
        return spare if spare >= 0 else None

    def exclusion_cost(self, node: int) -> int | None:
        if not (self.universe >> node) & 1:
            return 0
        if (self.required >> node) & 1:
            return None
        return self.free.get(node, 0)

    def describe(self) -> str:
        free = ", ".join(f"{node}:{self.free.get(node, 0)}" for node in iter_bits(self.universe))
        need = self.need - self.base
        text = f"needs {need} free {self.unit} (free per node {free})"
        if self.required:
            text += f"; must include nodes {NUMAMask.from_bits(self.required)}"
        return text + f"; preferred hints have {self.preferred_size} node(s)"
