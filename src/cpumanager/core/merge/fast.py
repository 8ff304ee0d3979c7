"""The kubelet's merge result without walking the cross product.

The kubelet keeps the best merged hint under a fixed total order (see ``exact.py``), so the
answer is "the best achievable merged hint", and we can look for it directly:

**Phase 1 - preferred.** A permutation merges to a preferred hint iff every hint is preferred
and every non-nil mask is the same mask ``m``; it then merges to ``default AND m``. A list
holding a preferred nil hint accepts any ``m``; every other list must prefer ``m`` itself.
So the preferred candidates are: the masks preferred by *every* list without a preferred nil
(a set intersection over explicit lists, a membership test for implicit sources), or, when
every list has a preferred nil, the default mask and every mask some list prefers. Preferred
always beats non-preferred, so the best candidate (narrowest, or closest with
prefer-closest) is the answer. When only implicit sources constrain ``m``, masks are
searched by size (the sources' preferred sizes) and, within a size, in the kubelet's order:
numerically smallest first (a depth-first search that drops the highest node first) or, for
prefer-closest, the search of ``closest.py`` (count vectors of distance classes, or a branch
and bound on the sum of distances); a branch is cut as soon as some source cannot complete
it to a hint (``can_complete``).

**Phase 2 - non-preferred.** Without a preferred candidate the flags no longer matter: the
answer is the best *achievable* AND (non-zero) under the bnp order: count == bnp, then
counts below bnp (largest first), then above (smallest first), ties by narrowest/closest.
* Few nodes (at most ``expand_limit``): the set of achievable ANDs is built list by list
  (``{a & m}``, deduplicated; at most 2^N values), masks clipped to the default and
  duplicates dropped first, so 4 lists of 255 hints on 8 nodes cost ~4 x 255 x 255
  operations instead of 255^4 permutations.
* Many nodes: candidate masks are searched count by count in the bnp order, each tested
  exactly: ``M`` is achievable iff every list has a hint containing ``M`` and the nodes
  outside ``M`` can be left out by some list. An explicit list leaves out what its chosen
  hint lacks; an implicit (additive-capacity) source can leave out nodes whose free
  capacity sums to at most its slack. That is a small assignment problem solved by
  backtracking with memoisation; nodes some list leaves out for free are assigned first.

Phase 2 cuts a branch when a node no list can leave out (no explicit hint containing the
branch lacks it, no implicit source can afford it) is no longer reachable.

Equivalence with the kubelet is argued in ``docs/merge.md`` and checked by differential
tests. Worst cases stay exponential (irregular distance matrices under prefer-closest;
adversarial capacities in phase 2), but no realistic input enumerates more than a few
thousand masks; with distance classes prefer-closest is polynomial (``closest.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import product

from cpumanager.core.hints.hint import TopologyHint
from cpumanager.core.hints.source import HintSource, iter_bits
from cpumanager.core.merge.classes import DistanceClasses, distance_classes
from cpumanager.core.merge.closest import (
    DEFAULT_CLASS_LIMIT,
    CapacityBound,
    capacity_bound,
    closest_search,
)
from cpumanager.core.merge.cover import Cover
from cpumanager.core.merge.exact import AnyProviderHints, RawHint, to_hint
from cpumanager.core.merge.lists import Explicit, normalize
from cpumanager.core.merge.options import NUMAInfo
from cpumanager.core.merge.pruned import all_explicit, solve_explicit

__all__ = ["DEFAULT_EXPAND_LIMIT", "FastStats", "merge_fast", "solve_lists"]

DEFAULT_EXPAND_LIMIT = 10

Key = tuple[float, ...]


@dataclass(slots=True)
class FastStats:
    """What the fast merge did (for explanations and benchmarks)."""

    phase: str = ""
    masks_tested: int = 0
    achievable_sets: int = 0


class _Solver:
    """Both phases over normalized lists (explicit ones and implicit sources)."""

    def __init__(
        self,
        numa: NUMAInfo,
        explicit: list[Explicit],
        implicit: list[HintSource],
        *,
        closest: bool,
        expand_limit: int,
        stats: FastStats,
        bnp: int | None = None,
        class_limit: int = DEFAULT_CLASS_LIMIT,
    ) -> None:
        self.numa = numa
        self.default = numa.default_bits
        self.explicit = explicit
        self.implicit = implicit
        self.closest = closest
        self.expand_limit = expand_limit
        self.stats = stats
        if bnp is None:
            bnp = max(
                [item.min_count for item in explicit] + [src.min_size() for src in implicit],
                default=0,
            )
        self.bnp = bnp
        self.class_limit = class_limit
        self._sums: dict[int, int] = {}
        self._classes: dict[int, DistanceClasses] = {}
        self.cover = Cover(self.default, [item.options for item in explicit], implicit)

    # --- orders -------------------------------------------------------------------------
    def within(self, bits: int) -> Key:
        """Order among masks of one size: numeric, or average distance then numeric."""
        if self.closest:
            return (self.numa.average_distance(bits), float(bits))
        return (float(bits),)

    def preferred_key(self, bits: int) -> Key:
        return (float(bits.bit_count()), *self.within(bits))

    def count_rank(self, count: int) -> tuple[int, int]:
        bnp = self.bnp
        if count == bnp:
            return (0, 0)
        if count < bnp:
            return (1, -count)
        return (2, count)

    def non_preferred_key(self, bits: int) -> Key:
        group, rank = self.count_rank(bits.bit_count())
        return (float(group), float(rank), *self.within(bits))

    def count_sequence(self, top: int) -> list[int]:
        """Counts in the bnp order: bnp, bnp-1, ..., 1, bnp+1, ..., top."""
        bnp = min(self.bnp, top)
        below = list(range(bnp, 0, -1))
        return below + list(range(max(bnp, 0) + 1, top + 1))

    # --- phase 1 ------------------------------------------------------------------------
    def preferred_phase(self) -> int | None:
        constraining = [item for item in self.explicit if not item.nil_preferred]
        default = self.default
        candidates: set[int]
        if constraining:
            candidates = set(constraining[0].preferred)
            for item in constraining[1:]:
                candidates &= item.preferred
            candidates = {
                bits for bits in candidates if all(src.preferred(bits) for src in self.implicit)
            }
        elif not self.implicit:
            candidates = {default}
            for item in self.explicit:
                candidates |= item.preferred
        else:
            return self.search_preferred()
        merged = {bits & default for bits in candidates} - {0}
        self.stats.masks_tested += len(candidates)
        return min(merged, key=self.preferred_key) if merged else None

    def search_preferred(self) -> int | None:
        sources = self.implicit
        universe = self.default
        for src in sources:
            universe &= src.universe
        sizes = set(sources[0].preferred_sizes())
        for src in sources[1:]:
            sizes &= set(src.preferred_sizes())

        def viable(chosen: int, pool: int, size: int) -> bool:
            return all(src.can_complete(chosen, pool, size) for src in sources)

        def accept(bits: int) -> bool:
            return all(src.preferred(bits) for src in sources)

        # a preferred hint is a hint: it leaves out no more capacity than each source's slack
        bounds = [bound for src in sources if (bound := capacity_bound(src, universe))]
        for size in sorted(sizes):
            if 0 < size <= universe.bit_count():
                found = self.search(universe, size, accept, viable, bounds=bounds)
                if found is not None:
                    return found
        return None

    # --- generic mask search ------------------------------------------------------------
    def search(
        self,
        universe: int,
        size: int,
        accept: Callable[[int], bool],
        viable: Callable[[int, int, int], bool],
        *,
        bounds: Sequence[CapacityBound] = (),
    ) -> int | None:
        """Best mask of ``size`` nodes of ``universe`` that ``accept`` takes (``within`` order).

        ``bounds`` (prefer-closest only) are capacity sources every accepted mask must fit.
        """
        nodes = sorted(iter_bits(universe), reverse=True)
        stats = self.stats
        if not self.closest:
            suffix = [0] * (len(nodes) + 1)
            for index in range(len(nodes) - 1, -1, -1):
                suffix[index] = suffix[index + 1] | (1 << nodes[index])

            # Depth first, leaving a node out before taking it, on an explicit stack: the
            # depth is the number of NUMA nodes, which the input chooses.
            stack = [(0, 0, 0)]
            while stack:
                index, chosen, taken = stack.pop()
                if taken == size:
                    stats.masks_tested += 1
                    if accept(chosen):
                        return chosen
                    continue
                if len(nodes) - index < size - taken:
                    continue
                if not viable(chosen, suffix[index], size):
                    continue
                stack.append((index + 1, chosen | (1 << nodes[index]), taken + 1))
                stack.append((index + 1, chosen, taken))
            return None

        def counted(bits: int) -> bool:
            stats.masks_tested += 1
            return accept(bits)

        classes = None
        if self.class_limit > 0:
            classes = self._classes.get(universe)
            if classes is None:
                classes = self._classes[universe] = distance_classes(nodes, self.numa.distances)
        return closest_search(
            nodes,
            self.numa.distances,
            size,
            counted,
            viable,
            bounds=bounds,
            pair_sum=self._pair_sum,
            limit=self.class_limit,
            classes=classes,
        )

    def _pair_sum(self, bits: int) -> int:
        cached = self._sums.get(bits)
        if cached is None:
            ids = list(iter_bits(bits))
            rows = self.numa.distances
            cached = sum(rows[a][b] for a in ids for b in ids)
            self._sums[bits] = cached
        return cached

    # --- phase 2 ------------------------------------------------------------------------
    def non_preferred_phase(self) -> int | None:
        if any(not item.options for item in self.explicit):
            return None
        if self.default.bit_count() <= self.expand_limit:
            return self._enumerate_ands()
        return self._search_ands()

    def _enumerate_ands(self) -> int | None:
        option_lists = [item.options for item in self.explicit]
        option_lists += [
            sorted({hint.mask.bits for hint in src.explicit() if hint.mask})
            for src in self.implicit
        ]
        option_lists.sort(key=len)
        reached = {self.default}
        for options in option_lists:
            reached = {value & option for value in reached for option in options}
            reached.discard(0)
            if not reached:
                return None
        self.stats.achievable_sets = len(reached)
        return min(reached, key=self.non_preferred_key)

    def _search_ands(self) -> int | None:
        universe = self.default
        for src in self.implicit:
            if src.slack() is None:
                return None
            universe &= src.universe
        for item in self.explicit:
            union = 0
            for option in item.options:
                union |= option
            universe &= union
        only_implicit = not self.explicit

        def viable(chosen: int, pool: int, size: int) -> bool:
            kept = self.cover.kept(chosen)
            if kept is None:
                return False
            missing = kept & ~chosen
            if missing & ~pool or missing.bit_count() > size - chosen.bit_count():
                return False
            return not only_implicit or self.achievable(chosen | pool)

        # with one list and nothing else, an achievable AND is one of its hints
        bounds: list[CapacityBound] = []
        if only_implicit and len(self.implicit) == 1:
            bound = capacity_bound(self.implicit[0], universe)
            bounds = [bound] if bound else []
        for count in self.count_sequence(universe.bit_count()):
            found = self.search(universe, count, self.achievable, viable, bounds=bounds)
            if found is not None:
                return found
        return None

    def achievable(self, merged: int) -> bool:
        """Is ``merged`` the AND of one hint per list (and the default)?"""
        return self.cover.achievable(merged)


def _run(solver: _Solver) -> RawHint | None:
    found = solver.preferred_phase()
    if found is not None:
        return (found, True)
    found = solver.non_preferred_phase()
    return None if found is None else (found, False)


def solve_lists(
    policy: str,
    numa: NUMAInfo,
    providers: Sequence[AnyProviderHints],
    *,
    prefer_closest: bool = False,
    expand_limit: int = DEFAULT_EXPAND_LIMIT,
    class_limit: int = DEFAULT_CLASS_LIMIT,
    stats: FastStats | None = None,
    pruned: bool = True,
) -> RawHint:
    """The merged (mask bits, preferred) pair before the policy's final rewriting.

    A rule with extra hints is a list "family or extras": each such list is solved once
    taking its hint from the family (as a rule) and once from the extras (as an explicit
    list), every combination, and the best answer wins (the kubelet's order is total, so
    the best over the parts is the best over the whole). ``bnp`` comes from the whole lists.
    Lists only (no rule anywhere) go to the branch and bound of ``pruned.py`` unless
    ``pruned`` is False (tests use that to run the searches below on lists).
    """
    stats = stats if stats is not None else FastStats()
    if pruned and all_explicit(providers):
        stats.phase = "explicit"
        return solve_explicit(policy, numa, providers, prefer_closest=prefer_closest)
    explicit, implicit, unions = normalize(policy, numa, providers)
    default = numa.default_bits
    if any(not item.hints for item in explicit):
        stats.phase = "empty-list"
        return (default, False)
    bnp = max(
        [item.min_count for item in explicit]
        + [src.min_size() for src in implicit]
        + [
            min(src.min_size(), *(bits.bit_count() for bits, _ in extra if bits))
            for src, extra in unions
        ],
        default=0,
    )
    closest = prefer_closest and policy != "single-numa-node"
    answers: list[RawHint] = []
    solver: _Solver | None = None
    for picks in product((False, True), repeat=len(unions)):
        chosen = [item for item, pick in zip(unions, picks, strict=True) if pick]
        solver = _Solver(
            numa,
            explicit + [Explicit.build(extra, default) for _src, extra in chosen],
            implicit + [src for (src, _extra), pick in zip(unions, picks, strict=True) if not pick],
            closest=closest,
            expand_limit=expand_limit,
            stats=stats,
            bnp=bnp,
            class_limit=class_limit,
        )
        answer = _run(solver)
        if answer is not None:
            answers.append(answer)
    assert solver is not None
    if not answers:
        stats.phase = "none"
        return (default, False)
    preferred = [bits for bits, pref in answers if pref and bits is not None]
    if preferred:
        stats.phase = "preferred"
        return (min(preferred, key=solver.preferred_key), True)
    stats.phase = "non-preferred"
    found = [bits for bits, _ in answers if bits is not None]
    return (min(found, key=solver.non_preferred_key), False)


def merge_fast(
    policy: str,
    numa: NUMAInfo,
    providers: Sequence[AnyProviderHints],
    *,
    prefer_closest: bool = False,
    expand_limit: int = DEFAULT_EXPAND_LIMIT,
    class_limit: int = DEFAULT_CLASS_LIMIT,
    stats: FastStats | None = None,
    pruned: bool = True,
) -> tuple[TopologyHint, bool]:
    """Same (hint, admit) as :func:`~cpumanager.core.merge.exact.merge_exact`, fast.

    ``expand_limit`` and ``class_limit`` choose between equivalent searches (tests set them
    to 0 to run the enumeration-free phase 2 and the prefer-closest branch and bound).
    """
    if policy == "none":
        return TopologyHint(None, False), True
    bits, preferred = solve_lists(
        policy,
        numa,
        providers,
        prefer_closest=prefer_closest,
        expand_limit=expand_limit,
        class_limit=class_limit,
        stats=stats,
        pruned=pruned,
    )
    if policy == "single-numa-node" and bits == numa.default_bits:
        return TopologyHint(None, preferred), preferred
    return to_hint((bits, preferred)), (True if policy == "best-effort" else preferred)
