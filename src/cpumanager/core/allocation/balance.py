"""Scoring one NUMA combination of the distributed allocation (the kubelet's callback).

A combo of ``k`` nodes must hold the request (free CPUs, and free whole groups of ``g``);
each member gives ``d = floor(n / k / g) * g`` CPUs (align-by-socket: at most what its
whole groups allow) and must have ``d`` free. The remainder ``n - d*k`` goes ``g`` at a time,
round robin, over a subset of the members that still have a group free; subsets are tried
from the largest to single nodes, lexicographically, and the first that leaves the most
balanced machine is kept. A subset that cannot take the remainder in whole groups is skipped
(the kubelet would loop forever on it; see ``distribute``).

The balance score is the kubelet's ``standardDeviation`` of the free CPUs left on every NUMA
node that had free CPUs: mean and result rounded to 3 decimals, half away from zero.

Every combo leaves the same total free (all free CPUs minus ``n``) on the same nodes, so the
mean is the same for every combo of a call. That gives a cheap floor under a combo's score:
its members keep a known total of CPUs between them, in whole numbers, and the deviation is
smallest when those differ by at most one, the other nodes being fixed. The search uses it
to skip combos that cannot win (``search``).

Evaluations are memoized by the members' free counts in order (which fix the other nodes'
counts too), scores by the sorted vector.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Sequence
from itertools import combinations

from cpumanager.core.allocation.combos import class_counts, positions_of, runs

__all__ = ["ComboScorer", "Evaluation", "balance_score", "floor_score", "go_round", "round_robin"]

# (score, positions within the combo of the remainder subset, positions within the combo of
# the nodes the remainder search walked over) or None when infeasible.
Evaluation = tuple[float, tuple[int, ...], tuple[int, ...]] | None


def go_round(value: float) -> float:
    """Go's ``math.Round``: half away from zero."""
    whole = float(math.trunc(value))
    if abs(value - whole) >= 0.5:
        whole += math.copysign(1.0, value)
    return whole


def floor_score(lowest_unrounded: float) -> float:
    """The lowest 3-decimal score that a score of at least ``lowest_unrounded`` rounds to.

    A hundredth of a unit of the last decimal comes off first: far more than the
    floating-point error of either figure, so the floor never exceeds the score.
    """
    return go_round(lowest_unrounded * 1000 - 0.01) / 1000


def balance_score(values: Sequence[int]) -> float:
    """The kubelet's ``standardDeviation`` (3-decimal mean, 3-decimal result)."""
    count = len(values)
    mean = go_round(sum(values) / count * 1000) / 1000
    total = 0.0
    for value in values:
        deviation = value - mean
        total += deviation * deviation
    return go_round(math.sqrt(total / count) * 1000) / 1000


def round_robin(after: list[int], subset: Sequence[int], remainder: int, group: int) -> None:
    """Hand ``remainder`` CPUs out ``group`` at a time over ``subset`` (in place)."""
    while remainder > 0:
        for position in subset:
            if remainder == 0:
                break
            if after[position] < group:
                continue
            after[position] -= group
            remainder -= group


class ComboScorer:
    """Scores the combos of one distributed call (see the module docstring)."""

    def __init__(
        self,
        numas: list[int],
        free_counts: dict[int, int],
        count: int,
        group: int,
        *,
        sockets: list[tuple[int, ...]] | None,
    ) -> None:
        self.numas = numas
        self.free_counts = free_counts
        self.count = count
        self.group = group
        self.align = sockets is not None
        self.sockets = sockets or []
        self.values = [free_counts[numa] for numa in numas]
        # What a combo's score depends on, per position (see ``combos``): the free count,
        # and with align-by-socket the node's sockets too.
        self.keys: list[Hashable] = (
            list(self.values) if sockets is None else list(zip(self.values, sockets, strict=True))
        )
        self.all_values = Counter(free_counts.values())
        self.memo: dict[tuple[int, ...], Evaluation] = {}
        self.scores: dict[tuple[int, ...], float] = {}
        self.walks: dict[tuple[int, ...], list[tuple[int, ...]]] = {}
        nodes = max(len(free_counts), 1)
        self.nodes = nodes
        self.mean = go_round((sum(free_counts.values()) - count) / nodes * 1000) / 1000

    # --- pieces ------------------------------------------------------------------------

    def subsets(self, keys: tuple[int, ...]) -> list[tuple[int, ...]]:
        """Remainder subsets to try (positions in ``keys``): largest first, then in order.

        One representative per class of equal key sequences (see ``combos``).
        """
        found = self.walks.get(keys)
        if found is None:
            spans = runs(keys)
            lengths = [length for _, length in spans]
            found = self.walks[keys] = [
                positions_of(spans, counts)
                for size in range(len(keys), 0, -1)
                for counts in class_counts(lengths, size)
            ]
        return found

    def score(self, values: list[int]) -> float:
        key = tuple(sorted(values))
        found = self.scores.get(key)
        if found is None:
            found = balance_score(key)
            self.scores[key] = found
        return found

    def share(self, members: Sequence[int]) -> int:
        """``d``: the even share of each member (capped by whole groups with align)."""
        group = self.group
        share = self.count // len(members) // group * group
        if self.align:
            for value in members:
                share = min(share, value // group * group)
        return share

    def acceptable(self, combo_values: Sequence[int]) -> int | None:
        """The share of a combo that can hold the request, None for one that cannot."""
        count, group = self.count, self.group
        if sum(combo_values) < count:
            return None
        if sum(value // group for value in combo_values) * group < count:
            return None
        share = self.share(combo_values)
        if min(combo_values) < share:
            return None
        return share

    def least_member(self, k: int) -> int:
        """The fewest free CPUs a member of an acceptable k-combo can have.

        Without align-by-socket every member must hold the even share ``d``; with it the
        share is capped by the smallest member, so any node may take part.
        """
        if self.align:
            return 0
        return self.count // k // self.group * self.group

    def may_hold(self, k: int) -> bool:
        """Whether some k-combo may be acceptable: its k largest eligible nodes hold the
        request in whole groups."""
        least = self.least_member(k)
        eligible = sorted((value for value in self.values if value >= least), reverse=True)
        if len(eligible) < k:
            return False
        group = self.group
        return sum(value // group for value in eligible[:k]) * group >= self.count

    def floor(self, fixed: float, members: int, left: int) -> float:
        """The lowest score possible when ``members`` nodes keep ``left`` CPUs between them.

        ``fixed`` is the other nodes' sum of squared deviations. Counts are whole numbers,
        so the members are most even at ``left // members`` or one more each.
        """
        mean = self.mean
        low, high = divmod(left, members)
        total = fixed + (members - high) * (low - mean) ** 2 + high * (low + 1 - mean) ** 2
        return floor_score(math.sqrt(total / self.nodes))

    def multiset_floor(
        self,
        distinct: Sequence[int],
        available: Sequence[int],
        taken: Sequence[int],
        k: int,
        *,
        outside: float = 0.0,
    ) -> float | None:
        """The floor of combos taking ``taken[i]`` of the ``available[i]`` nodes whose free
        count is ``distinct[i]`` (ascending); None when they cannot hold the request (the
        checks of ``acceptable``). ``outside``: the squared deviations of nodes left out of
        ``distinct`` (never members).
        """
        group, count, mean = self.group, self.count, self.mean
        total = groups = 0
        fixed = outside
        smallest = -1
        for value, nodes, members in zip(distinct, available, taken, strict=True):
            if nodes > members:
                fixed += (nodes - members) * (value - mean) ** 2
            if members:
                total += members * value
                groups += members * (value // group)
                if smallest < 0:
                    smallest = value
        if total < count or groups * group < count:
            return None
        share = count // k // group * group
        if self.align:
            share = min(share, smallest // group * group)
        if smallest < share:
            return None
        return self.floor(fixed, k, total - count)

    def in_one_socket(self, spans: Sequence[tuple[int, int]], counts: Sequence[int]) -> bool:
        """Whether the nodes of a class share one socket (align-by-socket keys only)."""
        sockets: set[int] = set()
        for (start, _), taken in zip(spans, counts, strict=True):
            if taken:
                sockets.update(self.sockets[start])
        return len(sockets) <= 1

    # --- evaluation --------------------------------------------------------------------

    def evaluate(self, combo_values: tuple[int, ...]) -> Evaluation:
        found = self.memo.get(combo_values, False)
        if found is not False:
            return found  # type: ignore[return-value]
        result = self._evaluate(combo_values)
        self.memo[combo_values] = result
        return result

    def _evaluate(self, combo_values: tuple[int, ...]) -> Evaluation:
        count, group = self.count, self.group
        share = self.acceptable(combo_values)
        if share is None:
            return None
        others = list((self.all_values - Counter(combo_values)).elements())
        after = [value - share for value in combo_values]
        remainder = count - share * len(combo_values)
        if remainder == 0:
            return (self.score(after + others), (), ())
        candidates = tuple(i for i, value in enumerate(after) if value >= group)
        groups = [after[i] // group for i in candidates]
        walk = self.subsets(tuple(after[i] for i in candidates))
        best = math.inf
        best_picked: tuple[int, ...] = ()
        for picked in walk:
            if sum([groups[j] for j in picked]) * group < remainder:
                continue  # cannot take the remainder in whole groups (kubelet hangs here)
            trial = list(after)
            round_robin(trial, [candidates[j] for j in picked], remainder, group)
            score = self.score(trial + others)
            if score < best:
                best, best_picked = score, picked
        return (best, tuple(candidates[j] for j in best_picked), candidates)

    def evaluate_literal(self, combo: tuple[int, ...]) -> Evaluation:
        """The kubelet's per-combo code, step by step (used when the order repeats nodes)."""
        count, group, free_counts = self.count, self.group, self.free_counts
        distinct = list(dict.fromkeys(combo))
        if sum(free_counts[numa] for numa in distinct) < count:
            return None
        if sum(free_counts[numa] // group for numa in combo) * group < count:
            return None
        share = self.share([free_counts[numa] for numa in combo])
        if any(free_counts[numa] < share for numa in combo):
            return None
        keys = list(free_counts)
        after = dict(free_counts)
        for numa in combo:
            after[numa] -= share
        remainder = count - share * len(combo)
        if remainder == 0:
            return (self.score(list(after.values())), (), ())
        candidates = tuple(i for i, numa in enumerate(combo) if after[numa] >= group)
        best = math.inf
        best_subset: tuple[int, ...] = ()
        for size in range(len(candidates), 0, -1):
            for subset in combinations(candidates, size):
                if sum(after[combo[i]] // group for i in subset) * group < remainder:
                    continue
                trial = dict(after)
                left = remainder
                while left > 0:
                    for i in subset:
                        if left == 0:
                            break
                        if trial[combo[i]] < group:
                            continue
                        trial[combo[i]] -= group
                        left -= group
                score = self.score([trial[key] for key in keys])
                if score < best:
                    best, best_subset = score, subset
        return (best, best_subset, candidates)
