"""Phase 2 of the fast merge: is a mask the AND of one hint per list?

``M`` is achievable iff every list has a hint containing ``M`` and the nodes outside ``M``
(within the default mask) can all be left out: an explicit list leaves out what its chosen
hint lacks; an implicit (additive-capacity) source can leave out nodes whose free capacity
sums to at most its slack. That is a small assignment problem, solved by backtracking with
memoisation; nodes some source leaves out for free are assigned first.

Cost of one test: linear in the hints containing ``M`` per explicit list when some list holds
``M`` itself (then every other node is left out by that list and the answer is known);
otherwise the candidate sets are reduced to the maximal ones (largest first, each compared
with the sets kept so far) before the backtracking.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache

from cpumanager.core.hints.source import HintSource, iter_bits

__all__ = ["Cost", "Cover"]

Cost = tuple[int, ...]  # what leaving a node out costs a source, per resource dimension


class Cover:
    """Achievability tests against fixed lists (explicit options and implicit sources)."""

    def __init__(
        self, default: int, options: Sequence[Sequence[int]], implicit: Sequence[HintSource]
    ) -> None:
        self.default = default
        self.options = options
        self.implicit = implicit
        self._costs: tuple[int, int, dict[int, tuple[Cost | None, ...]]] | None = None
        self._leaves: int | None = None
        # sources are immutable: their slacks are computed once (each costs O(nodes))
        self._slacks = tuple(src.slack() for src in implicit)

    def achievable(self, merged: int) -> bool:
        """Is ``merged`` the AND of one hint per list (and the default)?"""
        if merged == 0:
            return False
        outside = self.default & ~merged
        sets: list[set[int]] = []
        covered = False
        for options in self.options:
            left_out = {outside & ~option for option in options if option & merged == merged}
            if not left_out:
                return False
            # a list holding ``merged`` itself leaves every other node out: then the other
            # lists only need some hint containing ``merged`` (the pairwise work is skipped)
            covered = covered or outside in left_out
            sets.append(left_out)
        return covered or self._cover(outside, [_maximal(left_out) for left_out in sets], 0)

    def kept(self, chosen: int) -> int | None:
        """Nodes every AND containing ``chosen`` keeps: none of its lists can leave them out.

        An explicit list leaves out what its hints containing ``chosen`` lack; an implicit
        source what it can afford alone. None: some explicit list has no such hint.
        """
        leaves = self._implicit_leaves()
        for options in self.options:
            usable = False
            for option in options:
                if option & chosen == chosen:
                    usable = True
                    leaves |= ~option
            if not usable:
                return None
        return self.default & ~leaves

    def _implicit_leaves(self) -> int:
        if self._leaves is None:
            leaves = 0
            for node in iter_bits(self.default):
                for src, slack in zip(self.implicit, self._slacks, strict=True):
                    cost = src.exclusion_cost(node)
                    if cost is not None and slack is not None and _fits(cost, slack):
                        leaves |= 1 << node
                        break
            self._leaves = leaves
        return self._leaves

    def _cover(self, todo: int, choices: list[list[int]], depth: int) -> bool:
        if depth == len(choices):
            return self._implicit_cover(todo)
        return any(self._cover(todo & ~left_out, choices, depth + 1) for left_out in choices[depth])

    def _node_costs(self) -> tuple[int, int, dict[int, tuple[Cost | None, ...]]]:
        """Per node, what each implicit source pays to leave it out (computed once).

        Returns (nodes some source leaves out for free, nodes no source can leave out,
        costs of the remaining nodes).
        """
        if self._costs is None:
            free = 0
            stuck = 0
            costly: dict[int, tuple[Cost | None, ...]] = {}
            for node in iter_bits(self.default):
                costs = tuple(src.exclusion_cost(node) for src in self.implicit)
                if any(cost is not None and not any(cost) for cost in costs):
                    free |= 1 << node
                elif all(cost is None for cost in costs):
                    stuck |= 1 << node
                else:
                    costly[node] = costs
            self._costs = (free, stuck, costly)
        return self._costs

    def _implicit_cover(self, todo: int) -> bool:
        if todo == 0:
            return True
        if not self.implicit:
            return False
        free, stuck, table = self._node_costs()
        if todo & stuck:
            return False
        todo &= ~free
        if todo == 0:
            return True
        slacks = tuple(slack or () for slack in self._slacks)
        costly = [(node, table[node]) for node in iter_bits(todo)]
        for which, slack in enumerate(slacks):
            spent = [costs[which] for _node, costs in costly]
            if all(cost is not None for cost in spent) and _fits(
                _total((cost for cost in spent if cost is not None), len(slack)), slack
            ):
                return True  # one source leaves every costly node out by itself
        if len(slacks) == 1:
            # costs are non-negative: one source fits them one by one iff it fits their sum
            return False
        costly.sort(key=lambda item: -max(sum(c) for c in item[1] if c is not None))

        @cache
        def assign(index: int, left: tuple[Cost, ...]) -> bool:
            if index == len(costly):
                return True
            _node, costs = costly[index]
            for which, cost in enumerate(costs):
                if cost is not None and _fits(cost, left[which]):
                    spare = tuple(have - used for have, used in zip(left[which], cost, strict=True))
                    if assign(index + 1, (*left[:which], spare, *left[which + 1 :])):
                        return True
            return False

        return assign(0, slacks)


def _maximal(sets: set[int]) -> list[int]:
    """The members of ``sets`` (distinct bitmasks) contained in no other member.

    Largest first, each checked only against those kept: a set is never inside one of equal
    or smaller size, so this is the pairwise filter at a fraction of its cost.
    """
    kept: list[int] = []
    for candidate in sorted(sets, key=int.bit_count, reverse=True):
        if not any(candidate & other == candidate for other in kept):
            kept.append(candidate)
    return kept


def _fits(cost: Cost, budget: Cost) -> bool:
    return all(used <= have for used, have in zip(cost, budget, strict=True))


def _total(costs: Iterable[Cost], dims: int) -> Cost:
    total = [0] * dims
    for cost in costs:
        for index, value in enumerate(cost):
            total[index] += value
    return tuple(total)
