"""Distance classes: NUMA nodes interchangeable by distance, and count vectors by sum.

Two nodes are interchangeable when swapping them leaves the distance matrix over the
searched nodes unchanged (asymmetric matrices included). Such swaps are symmetries, so
the relation is an equivalence (compose the swaps), every permutation inside a class is a
symmetry, and the sum of ``d[i][j]`` over a mask's ordered pairs (diagonal included)
depends only on its *count vector* ``n`` (nodes taken per class)::

    sum(n) = sum_a n_a*diag_a + n_a*(n_a - 1)*inner_a + sum_{a != b} n_a*n_b*between_ab

Uniform distances inside each socket and between sockets give one class per socket.

:func:`vectors_by_sum` yields the count vectors of one size in ascending sum, a group of
equal sums at a time, without listing them all first: a depth-first search over the
classes collects the vectors whose sum lies in a band ``(low, high]`` (the first band is
just the smallest sum; each next band is twice as wide), cut when the partial sum plus a
lower bound for the nodes still to place exceeds ``high``; a band that would hold more than
``BAND_CAP`` vectors is narrowed instead. The lower bound: each remaining node costs at
least its cheapest class's marginal cost (diagonal plus distances to and from the nodes
placed), filled class by class up to their sizes, plus the smallest distance between two
distinct remaining nodes for each ordered pair of them.

A :class:`Budget` (one capacity figure of a source) drops the vectors that cannot leave out
their other nodes within it: with counts ``n`` the cheapest left-out set takes the cheapest
``|C_a| - n_a`` members of each class, so a vector (or a partial one, with the cheapest
nodes of the classes still open) over the limit holds no hint of the source.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import Any

__all__ = ["Budget", "DistanceClasses", "distance_classes", "vector_count", "vectors_by_sum"]

Rows = Mapping[int, Sequence[int]]
Vector = tuple[int, ...]
BAND_CAP = 4096  # vectors held at once, unless one sum has more


@dataclass(frozen=True, slots=True)
class DistanceClasses:
    """Searched nodes grouped by distance symmetry, with the distances a sum needs."""

    members: tuple[tuple[int, ...], ...]  # node ids per class, ascending
    diagonal: tuple[int, ...]  # d[i][i] of a member
    inner: tuple[int, ...]  # d[i][j] between two members (0 for a single-node class)
    between: tuple[tuple[int, ...], ...]  # between[a][b]: d from a member of a to one of b

    def pair_sum(self, counts: Sequence[int]) -> int:
        """Sum of ``d[i][j]`` over ordered pairs of any mask with these counts per class."""
        taken = [(a, n) for a, n in enumerate(counts) if n]
        total = 0
        for a, n in taken:
            total += n * self.diagonal[a] + n * (n - 1) * self.inner[a]
            row = self.between[a]
            for b, m in taken:
                if b != a:
                    total += n * m * row[b]
        return total


def distance_classes(nodes: Sequence[int], rows: Rows) -> DistanceClasses:
    """Classes of interchangeable nodes among ``nodes`` (ascending; first member = key).

    Comparing with each class's first member suffices: the relation is an equivalence.
    Nodes ``i`` and ``j`` are swappable iff row ``i`` with entries ``i`` and ``j`` swapped
    is row ``j``, and the same for columns.
    """
    ordered = sorted(nodes)
    where = {node: index for index, node in enumerate(ordered)}
    row_of = {a: [rows[a][b] for b in ordered] for a in ordered}
    column_of = {a: [rows[b][a] for b in ordered] for a in ordered}

    def swappable(first: int, second: int) -> bool:
        for lines in (row_of, column_of):
            line = list(lines[first])
            i, j = where[first], where[second]
            line[i], line[j] = line[j], line[i]
            if line != lines[second]:
                return False
        return True

    groups: list[list[int]] = []
    for node in ordered:
        for group in groups:
            if swappable(group[0], node):
                group.append(node)
                break
        else:
            groups.append([node])
    firsts = [group[0] for group in groups]
    return DistanceClasses(
        members=tuple(tuple(group) for group in groups),
        diagonal=tuple(rows[first][first] for first in firsts),
        inner=tuple(rows[g[0]][g[1]] if len(g) > 1 else 0 for g in groups),
        between=tuple(tuple(rows[a][b] for b in firsts) for a in firsts),
    )


def vector_count(classes: DistanceClasses, size: int) -> int:
    """How many count vectors have ``size`` nodes (ways to split ``size`` over the classes)."""
    ways = [1] + [0] * size
    for members in classes.members:
        ways = [
            sum(ways[total - n] for n in range(min(len(members), total) + 1))
            for total in range(size + 1)
        ]
    return ways[size] if size >= 0 else 0


@dataclass(frozen=True, slots=True)
class Budget:
    """What leaving each class's members out costs (None: never), and the most in all."""

    costs: tuple[tuple[int | None, ...], ...]  # per class, per member (any order)
    limit: int


def _cheapest(costs: Sequence[int | None], limit: int) -> list[int]:
    """Cost of leaving out the k cheapest (k = 0, 1, ...); a required node costs past limit."""
    values = sorted(limit + 1 if cost is None else cost for cost in costs)
    prefix = [0]
    for value in values:
        prefix.append(prefix[-1] + value)
    return prefix


class _Bands:
    """Depth-first collection of the count vectors of one size whose sum lies in a band."""

    def __init__(
        self, classes: DistanceClasses, size: int, budgets: Sequence[Budget], cap: int
    ) -> None:
        self.classes = classes
        self.cap = cap
        self.size = size
        self.sizes = [len(members) for members in classes.members]
        count = len(self.sizes)
        self.budgets = budgets
        # per budget: per class, the cheapest k members; per a, the cheapest k of classes >= a
        self.own = [[_cheapest(costs, b.limit) for costs in b.costs] for b in budgets]
        self.rest = [
            [
                _cheapest([c for costs in b.costs[a:] for c in costs], b.limit)
                for a in range(count + 1)
            ]
            for b in budgets
        ]
        self.room = [sum(self.sizes[a:]) for a in range(count + 1)]  # nodes of classes >= a
        # both directions of a distance between classes, counted once per pair of nodes
        between = classes.between
        self.cross = [[between[a][b] + between[b][a] for b in range(count)] for a in range(count)]
        # smallest distance between two distinct nodes of classes >= a
        self.pair_floor = []
        for a in range(count + 1):
            values = [classes.inner[b] for b in range(a, count) if self.sizes[b] > 1]
            values += [between[b][c] for b in range(a, count) for c in range(a, count) if b != c]
            self.pair_floor.append(min(values, default=0))

    def _lower(self, a: int, left: int, marginal: list[int]) -> int:
        """Least the ``left`` nodes still to place (in classes >= a) can add to the sum."""
        if left == 0:
            return 0
        total = 0
        todo = left
        for cost, room in sorted((marginal[b], self.sizes[b]) for b in range(a, len(marginal))):
            take = min(room, todo)
            total += take * cost
            todo -= take
            if not todo:
                break
        return total + left * (left - 1) * self.pair_floor[a]

    def collect(self, low: int, high: int | None) -> list[tuple[int, Vector]] | None:
        """Vectors with ``low < sum <= high``, sorted (None: more than the cap);
        ``high`` None: those of the smallest sum above ``low``, however many."""
        classes, sizes, room, cross = self.classes, self.sizes, self.room, self.cross
        count = len(sizes)
        found: list[tuple[int, Vector]] = []
        ceiling = [high]  # shrinks to the best sum seen when ``high`` is None
        full = [False]  # the band overflowed: stop
        counts = [0] * count
        budgets, own, rest = self.budgets, self.own, self.rest

        def enter(a: int, left: int, partial: int, marginal: list[int], spent: list[int]) -> Any:
            """Class ``a``'s frame (None: a leaf, recorded here, or a branch cut)."""
            if a == count:
                if partial > low and (ceiling[0] is None or partial <= ceiling[0]):
                    if high is None and (ceiling[0] is None or partial < ceiling[0]):
                        found.clear()
                        ceiling[0] = partial
                    found.append((partial, tuple(counts)))
                    full[0] = high is not None and len(found) > self.cap
                return None
            top = ceiling[0]
            if top is not None and partial + self._lower(a, left, marginal) > top:
                return None
            return [a, left, partial, marginal, spent, min(sizes[a], left)]

        # Depth first over the classes on an explicit stack (there may be as many classes
        # as NUMA nodes): each frame tries its class's counts from the most down.
        stack: list[Any] = []
        if 0 <= self.size <= room[0]:
            first = enter(0, self.size, 0, list(classes.diagonal), [0] * len(budgets))
            if first is not None:
                stack.append(first)
        while stack and not full[0]:
            frame = stack[-1]
            a, left, partial, marginal, spent, n = frame
            if n < 0 or left - n > room[a + 1]:
                counts[a] = 0  # fewer here only leaves more for classes that cannot hold it
                stack.pop()
                continue
            frame[5] = n - 1
            more = [have + own[b][a][sizes[a] - n] for b, have in enumerate(spent)]
            out = room[a + 1] - (left - n)  # nodes of the later classes left out
            if any(
                more[b] + rest[b][a + 1][out] > budget.limit for b, budget in enumerate(budgets)
            ):
                continue
            counts[a] = n
            add = n * marginal[a] + n * (n - 1) * classes.inner[a]
            after = marginal
            if n:
                after = list(marginal)
                for b in range(a + 1, count):
                    after[b] += n * cross[a][b]
            child = enter(a + 1, left - n, partial + add, after, more)
            if child is not None:
                stack.append(child)

        if full[0]:
            return None
        found.sort()
        return found


def vectors_by_sum(
    classes: DistanceClasses,
    size: int,
    *,
    budgets: Sequence[Budget] = (),
    band_cap: int = BAND_CAP,
) -> Iterator[tuple[int, list[Vector]]]:
    """(sum, count vectors with that sum) for ``size`` nodes, ascending by sum, lazily;
    vectors that break a budget are left out."""
    bands = _Bands(classes, size, budgets, band_cap)
    low = -1
    step = 0
    while True:
        band = bands.collect(low, low + step) if step else []
        if band is None:  # too many at once: a narrower band next time
            step //= 2
            continue
        if not band:
            band = bands.collect(low, None) or []  # just the next sum, whatever the gap
            if not band:
                return
            step = max(1, band[0][0] // 8)
            low = band[0][0]
        else:
            low += step
            step *= 2
        for total, group in groupby(band, key=lambda item: item[0]):
            yield total, [counts for _total, counts in group]
