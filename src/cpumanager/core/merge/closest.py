"""Prefer-closest mask search: the best accepted mask of one size (kubelet order).

Among masks of one size the kubelet keeps the lower average distance (mean of ``d[i][j]``
over the mask's ordered pairs, diagonal included), then the numerically smaller mask; at a
fixed size that is the integer sum of distances, then the number. Two searches find the
best mask an ``accept`` predicate takes, with the same answer:

**Distance classes** (:func:`class_search`; ``classes.py``). When nodes come in classes
interchangeable by distance (one per socket on most machines), a mask's sum depends only
on its count vector (nodes per class). The count vectors of the size come in ascending sum
(``vectors_by_sum``), a group of equal sums at a time; a depth-first search per vector
finds the numerically smallest accepted mask with exactly those counts (highest node
decided first, left out first, so numbers come out ascending), and the first group with
an accepted mask holds the answer (its smallest mask). A branch is cut when a class can
no longer fill its count, when the caller's ``viable`` refuses (pool = the undecided nodes
of classes still short), when a :class:`CapacityBound` shows that no completion with these
counts leaves out little enough capacity, or when it cannot beat the group's best mask.

**Bound.** At most ``V(k)`` count vectors per size ``k`` (``V(k) <= prod_a (|C_a| + 1)``,
and the sum over every size is that product), each a depth-first search over the ``N``
searched nodes; vectors past the first group with an answer are never produced. When the
caller passes the bound of a single one-figure capacity source and ``accept`` is that
source's membership at this size (phase 2 with one CPU source; phase 1 at the preferred
size), the bound is exact: every branch it lets through holds an accepted mask, so the
first vector of a group costs at most ``2N`` checks, a later one (smaller than the group's
best) at most one descent per node of that best's path, ``O(N^2)`` checks, and each tests
at most one mask. Two sockets of ``N/2`` nodes give at most ``N/2 + 1`` vectors per size.
Past ``limit`` vectors, or when classes do not shrink the search (every class a single
node), :func:`closest_search` uses the branch and bound.

**Branch and bound** (:func:`branch_and_bound`, any matrix): ascending nodes, include
first; lower bound = current sum + the cheapest additions + the smallest off-diagonal
distance for pairs among additions; a branch that only ties the best sum is cut when the
smallest mask it can still produce is not smaller.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from math import comb

from cpumanager.core.hints.source import HintSource, bits_of, iter_bits
from cpumanager.core.merge.classes import (
    Budget,
    DistanceClasses,
    distance_classes,
    vector_count,
    vectors_by_sum,
)

__all__ = [
    "DEFAULT_CLASS_LIMIT",
    "CapacityBound",
    "branch_and_bound",
    "capacity_bound",
    "class_search",
    "closest_search",
]

DEFAULT_CLASS_LIMIT = 1_000_000  # count vectors per size past which the branch and bound runs

Rows = Mapping[int, Sequence[int]]
Accept = Callable[[int], bool]
Viable = Callable[[int, int, int], bool]
Cost = tuple[int, ...]


@dataclass(frozen=True, slots=True)
class CapacityBound:
    """What an additive-capacity source lets a mask of the searched nodes leave out.

    A hint of such a source leaves out (of its universe) nodes whose costs sum to at most
    ``slack`` in every figure, and never a node whose cost is None. ``fixed`` is the cost of
    the universe's nodes outside the search, which every mask leaves out.
    """

    slack: Cost
    fixed: Cost
    costs: Mapping[int, Cost | None]


def capacity_bound(src: HintSource, searched: int) -> CapacityBound | None:
    """The source's bound over ``searched`` nodes; None when it has none to give (no
    slack, or a node it requires lies outside the search: ``accept`` alone decides then).
    """
    slack = src.slack()
    if slack is None:
        return None
    fixed = [0] * len(slack)
    for node in iter_bits(src.universe & ~searched):
        cost = src.exclusion_cost(node)
        if cost is None:
            return None
        fixed = [have + add for have, add in zip(fixed, cost, strict=True)]
    costs = {node: src.exclusion_cost(node) for node in iter_bits(searched)}
    return CapacityBound(slack, tuple(fixed), costs)


class _Tables:
    """Per-size tables shared by every count vector (nodes in decreasing order)."""

    def __init__(self, classes: DistanceClasses, bounds: Sequence[CapacityBound]) -> None:
        self.order = sorted((n for group in classes.members for n in group), reverse=True)
        self.sizes = [len(group) for group in classes.members]
        which = {n: a for a, group in enumerate(classes.members) for n in group}
        self.cls = [which[n] for n in self.order]
        self.bounds = list(bounds)
        seen = [0] * len(self.sizes)
        self.seen: list[tuple[int, ...]] = []  # per position: members of each class before it
        self.decided: list[int] = []  # per position: bits of the nodes before it
        # per bound and position: (cost of the nodes before it, how many of them are required)
        self.spent: list[list[tuple[Cost, int]]] = [[] for _ in self.bounds]
        bits = 0
        running = [((0,) * len(bound.slack), 0) for bound in self.bounds]
        for node in [*self.order, None]:
            self.seen.append(tuple(seen))
            self.decided.append(bits)
            for b, bound in enumerate(self.bounds):
                self.spent[b].append(running[b])
                if node is not None:
                    running[b] = _plus(running[b], bound.costs[node])
            if node is not None:
                seen[which[node]] += 1
                bits |= 1 << node
        # members of each class in search order, and the bits of each suffix of them
        self.members = [sorted(group, reverse=True) for group in classes.members]
        self.tails = [[bits_of(group[j:]) for j in range(len(group) + 1)] for group in self.members]
        self._cheap: dict[tuple[int, int, int], tuple[list[Cost], int]] = {}

    def fits(self, index: int, need: Sequence[int], taken: Sequence[tuple[Cost, int]]) -> bool:
        """Can every bound's source leave out the decided nodes not ``taken`` and the
        undecided ones not needed (at best the cheapest ones of each class)?"""
        sizes, where = self.sizes, self.seen[index]
        for b, bound in enumerate(self.bounds):
            (cost, required), (used, held) = self.spent[b][index], taken[b]
            if required > held:
                return False  # a node the source requires was left out
            total = [x - y + z for x, y, z in zip(cost, used, bound.fixed, strict=True)]
            for a, short in enumerate(need):
                prefix, usable = self.cheapest(b, a, where[a])
                drop = sizes[a] - where[a] - short
                if drop > usable:
                    return False
                total = [t + c for t, c in zip(total, prefix[drop], strict=True)]
            if any(t > s for t, s in zip(total, bound.slack, strict=True)):
                return False
        return True

    def cheapest(self, b: int, a: int, j: int) -> tuple[list[Cost], int]:
        """Class ``a`` from its ``j``-th member on: cost of leaving out its k cheapest nodes
        per figure (k = 0, 1, ...), and how many it can leave out at all (bound ``b``)."""
        key = (b, a, j)
        found = self._cheap.get(key)
        if found is None:
            dims = len(self.bounds[b].slack)
            costs = [
                c for c in (self.bounds[b].costs[n] for n in self.members[a][j:]) if c is not None
            ]
            columns = [sorted(cost[d] for cost in costs) for d in range(dims)]
            prefix: list[Cost] = [(0,) * dims]
            for k in range(len(costs)):
                prefix.append(tuple(prefix[-1][d] + columns[d][k] for d in range(dims)))
            found = self._cheap[key] = (prefix, len(costs))
        return found


def _plus(total: tuple[Cost, int], cost: Cost | None) -> tuple[Cost, int]:
    """Add a node's cost (None: a node the source requires) to a running total."""
    if cost is None:
        return total[0], total[1] + 1
    return tuple(x + y for x, y in zip(total[0], cost, strict=True)), total[1]


_Frame = tuple[int, int, tuple[int, ...], list[tuple[Cost, int]]]
"""One undecided branch of the class search: (index, chosen, need, taken)."""


def _smallest_with_counts(
    tables: _Tables,
    counts: tuple[int, ...],
    accept: Accept,
    viable: Viable,
    best: int | None,
) -> int | None:
    """Numerically smallest accepted mask with ``counts`` per class, if below ``best``."""
    order, cls, seen, sizes = tables.order, tables.cls, tables.seen, tables.sizes
    size = sum(counts)
    bounds = tables.bounds

    # Depth first on an explicit stack (the depth is the number of NUMA nodes, which the
    # input chooses): a node is left out before it is taken, so the first mask accepted is
    # the numerically smallest.
    stack: list[_Frame] = [(0, 0, counts, [((0,) * len(bound.slack), 0) for bound in bounds])]
    while stack:
        index, chosen, need, taken = stack.pop()
        while index < len(order) and not need[cls[index]]:
            index += 1  # a full class: its nodes are left out (``fits`` counts them)
        # decided nodes are all above the undecided ones: the high part orders the masks
        if best is not None and chosen > best & tables.decided[index]:
            continue
        if bounds and not tables.fits(index, need, taken):
            continue
        if not any(need):
            if accept(chosen):
                return chosen
            continue
        where = seen[index]
        pool = 0
        for a, short in enumerate(need):
            if short:
                pool |= tables.tails[a][where[a]]
        if not viable(chosen, pool, size):
            continue
        node = order[index]
        a = cls[index]
        fewer = (*need[:a], need[a] - 1, *need[a + 1 :])
        more = [_plus(have, bound.costs[node]) for have, bound in zip(taken, bounds, strict=True)]
        stack.append((index + 1, chosen | (1 << node), fewer, more))
        if sizes[a] - where[a] - 1 >= need[a]:  # leave the node out first: smaller numbers
            stack.append((index + 1, chosen, need, taken))
    return None


def class_search(
    classes: DistanceClasses,
    size: int,
    accept: Accept,
    viable: Viable,
    *,
    bounds: Sequence[CapacityBound] = (),
) -> int | None:
    """Best accepted mask of ``size`` nodes under (sum of distances, bits), by count vectors."""
    tables = _Tables(classes, bounds)
    # each figure of each bound: vectors whose cheapest left-out set is over it are skipped
    budgets = [
        Budget(
            tuple(
                tuple(None if c is None else c[d] for c in map(bound.costs.get, group))
                for group in classes.members
            ),
            bound.slack[d] - bound.fixed[d],
        )
        for bound in tables.bounds
        for d in range(len(bound.slack))
    ]
    for _sum, group in vectors_by_sum(classes, size, budgets=budgets):
        best: int | None = None
        for counts in group:
            found = _smallest_with_counts(tables, counts, accept, viable, best)
            if found is not None and (best is None or found < best):
                best = found
        if best is not None:
            return best
    return None


def closest_search(
    nodes: Sequence[int],
    rows: Rows,
    size: int,
    accept: Accept,
    viable: Viable,
    *,
    bounds: Sequence[CapacityBound] = (),
    pair_sum: Callable[[int], int],
    limit: int = DEFAULT_CLASS_LIMIT,
    classes: DistanceClasses | None = None,
) -> int | None:
    """Best accepted mask of ``size`` of ``nodes``: by classes when they shrink the search."""
    if limit > 0:
        classes = classes or distance_classes(nodes, rows)
        if len(classes.members) < len(nodes):
            vectors = vector_count(classes, size)
            if vectors <= limit and vectors < comb(len(nodes), size):
                return class_search(classes, size, accept, viable, bounds=bounds)
    return branch_and_bound(nodes, rows, size, accept, viable, pair_sum=pair_sum)


def branch_and_bound(
    nodes: Sequence[int],
    rows: Rows,
    size: int,
    accept: Accept,
    viable: Viable,
    *,
    pair_sum: Callable[[int], int],
) -> int | None:
    """Branch and bound on (sum of distances, bits): ascending nodes, include first.

    Including low nodes first finds low-numbered masks early, so a branch whose bound
    only ties the best sum is cut as soon as its smallest possible mask is not smaller.
    """
    order = sorted(nodes)
    rest = [0] * (len(order) + 1)
    for index in range(len(order) - 1, -1, -1):
        rest[index] = rest[index + 1] | (1 << order[index])
    off_diagonal = [rows[a][b] for a in order for b in order if a != b]
    floor = min(off_diagonal, default=0)
    best: list[tuple[int, int]] = []

    def bound(chosen: int, index: int, missing: int) -> tuple[int, int]:
        low = chosen
        for node in order[index : index + missing]:
            low |= 1 << node
        if missing == 0:
            return pair_sum(chosen), low
        ids = list(iter_bits(chosen))
        adds = sorted(rows[y][y] + sum(rows[x][y] + rows[y][x] for x in ids) for y in order[index:])
        total = pair_sum(chosen) + sum(adds[:missing])
        return total + missing * (missing - 1) * floor, low

    # Depth first on an explicit stack (as deep as the NUMA nodes), taking a node before
    # leaving it out, as the bound expects.
    stack = [(0, 0, 0)]
    while stack:
        index, chosen, taken = stack.pop()
        if taken == size:
            if accept(chosen):
                key = (pair_sum(chosen), chosen)
                if not best or key < best[0]:
                    best[:] = [key]
            continue
        if len(order) - index < size - taken:
            continue
        if not viable(chosen, rest[index], size):
            continue
        if best and bound(chosen, index, size - taken) >= best[0]:
            continue
        stack.append((index + 1, chosen, taken))
        stack.append((index + 1, chosen | (1 << order[index]), taken + 1))
    return best[0][1] if best else None
