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
  hint remains (additive capacity, one figure per resource dimension: leaving out a node
  costs its free capacity, and the total left out must not exceed the slack in any
  dimension; ``None`` = the node can never be left out).
* **extras** ``extras()``: hints the list holds besides the rule's family (they may lie
  outside the universe; the memory manager's nodes already serving an allocation). The
  family answers the questions above; ``explicit()`` returns family and extras together.

:class:`CapacityHintSource` is the additive-capacity rule shared by the kubelet's CPU and
device hint generators: ``base + sum(free[node] for node in mask) >= need``, every node of
``required`` in the mask, and ``|mask| == preferred_size`` preferred (optionally also every
mask spanning exactly ``aligned_sockets`` sockets, the CPU manager's align-by-socket rule;
``node_sockets`` maps a node to the bits of its sockets).

:class:`MultiCapacityHintSource` is the memory manager's rule: several needs (memory and
each hugepage size) that the same mask must cover at once, plus explicit extras.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Protocol, TypeGuard, runtime_checkable

from cpumanager.core.bitmask import NUMAMask, iterate_masks
from cpumanager.core.hints.hint import NoPreference, TopologyHint

__all__ = [
    "CapacityHintSource",
    "HintSource",
    "MultiCapacityHintSource",
    "bits_of",
    "fewest_nodes",
    "is_hint_source",
    "iter_bits",
    "smallest_mask",
]


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

    def slack(self) -> tuple[int, ...] | None: ...

    def exclusion_cost(self, node: int) -> tuple[int, ...] | None: ...

    def extras(self) -> tuple[TopologyHint, ...]: ...

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

    def slack(self) -> tuple[int, ...] | None:
        """Free units above the need when every universe node is used; None: no hint at all."""
        if self.impossible or self.required & ~self.universe or self.universe == 0:
            return None
        spare = self._capacity(self.universe) - self.need
        return (spare,) if spare >= 0 else None

    def exclusion_cost(self, node: int) -> tuple[int, ...] | None:
        if not (self.universe >> node) & 1:
            return (0,)
        if (self.required >> node) & 1:
            return None
        return (self.free.get(node, 0),)

    def extras(self) -> tuple[TopologyHint, ...]:
        return ()

    def describe(self) -> str:
        free = ", ".join(f"{node}:{self.free.get(node, 0)}" for node in iter_bits(self.universe))
        need = self.need - self.base
        text = f"needs {need} free {self.unit} (free per node {free})"
        if self.required:
            text += f"; must include nodes {NUMAMask.from_bits(self.required)}"
        return text + f"; preferred hints have {self.preferred_size} node(s)"


# --- several needs at once ----------------------------------------------------------------

Capacities = Mapping[int, tuple[int, ...]]


def _add(total: list[int], row: tuple[int, ...] | None) -> None:
    if row is not None:
        for index, value in enumerate(row):
            total[index] += value


def _covers(free: Capacities, bits: int, needs: tuple[int, ...]) -> bool:
    total = [0] * len(needs)
    for node in iter_bits(bits):
        _add(total, free.get(node))
    return all(have >= need for have, need in zip(total, needs, strict=True))


def smallest_mask(
    pool: int, size: int, free: Capacities, needs: tuple[int, ...], *, required: int = 0
) -> int | None:
    """The numerically smallest mask of ``size`` nodes of ``pool`` (holding ``required``)
    whose capacities cover every need, or None.

    Deciding the highest node first and trying to leave it out first reaches the smallest
    number first; a branch ends when even the best remaining nodes (per need) fall short.
    """
    pool |= required
    if size <= 0 or pool.bit_count() < size or required.bit_count() > size:
        return None
    nodes = sorted(iter_bits(pool), reverse=True)
    dims = len(needs)
    zero = (0,) * dims
    rows = [free.get(node, zero) for node in nodes]

    def bound_ok(index: int, have: list[int], missing: int) -> bool:
        if missing == 0:
            return all(h >= n for h, n in zip(have, needs, strict=True))
        for dim in range(dims):
            gap = needs[dim] - have[dim]
            if gap <= 0:
                continue
            best = sorted((row[dim] for row in rows[index:]), reverse=True)[:missing]
            if sum(best) < gap:
                return False
        return True

    def walk(index: int, chosen: int, have: list[int], taken: int) -> int | None:
        missing = size - taken
        if missing == 0:
            return chosen if not required & ~chosen and bound_ok(index, have, 0) else None
        if len(nodes) - index < missing or (required & ~chosen).bit_count() > missing:
            return None
        if not bound_ok(index, have, missing):
            return None
        bit = 1 << nodes[index]
        if not required & bit:
            found = walk(index + 1, chosen, have, taken)
            if found is not None:
                return found
        more = list(have)
        _add(more, rows[index])
        return walk(index + 1, chosen | bit, more, taken + 1)

    return walk(0, 0, [0] * dims, 0)


def fewest_nodes(pool: int, free: Capacities, needs: tuple[int, ...]) -> int:
    """The fewest nodes of ``pool`` that cover every need together (0: none do)."""
    if pool == 0 or not _covers(free, pool, needs):
        return 0
    for size in range(1, pool.bit_count() + 1):
        if smallest_mask(pool, size, free, needs) is not None:
            return size
    return 0  # pragma: no cover - the whole pool covers the needs


@dataclass(frozen=True, slots=True)
class MultiCapacityHintSource:
    """Hints = masks of ``universe`` nodes whose free capacities cover every need, plus extras.

    ``free`` maps each universe node to one free figure per need (``labels`` names them);
    hints of ``preferred_size`` nodes are preferred. ``extra_hints`` are further hints of the
    list outside that family (``explicit`` interleaves them in the kubelet's order over
    ``node_order``).
    """

    universe: int
    free: Capacities
    needs: tuple[int, ...]
    preferred_size: int
    labels: tuple[str, ...] = ()
    extra_hints: tuple[TopologyHint, ...] = ()
    node_order: tuple[int, ...] = ()

    def feasible(self, bits: int) -> bool:
        if bits == 0 or bits & ~self.universe:
            return False
        return _covers(self.free, bits, self.needs)

    def preferred(self, bits: int) -> bool:
        return bits.bit_count() == self.preferred_size and self.feasible(bits)

    def preferred_sizes(self) -> tuple[int, ...]:
        return (self.preferred_size,)

    def min_size(self) -> int:
        return fewest_nodes(self.universe, self.free, self.needs)

    def can_complete(self, chosen: int, pool: int, size: int) -> bool:
        if chosen & ~self.universe or size == 0:
            return False
        extra = size - chosen.bit_count()
        rest = pool & self.universe & ~chosen
        if extra < 0 or rest.bit_count() < extra:
            return False
        have = [0] * len(self.needs)
        for node in iter_bits(chosen):
            _add(have, self.free.get(node))
        gaps = tuple(max(0, need - got) for need, got in zip(self.needs, have, strict=True))
        if extra == 0:
            return not any(gaps)
        return smallest_mask(rest, extra, self.free, gaps) is not None

    def slack(self) -> tuple[int, ...] | None:
        if self.universe == 0:
            return None
        total = [0] * len(self.needs)
        for node in iter_bits(self.universe):
            _add(total, self.free.get(node))
        spare = tuple(have - need for have, need in zip(total, self.needs, strict=True))
        return None if any(value < 0 for value in spare) else spare

    def exclusion_cost(self, node: int) -> tuple[int, ...] | None:
        if not (self.universe >> node) & 1:
            return (0,) * len(self.needs)
        return self.free.get(node, (0,) * len(self.needs))

    def extras(self) -> tuple[TopologyHint, ...]:
        return self.extra_hints

    def explicit(self) -> tuple[TopologyHint, ...]:
        """Family and extras in the kubelet's order (2^N masks: for small N and for tests)."""
        extra = {h.mask.bits: h for h in self.extra_hints if h.mask is not None}
        order = self.node_order or tuple(iter_bits(self.universe | sum(extra)))
        found: list[TopologyHint] = []
        for mask in iterate_masks(order):
            if self.feasible(mask.bits):
                found.append(TopologyHint(mask, mask.count() == self.preferred_size))
            elif mask.bits in extra:
                found.append(extra[mask.bits])
        return tuple(found)

    def describe(self) -> str:
        labels = self.labels or tuple(f"need {index}" for index in range(len(self.needs)))
        needs = ", ".join(f"{label} {need}" for label, need in zip(labels, self.needs, strict=True))
        text = f"needs {needs} free on nodes {NUMAMask.from_bits(self.universe)}"
        if self.extra_hints:
            shown = " ".join("{" + str(h.mask) + "}" for h in self.extra_hints)
            text += f" or on {shown}"
        return text + f"; preferred hints have {self.preferred_size} node(s)"


_RULES = (CapacityHintSource, MultiCapacityHintSource)


def is_hint_source(value: object) -> TypeGuard[HintSource]:
    """``isinstance(value, HintSource)``, fast for what providers answer.

    Hint lists (tuples), NO_PREFERENCE and the two rules above are told apart by type; only
    other objects pay for the Protocol's structural check (in Python 3.11 it walks the
    Protocol's attributes on every call, which costs more than a small merge).
    """
    if isinstance(value, tuple | NoPreference):
        return False
    if isinstance(value, _RULES):
        return True
    return isinstance(value, HintSource)
