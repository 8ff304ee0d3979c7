"""The first entry with the lowest score, scoring as few entries as possible.

The kubelet keeps the first of its candidates with the lowest score (a strict ``<`` while
walking them in order). When every candidate comes with a *floor* (a score it cannot go
below), the same answer is found by scoring candidates in order of floor and stopping once
a floor is above the best score found, or equal to it for a candidate that comes later than
the best one (it could at most tie, and ties go to the earlier candidate).

Scores are rounded to 3 decimals (half away from zero), so floors are too: ``floor_score``
rounds a lower bound of the unrounded score after taking a millionth of a unit off it, far
more than the floating-point error of either figure, so the floor never exceeds the score.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

__all__ = ["first_minimum", "floor_score", "go_round"]


def go_round(value: float) -> float:
    """Go's ``math.Round``: half away from zero."""
    whole = float(math.trunc(value))
    if abs(value - whole) >= 0.5:
        whole += math.copysign(1.0, value)
    return whole


def floor_score(lowest_unrounded: float) -> float:
    """The lowest 3-decimal score that a score of at least ``lowest_unrounded`` rounds to."""
    return go_round(lowest_unrounded * 1000 - 1e-6) / 1000


def first_minimum(
    floors: Sequence[float | None], score: Callable[[int], float]
) -> tuple[float, int] | None:
    """(lowest score, index of the first entry with it); None when no entry is acceptable.

    ``floors[i]`` is entry i's floor, or None when entry i is not acceptable (never scored);
    ``score(i)`` scores entry i.
    """
    ranked = sorted((floor, index) for index, floor in enumerate(floors) if floor is not None)
    best = math.inf
    best_index = -1
    for floor, index in ranked:
        if floor > best or (floor == best and index > best_index):
            break  # every entry left scores more, or ties and comes later
        found = score(index)
        if found < best or (found == best and index < best_index):
            best, best_index = found, index
    if best_index < 0:
        return None
    return best, best_index
