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

__all__ = ["next_combination", "representative_combinations"]


def _runs(keys: Sequence[Hashable]) -> list[tuple[int, int]]:
    """(start, length) of every maximal run of equal consecutive keys."""
    runs: list[tuple[int, int]] = []
    start = 0
    for position in range(1, len(keys) + 1):
        if position == len(keys) or keys[position] != keys[start]:
            runs.append((start, position - start))
            start = position
    return runs


def representative_combinations(keys: Sequence[Hashable], size: int) -> Iterator[tuple[int, ...]]:
    """The lexicographically first ``size``-combination of positions of every class, in order.

    Positions index ``keys``; see the module docstring for the classes.
    """
    if size < 0 or size > len(keys):
        return
    runs = _runs(keys)
    room = [0] * (len(runs) + 1)  # positions available from run j on
    for j in range(len(runs) - 1, -1, -1):
        room[j] = room[j + 1] + runs[j][1]
    yield from _walk(runs, room, 0, size, ())


def _walk(
    runs: list[tuple[int, int]], room: list[int], j: int, need: int, prefix: tuple[int, ...]
) -> Iterator[tuple[int, ...]]:
    if need == 0:
        yield prefix
        return
    start, length = runs[j]
    for take in range(min(length, need), -1, -1):
        if room[j + 1] < need - take:
            return  # taking fewer here leaves more than the later runs can hold
        yield from _walk(runs, room, j + 1, need - take, prefix + tuple(range(start, start + take)))


def next_combination(positions: Sequence[int], n: int) -> tuple[int, ...] | None:
    """The combination of ``range(n)`` that follows ``positions`` lexicographically, or None."""
    size = len(positions)
    for i in range(size - 1, -1, -1):
        if positions[i] < n - size + i:
            first = positions[i] + 1
            return tuple(positions[:i]) + tuple(range(first, first + size - i))
    return None
