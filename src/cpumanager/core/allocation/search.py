"""The distributed allocation's walk over k-combinations of the NUMA order.

The kubelet walks every k-combination of its NUMA order lexicographically and keeps the
first with the lowest score (a strict ``<``); with align-by-socket a combo inside one socket
replaces any cross-socket best and is never replaced by one. Its callback breaks the walk on
the combination after the one that scored 0 (with align-by-socket: 0 inside one socket), and
that break decides what a released kubelet's kept slice reads back (``go_append``).

Two walks give the same combo and the same break:

* ``literal_search`` does exactly that, with the step-by-step evaluation: the reference,
  and what runs when the NUMA order repeats a node;
* ``search`` groups combos by how many nodes of each free count they take: that fixes
  whether they can hold the request and a floor under their score (``balance``). Groups
  are visited by floor; inside one, its classes of interchangeable combos (``combos``) are
  scored through one representative each, in the kubelet's order. A group whose floor is
  above the best score is never opened, and once a group's floor equals the best score only
  classes that come earlier than the best combo are scored: the rest could at most tie,
  and ties go to the earlier combo. With align-by-socket the single-socket classes are
  searched first, the others only when no single-socket combo is acceptable. When the
  winner scored 0 the kubelet's walk broke right after it, on the next combination.
"""

from __future__ import annotations

import math
from itertools import combinations

from cpumanager.core.allocation.balance import ComboScorer, Evaluation
from cpumanager.core.allocation.combos import class_counts, next_combination, positions_of, runs
from cpumanager.core.allocation.index import TopologyIndex

__all__ = ["SearchResult", "literal_search", "search"]

# (positions of the combo kept, its evaluation (None: no combo was acceptable), the
# combination whose callback broke the walk (None: the walk ran to the end))
SearchResult = tuple[tuple[int, ...], Evaluation, tuple[int, ...] | None]


def search(ix: TopologyIndex, scorer: ComboScorer, k: int) -> SearchResult:
    """The kubelet's walk, scoring as few combos as the bounds allow."""
    if not scorer.may_hold(k):
        return (), None, None  # not even the k largest nodes can hold the request
    values = scorer.values
    spans = runs(scorer.keys)
    by_value: dict[int, list[int]] = {}  # free count -> runs with it
    for j, (start, _) in enumerate(spans):
        by_value.setdefault(values[start], []).append(j)
    least = scorer.least_member(k)  # nodes with fewer free CPUs are in no acceptable combo
    distinct = [value for value in sorted(by_value) if value >= least]
    available = [sum(spans[j][1] for j in by_value[value]) for value in distinct]
    mean = scorer.mean
    outside = sum((value - mean) ** 2 for value in values if value < least)
    # How many nodes of each free count a combo takes: enough for its floor and checks.
    ranked: list[tuple[float, tuple[int, ...]]] = []
    for taken in class_counts(available, k):
        floor = scorer.multiset_floor(distinct, available, taken, k, outside=outside)
        if floor is not None:
            ranked.append((floor, taken))
    ranked.sort()
    best = math.inf
    winner: tuple[int, ...] = ()
    passes = (True, False) if scorer.align else (False,)
    for one_socket_only in passes:  # align-by-socket: any single-socket combo wins first
        for floor, taken in ranked:
            if floor > best:
                break  # every combo left scores more than the best
            classes = [
                positions_of(spans, counts)
                for counts in _classes(spans, by_value, distinct, taken)
                if not one_socket_only or scorer.in_one_socket(spans, counts)
            ]
            for positions in sorted(classes):
                if floor == best and positions > winner:
                    break  # the rest could at most tie, and come later
                evaluation = scorer.evaluate(tuple(values[i] for i in positions))
                if evaluation is None:
                    continue
                score = evaluation[0]
                if score < best or (score == best and positions < winner):
                    best, winner = score, positions
        if winner:
            break
    if not winner:
        return (), None, None
    stop = None
    if best == 0 and (not scorer.align or scorer.in_one_socket(spans, _counts_of(spans, winner))):
        stop = next_combination(winner, len(scorer.numas))
    return winner, scorer.evaluate(tuple(values[i] for i in winner)), stop


def _classes(
    spans: list[tuple[int, int]],
    by_value: dict[int, list[int]],
    distinct: list[int],
    taken: tuple[int, ...],
) -> list[list[int]]:
    """Every class (nodes per run) taking ``taken[i]`` nodes of free count ``distinct[i]``."""
    found = [[0] * len(spans)]
    for value, wanted in zip(distinct, taken, strict=True):
        if not wanted:
            continue
        run_ids = by_value[value]
        splits = class_counts([spans[j][1] for j in run_ids], wanted)
        extended = []
        for base in found:
            for split in splits:
                counts = list(base)
                for j, part in zip(run_ids, split, strict=True):
                    counts[j] = part
                extended.append(counts)
        found = extended
    return found


def _counts_of(spans: list[tuple[int, int]], positions: tuple[int, ...]) -> list[int]:
    chosen = set(positions)
    return [sum(1 for i in range(start, start + length) if i in chosen) for start, length in spans]


def literal_search(ix: TopologyIndex, scorer: ComboScorer, k: int) -> SearchResult:
    """Every combination in the kubelet's order, evaluated step by step."""
    numas, align = scorer.numas, scorer.align
    best_score = math.inf
    best_positions: tuple[int, ...] = ()
    best_evaluation: Evaluation = None
    best_in_one_socket = False
    for positions in combinations(range(len(numas)), k):
        if best_score == 0 and (not align or best_in_one_socket):
            # the kubelet appended this combination before its callback broke the walk
            return best_positions, best_evaluation, positions
        combo = tuple(numas[i] for i in positions)
        evaluation = scorer.evaluate_literal(combo)
        if evaluation is None:
            continue
        score = evaluation[0]
        better = score < best_score
        in_one_socket = False
        if align:
            in_one_socket = ix.numa_nodes_in_same_socket(combo)
            if in_one_socket != best_in_one_socket:
                better = in_one_socket
        if better:
            best_score = score
            best_positions, best_evaluation = positions, evaluation
            best_in_one_socket = in_one_socket
    return best_positions, best_evaluation, None
