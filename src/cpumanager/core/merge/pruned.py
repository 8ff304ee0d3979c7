"""Explicit hint lists merged by branch and bound: the kubelet's answer without its walk.

When every provider gives its hints as lists (``compute merge``, a ``HintProvider``
returning tuples), the kubelet's walk (``exact.py``) visits every permutation of the cross
product. Its answer is the best merged hint under a total order, so most permutations
cannot matter:

* **Preferred first.** A preferred merged hint beats every non-preferred one, and a
  permutation is preferred only when all its hints are preferred and its masks equal; the
  candidates are the masks every constraining list prefers (``fast.py``'s phase 1), read
  straight from the lists' preferred hints. When one exists no other permutation is visited.
* **Non-preferred: branch and bound.** Otherwise the answer is the best non-zero AND of one
  option per list (nil = the default mask) under the bnp order (``exact.py``). The lists
  are walked smallest first, each partial AND ``acc`` deduplicated per depth, and a branch is
  cut when even its best conceivable completion cannot beat the best AND found so far: the
  final AND is a subset of ``acc``, so with ``|acc| <= bnp`` it is at best ``acc`` itself
  (every smaller subset ranks lower), and with ``|acc| > bnp`` at best a ``bnp``-node subset
  (numerically its lowest ``bnp`` nodes; with prefer-closest no tighter bound is used).
  The first list's options are tried in the order of that bound (ranked by whole-list
  passes: the least is walked, then every option the best so far beats is dropped at once),
  and at each depth the distinct ANDs with ``acc`` are built in one pass and visited in
  bound order, so once one cannot win none of the rest can.
* **One list.** With a single constraining list (the others hold nil hints only) the
  answer is the list's best option; it is found by whole-list passes (masks, counts,
  selection) rather than a walk.

Ties follow the kubelet: equal masks keep the first (equal keys mean equal masks, so a
later equal permutation never replaces the kept one), bnp is the kubelet's running
minimum (an empty mask followed by another does not count), and empty merged masks are
skipped. Differential tests (``tests/core/merge/test_pruned.py``) check every answer
against the walk itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import compress
from operator import and_, attrgetter, xor

from cpumanager.core.hints.hint import NO_PREFERENCE, TopologyHint
from cpumanager.core.merge.exact import AnyProviderHints, RawHint, min_affinity_count
from cpumanager.core.merge.options import NUMAInfo

__all__ = ["PrunedStats", "all_explicit", "solve_explicit"]

_BITS = attrgetter("mask._bits")
_PREF = attrgetter("preferred")
_INF = float("inf")

Key = tuple[float, ...]


@dataclass(slots=True)
class PrunedStats:
    """What the pruned merge did (for tests and benchmarks)."""

    phase: str = ""
    visited: int = 0  # partial ANDs expanded
    pruned: int = 0  # branches cut by the bound


@dataclass(slots=True)
class _List:
    """One filtered list as the merge reads it."""

    bits: list[int]  # non-nil masks, list order
    counts: list[int]  # their node counts
    nil: bool  # holds a nil hint
    nil_preferred: bool
    preferred: list[int]  # preferred non-nil masks
    min_count: int


def all_explicit(providers: Sequence[AnyProviderHints]) -> bool:
    """Every provider's answer is a list (or no preference): no implicit source anywhere."""
    for provider in providers:
        if provider:
            for hints in provider.values():
                if hints is not NO_PREFERENCE and not isinstance(hints, tuple):
                    return False
    return True


def _read(hints: tuple[TopologyHint, ...]) -> _List:
    try:
        bits: list[int] = list(map(_BITS, hints))
    except AttributeError:  # a nil hint somewhere: the slow reading
        return _read_with_nil(hints)
    preferred = list(compress(bits, map(_PREF, hints)))
    counts = list(map(int.bit_count, bits))
    low = min(counts)
    if low == 0:  # the kubelet's running minimum treats 0 as unset
        low = min_affinity_count(counts)
    return _List(bits, counts, False, False, preferred, low)


def _read_with_nil(hints: tuple[TopologyHint, ...]) -> _List:
    bits: list[int] = []
    preferred: list[int] = []
    nil = nil_preferred = False
    for hint in hints:
        if hint.mask is None:
            nil = True
            nil_preferred = nil_preferred or hint.preferred
        else:
            bits.append(hint.mask.bits)
            if hint.preferred:
                preferred.append(hint.mask.bits)
    counts = list(map(int.bit_count, bits))
    return _List(bits, counts, nil, nil_preferred, preferred, min_affinity_count(counts))


_NIL_PREFERRED = _List([], [], True, True, [], 0)
_NIL_NOT_PREFERRED = _List([], [], True, False, [], 0)


def _lists(providers: Sequence[AnyProviderHints]) -> list[_List]:
    """The kubelet's ``filterProvidersHints`` over explicit answers."""
    lists: list[_List] = []
    for provider in providers:
        if not provider:
            lists.append(_NIL_PREFERRED)
            continue
        for hints in provider.values():
            if hints is NO_PREFERENCE:
                lists.append(_NIL_PREFERRED)
            elif not hints:
                lists.append(_NIL_NOT_PREFERRED)
            else:
                assert isinstance(hints, tuple)
                lists.append(_read(hints))
    return lists


def _single_numa(item: _List) -> _List:
    """``filterSingleNumaHints``: preferred hints that are nil or name one node."""
    kept = [bits for bits in item.preferred if bits.bit_count() == 1]
    ones = [1] * len(kept)
    return _List(kept, ones, item.nil_preferred, item.nil_preferred, kept, 1 if kept else 0)


class _Order:
    """The kubelet's orders on merged masks, as sort keys (smaller is better)."""

    def __init__(self, numa: NUMAInfo, *, closest: bool, bnp: int) -> None:
        self.numa = numa
        self.closest = closest
        self.bnp = bnp

    def within(self, bits: int) -> Key:
        if self.closest:
            return (self.numa.average_distance(bits), float(bits))
        return (float(bits),)

    def preferred(self, bits: int) -> Key:
        return (float(bits.bit_count()), *self.within(bits))

    def non_preferred(self, bits: int) -> Key:
        count, bnp = bits.bit_count(), self.bnp
        if count == bnp:
            head: Key = (0.0, 0.0)
        elif count < bnp:
            head = (1.0, float(-count))
        else:
            head = (2.0, float(count))
        return (*head, *self.within(bits))

    def bound(self, acc: int) -> Key:
        """The best key any non-empty subset of ``acc`` can have."""
        count, bnp = acc.bit_count(), self.bnp
        if count <= bnp:
            return self.non_preferred(acc)
        want = bnp if bnp > 0 else 1
        head: Key = (0.0, 0.0) if bnp > 0 else (2.0, 1.0)
        if self.closest:
            return (*head, -_INF)
        low = 0
        for _ in range(want):  # keep the lowest nodes
            bit = acc & -acc
            low |= bit
            acc ^= bit
        return (*head, float(low))


def _preferred_phase(lists: list[_List], default: int, order: _Order) -> int | None:
    constraining = [item for item in lists if not item.nil_preferred]
    candidates: set[int]
    if constraining:
        candidates = set(constraining[0].preferred)
        for item in constraining[1:]:
            if not candidates:
                break
            candidates.intersection_update(item.preferred)
    else:
        candidates = {default}
        for item in lists:
            candidates.update(item.preferred)
    merged = {bits & default for bits in candidates}
    merged.discard(0)
    return min(merged, key=order.preferred) if merged else None


def _options(item: _List, default: int, contiguous: bool) -> list[int]:
    """The list's distinct non-empty merged contributions (nil = the default mask)."""
    if contiguous and (not item.bits or max(item.bits) <= default):
        values = set(item.bits)
    else:
        values = set(map(default.__and__, item.bits))
    if item.nil:
        values.add(default)
    values.discard(0)
    return list(values)


def _best_single(options: list[int], counts: list[int], order: _Order) -> int:
    """The best option of one list under the bnp order, by whole-list passes.

    ``options`` may repeat a mask (only the best one matters); ``counts`` are their counts.
    """
    bnp = order.bnp
    if bnp in counts:  # the usual case: the scan stops at the first such mask
        target = bnp
    else:
        present = set(counts)
        below = [count for count in present if count < bnp]
        target = max(below) if below else min(present)
    group = list(compress(options, map(target.__eq__, counts)))
    if not order.closest:
        return min(group)
    return min(group, key=order.within)


def _lowest_nodes(options: list[int], want: int) -> list[int]:
    """Each option's ``want`` lowest nodes, for the whole list at once (each pass drops
    every option's lowest node)."""
    rest = options
    for _ in range(want):
        rest = list(map(and_, rest, map((-1).__add__, rest)))
    return list(map(xor, options, rest))


def _branch_and_bound(options: list[list[int]], order: _Order, stats: PrunedStats) -> int | None:
    options = sorted(options, key=len)
    rest = options[1:]
    depth = len(rest)
    best: int | None = None
    best_key: Key = (_INF,)
    seen: list[set[int]] = [set() for _ in range(depth)]
    bound = order.bound

    def walk(level: int, acc: int) -> None:
        nonlocal best, best_key
        stats.visited += 1
        # the distinct ANDs this list can make with ``acc`` (at most 2^|acc|), built at once
        values = set(map(acc.__and__, rest[level]))
        values.discard(0)
        if level == depth - 1:
            for merged in values:
                key = order.non_preferred(merged)
                if key < best_key:
                    best, best_key = merged, key
            return
        marks = seen[level]
        for merged in sorted(values, key=bound):
            if merged in marks:
                continue
            marks.add(merged)
            if bound(merged) >= best_key:
                stats.pruned += 1
                break  # sorted by bound: no later value can win either
            walk(level + 1, merged)

    first = options[0]
    if not order.closest:
        # options of at least ``want`` nodes share one bound head, then their lowest nodes:
        # take the least, walk it, drop every option the best found so far already beats
        want = max(order.bnp, 1)
        head = order.bound((1 << want) - 1)[:-1]
        counts = list(map(int.bit_count, first))
        big = list(compress(first, map(want.__le__, counts)))
        first = list(compress(first, map(want.__gt__, counts)))
        low = _lowest_nodes(big, want)
        rounds = 0
        while big and rounds < _ROUNDS:
            rounds += 1
            least = min(low)
            if (*head, float(least)) >= best_key:
                stats.pruned += len(big)
                big = []
                break
            index = low.index(least)
            walk(0, big[index])
            keep = [True] * len(big)
            if best_key[: len(head)] == head:
                keep = list(map(best_key[len(head)].__gt__, low))
            keep[index] = False
            big, low = list(compress(big, keep)), list(compress(low, keep))
        first = [option for _low, option in sorted(zip(low, big, strict=True))] + first
    for option in sorted(first, key=bound) if order.closest else first:
        if bound(option) >= best_key:
            stats.pruned += 1
            if order.closest:
                break  # sorted by bound: no later option can win either
            continue
        walk(0, option)
    return best


_ROUNDS = 8  # walks of the least option before the rest is sorted once


def solve_explicit(
    policy: str,
    numa: NUMAInfo,
    providers: Sequence[AnyProviderHints],
    *,
    prefer_closest: bool = False,
    stats: PrunedStats | None = None,
) -> RawHint:
    """The merged (mask bits, preferred) pair for explicit lists, before the policy's rewrite.

    Same answer as the kubelet's walk (``exact.HintMerger``) over the same lists.
    """
    stats = stats if stats is not None else PrunedStats()
    default = numa.default_bits
    lists = _lists(providers)
    if policy == "single-numa-node":
        lists = [_single_numa(item) for item in lists]
        if any(not item.bits and not item.nil for item in lists):
            stats.phase = "empty-list"
            return (default, False)
    bnp = max((item.min_count for item in lists), default=0)
    closest = prefer_closest and policy != "single-numa-node"
    order = _Order(numa, closest=closest, bnp=bnp)
    found = _preferred_phase(lists, default, order)
    if found is not None:
        stats.phase = "preferred"
        return (found, True)
    contiguous = default & (default + 1) == 0
    constraining = [item for item in lists if item.bits]
    if len(constraining) == 1:
        item = constraining[0]
        if contiguous and not item.nil and max(item.bits) <= default and 0 not in item.counts:
            # the list's masks are its merged masks: read in list order, no set built
            stats.phase = "non-preferred"
            return (_best_single(item.bits, item.counts, order), False)
    per_list = [_options(item, default, contiguous) for item in constraining]
    if any(not values for values in per_list):
        stats.phase = "none"
        return (default, False)
    if not per_list:  # nil hints only: every permutation merges to the default mask
        stats.phase = "non-preferred"
        return (default, False)
    # a list with a nil hint offers the default mask too: kept as an option, not a shortcut
    if len(per_list) == 1:
        stats.phase = "non-preferred"
        options = per_list[0]
        return (_best_single(options, list(map(int.bit_count, options)), order), False)
    answer = _branch_and_bound(per_list, order, stats)
    stats.phase = "non-preferred" if answer is not None else "none"
    return (answer, False) if answer is not None else (default, False)
