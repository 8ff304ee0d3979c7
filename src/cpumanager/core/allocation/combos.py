"""Walking k-combinations one representative per class of interchangeable choices.

The distributed search walks every k-combination of a list in lexicographic order and keeps
the first one with the lowest score. When the score depends only on the *keys* of the
chosen positions, in order (a NUMA node's free CPU count, say), two neighbouring positions
with equal keys are interchangeable: every combination taking ``c_j`` positions from each
run ``j`` of equal consecutive keys has the same key sequence, hence the same score. The
lexicographically first combination of such a class takes the first ``c_j`` positions of
each run, and taking more from an earlier run always sorts first, so walking the count
vectors with each run's count descending yields those representatives in lexicographic
order. A walk that keeps the first strictly better score therefore stops on the same
combination whether it sees every combination or only the representatives.

With ``n`` positions in ``r`` runs the walk sees at most ``C(n, k)`` representatives (all
keys distinct) and as few as one (all equal): 16 free NUMA nodes of one size give one
4-combination to score instead of 1,820.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence

__all__ = [
    "class_counts",
    "next_combination",
    "positions_of",
    "representative_combinations",
    "runs",
]


def runs(keys: Sequence[Hashable]) -> list[tuple[int, int]]:
    """(start, length) of every maximal run of equal consecutive keys."""
    found: list[tuple[int, int]] = []
    start = 0
    for position in range(1, len(keys) + 1):
        if position == len(keys) or keys[position] != keys[start]:
            found.append((start, position - start))
            start = position
    return found


def class_counts(lengths: Sequence[int], size: int) -> list[tuple[int, ...]]:
    """How many positions each run gives, for every class of ``size``-combinations.

    ``lengths`` are the runs' lengths; classes come in the order of their representatives
    (lexicographic), so the first run's count goes down first.
    """
    if size < 0 or size > sum(lengths):
        return []
    room = [0] * (len(lengths) + 1)  # positions available from run j on
    for j in range(len(lengths) - 1, -1, -1):
        room[j] = room[j + 1] + lengths[j]
    found: list[tuple[int, ...]] = []
    counts = [0] * len(lengths)

    def fill(j: int, need: int) -> None:
        if need == 0:
            found.append(tuple(counts))
            return
        for take in range(min(lengths[j], need), -1, -1):
            if room[j + 1] < need - take:
                break  # taking fewer here leaves more than the later runs can hold
            counts[j] = take
            fill(j + 1, need - take)
        counts[j] = 0

    fill(0, size)
    return found


def positions_of(spans: Sequence[tuple[int, int]], counts: Sequence[int]) -> tuple[int, ...]:
    """The representative of a class: the first ``counts[j]`` positions of each run."""
    chosen: list[int] = []
    for (start, _), taken in zip(spans, counts, strict=True):
        chosen.extend(range(start, start + taken))
    return tuple(chosen)


def representative_combinations(keys: Sequence[Hashable], size: int) -> Iterator[tuple[int, ...]]:
    """The lexicographically first ``size``-combination of positions of every class, in order.

    Positions index ``keys``; see the module docstring for the classes.
    """
    spans = runs(keys)
    for counts in class_counts([length for _, length in spans], size):
        yield positions_of(spans, counts)


def next_combination(positions: Sequence[int], n: int) -> tuple[int, ...] | None:
    """The combination of ``range(n)`` that follows ``positions`` lexicographically, or None."""
    size = len(positions)
    for i in range(size - 1, -1, -1):
        if positions[i] < n - size + i:
            first = positions[i] + 1
            return tuple(positions[:i]) + tuple(range(first, first + size - i))
    return None
