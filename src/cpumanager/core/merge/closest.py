"""Prefer-closest mask search: the best accepted mask of one size (kubelet order).

Among masks of one size the kubelet keeps the lower average distance (mean of ``d[i][j]``
over the mask's ordered pairs, diagonal included), then the numerically smaller mask; at a
fixed size that is the integer sum of distances, then the number. Two searches find the
best mask an ``accept`` predicate takes, with the same answer:

**Distance classes** (:func:`class_search`). Two nodes are interchangeable when swapping
them leaves the distance matrix over the searched nodes unchanged. The swaps that do are
symmetries, so "interchangeable" is an equivalence (compose the swaps), every permutation
inside a class is a symmetry, and the sum of a mask depends only on its *count vector*
``n`` (nodes taken per class)::

    sum(n) = sum_a n_a*diag_a + n_a*(n_a - 1)*inner_a + sum_{a != b} n_a*n_b*between_ab

Uniform distances inside each socket and between sockets give one class per socket. The
count vectors of the size are sorted by sum; for each group of equal sums, ascending, a
depth-first search per vector finds the numerically smallest accepted mask with exactly
those counts (highest node decided first, left out first, so numbers come out ascending),
and the first group with an accepted mask holds the answer (its smallest mask). A branch
is cut when a class can no longer fill its count, when the caller's ``viable`` refuses
(pool = the undecided nodes of classes still short), when a :class:`CapacityBound` shows
that no completion with these counts leaves out little enough capacity, or when it cannot
beat the group's best mask.

**Bound.** At most ``V(k)`` count vectors per size ``k`` (``V(k) <= prod_a (|C_a| + 1)``,
and the sum over every size is that product), each a depth-first search over the ``N``
searched nodes. When the caller passes the bound of a single one-figure capacity source
and ``accept`` is that source's membership at this size (phase 2 with one CPU source;
phase 1 at the preferred size), the bound is exact: every branch it lets through holds an
accepted mask, so the first vector of a group costs at most ``2N`` checks, a later one
(smaller than the group's best) at most one descent per node of that best's path,
``O(N^2)`` checks, and each tests at most one mask. Two sockets of ``N/2`` nodes give at
most ``N/2 + 1`` vectors per size. Past ``limit`` vectors, or when classes do not shrink the
search (every class a single node), :func:`closest_search` uses the branch and bound.

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

__all__ = [
    "DEFAULT_CLASS_LIMIT",
    "CapacityBound",
    "DistanceClasses",
    "branch_and_bound",
    "capacity_bound",
    "class_search",
    "closest_search",
    "count_vectors",
    "distance_classes",
]

DEFAULT_CLASS_LIMIT = 20_000  # count vectors per size above which the branch and bound runs

Rows = Mapping[int, Sequence[int]]
Accept = Callable[[int], bool]
Viable = Callable[[int, int, int], bool]
Cost = tuple[int, ...]


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


def _swappable(first: int, second: int, nodes: Sequence[int], rows: Rows) -> bool:
    """Does swapping the two nodes leave every distance among ``nodes`` unchanged?"""
    one, two = rows[first], rows[second]
    if one[first] != two[second] or one[second] != two[first]:
        return False
    for other in nodes:
        if other in (first, second):
            continue
        if one[other] != two[other] or rows[other][first] != rows[other][second]:
            return False
    return True


def distance_classes(nodes: Sequence[int], rows: Rows) -> DistanceClasses:
    """Classes of interchangeable nodes among ``nodes`` (ascending; first member = key).

    Comparing with each class's first member suffices: the relation is an equivalence.
    """
    ordered = sorted(nodes)
    groups: list[list[int]] = []
    for node in ordered:
        for group in groups:
            if _swappable(group[0], node, ordered, rows):
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


def count_vectors(
    classes: DistanceClasses, size: int, limit: int | None
) -> list[tuple[int, tuple[int, ...]]] | None:
    """Every (sum, count vector) of ``size`` nodes, sorted; None if more than ``limit``."""
    sizes = [len(group) for group in classes.members]
    if not 0 <= size <= sum(sizes):
        return []
    ways = [[0] * (size + 1) for _ in range(len(sizes) + 1)]
    ways[len(sizes)][0] = 1
    for a in range(len(sizes) - 1, -1, -1):
        for total in range(size + 1):
            ways[a][total] = sum(ways[a + 1][total - n] for n in range(min(sizes[a], total) + 1))
    if limit is not None and ways[0][size] > limit:
        return None
    found: list[tuple[int, tuple[int, ...]]] = []
    counts = [0] * len(sizes)

    def fill(a: int, left: int) -> None:
        if a == len(sizes):
            found.append((classes.pair_sum(counts), tuple(counts)))
            return
        for n in range(min(sizes[a], left) + 1):
            if ways[a + 1][left - n]:
                counts[a] = n
                fill(a + 1, left - n)
        counts[a] = 0

    fill(0, size)
    found.sort()
    return found


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
        seen = [0] * len(self.sizes)
        self.seen: list[tuple[int, ...]] = []  # per position: members of each class before it
        self.decided: list[int] = []  # per position: bits of the nodes before it
        bits = 0
        for node in self.order:
            self.seen.append(tuple(seen))
            self.decided.append(bits)
            seen[which[node]] += 1
            bits |= 1 << node
        self.seen.append(tuple(seen))
        self.decided.append(bits)
        # members of each class in search order, and the bits of each suffix of them
        self.members = [sorted(group, reverse=True) for group in classes.members]
        self.tails = [[bits_of(group[j:]) for j in range(len(group) + 1)] for group in self.members]
        self.bounds = list(bounds)
        self.cheapest = [[self._cheapest(b, group) for group in self.members] for b in self.bounds]

    @staticmethod
    def _cheapest(bound: CapacityBound, group: list[int]) -> list[tuple[list[Cost], int]]:
        """Per suffix of the class: cost of leaving out its k cheapest nodes, per figure."""
        dims = len(bound.slack)
        tables: list[tuple[list[Cost], int]] = []
        for j in range(len(group) + 1):
            costs = [c for c in (bound.costs[n] for n in group[j:]) if c is not None]
            columns = [sorted(cost[d] for cost in costs) for d in range(dims)]
            prefix: list[Cost] = [(0,) * dims]
            for k in range(len(costs)):
                prefix.append(tuple(prefix[-1][d] + columns[d][k] for d in range(dims)))
            tables.append((prefix, len(costs)))
        return tables


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
    bounds, cheapest = tables.bounds, tables.cheapest

    def fits(index: int, need: list[int], left_out: list[Cost]) -> bool:
        """Can the undecided nodes not taken (at best the cheapest) be left out too?"""
        where = seen[index]
        for b, bound in enumerate(bounds):
            total = [have + fixed for have, fixed in zip(left_out[b], bound.fixed, strict=True)]
            for a, short in enumerate(need):
                prefix, usable = cheapest[b][a][where[a]]
                drop = sizes[a] - where[a] - short
                if drop > usable:
                    return False
                total = [t + c for t, c in zip(total, prefix[drop], strict=True)]
            if any(t > s for t, s in zip(total, bound.slack, strict=True)):
                return False
        return True

    def walk(index: int, chosen: int, need: list[int], left_out: list[Cost]) -> int | None:
        # decided nodes are all above the undecided ones: the high part orders the masks
        if best is not None and chosen > best & tables.decided[index]:
            return None
        if bounds and not fits(index, need, left_out):
            return None
        if not any(need):
            return chosen if accept(chosen) else None
        where = seen[index]
        pool = 0
        for a, short in enumerate(need):
            if short:
                pool |= tables.tails[a][where[a]]
        if not viable(chosen, pool, size):
            return None
        node = order[index]
        a = cls[index]
        costs = [bound.costs[node] for bound in bounds]
        if sizes[a] - where[a] - 1 >= need[a] and None not in costs:
            # leave the node out first: smaller numbers first
            more = [
                tuple(x + y for x, y in zip(have, cost or (), strict=True))
                for have, cost in zip(left_out, costs, strict=True)
            ]
            found = walk(index + 1, chosen, need, more)
            if found is not None:
                return found
        if not need[a]:
            return None
        need[a] -= 1
        found = walk(index + 1, chosen | (1 << node), need, left_out)
        need[a] += 1
        return found

    return walk(0, 0, list(counts), [(0,) * len(bound.slack) for bound in bounds])


def class_search(
    classes: DistanceClasses,
    size: int,
    accept: Accept,
    viable: Viable,
    *,
    bounds: Sequence[CapacityBound] = (),
    vectors: list[tuple[int, tuple[int, ...]]] | None = None,
) -> int | None:
    """Best accepted mask of ``size`` nodes under (sum of distances, bits), by count vectors."""
    if vectors is None:
        vectors = count_vectors(classes, size, limit=None) or []
    tables = _Tables(classes, bounds)
    start = 0
    while start < len(vectors):
        end = start
        while end < len(vectors) and vectors[end][0] == vectors[start][0]:
            end += 1
        best: int | None = None
        for _sum, counts in vectors[start:end]:
            found = _smallest_with_counts(tables, counts, accept, viable, best)
            if found is not None and (best is None or found < best):
                best = found
        if best is not None:
            return best
        start = end
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
            vectors = count_vectors(classes, size, limit)
            if vectors is not None and len(vectors) < comb(len(nodes), size):
                return class_search(classes, size, accept, viable, bounds=bounds, vectors=vectors)
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

    def walk(index: int, chosen: int, taken: int) -> None:
        if taken == size:
            if accept(chosen):
                key = (pair_sum(chosen), chosen)
                if not best or key < best[0]:
                    best[:] = [key]
            return
        if len(order) - index < size - taken:
            return
        if not viable(chosen, rest[index], size):
            return
        if best and bound(chosen, index, size - taken) >= best[0]:
            return
        walk(index + 1, chosen | (1 << order[index]), taken + 1)
        walk(index + 1, chosen, taken)

    walk(0, 0, 0)
    return best[0][1] if best else None
