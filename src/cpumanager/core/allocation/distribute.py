"""distribute-cpus-across-numa (the kubelet's ``takeByTopologyNUMADistributed``, KEP-2902).

When a request needs more than one NUMA node, spread it evenly instead of filling nodes one
after the other. CPUs are handed out in groups of ``g`` (1, or CPUs-per-core with
full-pcpus-only) so whole cores stay together.

For k = kmin .. kmax NUMA nodes (kmin from the machine's groups per node, kmax from the
groups needed and the nodes with free CPUs), every k-combination of the NUMA order
(lexicographic over that order) is scored:

* it must hold the request (free CPUs, and free whole groups); each member gives
  ``d = floor(n / k / g) * g`` CPUs (align-by-socket: at most what its whole groups allow)
  and must have ``d`` free;
* the remainder ``n - d*k`` is handed out ``g`` at a time, round robin, over a subset of the
  members that still have a group free; subsets are tried from the largest to single nodes,
  lexicographically, and the one leaving the most balanced machine wins;
* the balance score is the population standard deviation of the free CPUs left on every
  NUMA node that had free CPUs, with the mean and the result rounded to 3 decimals (half
  away from zero), as the kubelet computes it.

The combo with the lowest score wins; ties keep the earlier combo and the earlier (larger)
subset. With align-by-socket a combo inside one socket beats any cross-socket combo.
Released kubelets then allocate from what their kept slices read back once later
combinations overwrote them (k/k#141237, modelled in ``go_append``); ``combination_fix``
allocates from the winner itself (k/k#141238). The first k with a winner is allocated:
``d`` CPUs from each member by the packed algorithm, then the remainder group by group over
the chosen subset. When nothing fits, or ``n`` is not
a multiple of ``g``, the packed algorithm (without uncore alignment) decides.

**The kubelet's missing rule.** The kubelet only checks that a remainder subset has at
least ``remainder`` free CPUs in total, not that it has that many in *whole groups*. With
``g = 2`` and an odd number of free CPUs left on the subset's nodes (free counts 3 and 3,
remainder 6) its round-robin loop never ends. We skip such a subset — it cannot take the
remainder — which is what the kubelet's own loop assumes (and what its newest resize code
checks). A subset that can take the remainder always exists (all members with a free group),
so every combo that passes the checks above still gets a score, and every other decision is
unchanged.

Speed: a combo's score and best subset depend only on the free counts of its members in
order (the other nodes' counts are then determined), so neighbours in the NUMA order with
equal counts are interchangeable: the walk scores one representative per class (``combos``),
in the kubelet's order, and memoizes evaluations by that tuple and balance scores by the
sorted vector; remainder subsets are walked the same way. When the NUMA order repeats a
node (socket-first machines whose NUMA node spans sockets) the literal walk of every
combination runs, unmemoized; it is also the reference of the differential tests.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterator, Sequence
from itertools import combinations

from cpumanager.core.allocation.accumulator import Accumulator
from cpumanager.core.allocation.combos import next_combination, representative_combinations
from cpumanager.core.allocation.go_append import aliased_combination
from cpumanager.core.allocation.index import TopologyIndex
from cpumanager.core.allocation.packed import not_enough, take_packed
from cpumanager.errors import NotEnoughCPUsError

__all__ = ["balance_score", "take_distributed"]

# (score, positions within the combo of the remainder subset, positions within the combo of
# the nodes the remainder search walked over) or None when infeasible.
_Evaluation = tuple[float, tuple[int, ...], tuple[int, ...]] | None


def _go_round(value: float) -> float:
    """Go's ``math.Round``: half away from zero."""
    whole = float(math.trunc(value))
    if abs(value - whole) >= 0.5:
        whole += math.copysign(1.0, value)
    return whole


def balance_score(values: Sequence[int]) -> float:
    """The kubelet's ``standardDeviation`` (3-decimal mean, 3-decimal result)."""
    count = len(values)
    mean = _go_round(sum(values) / count * 1000) / 1000
    total = 0.0
    for value in values:
        deviation = value - mean
        total += deviation * deviation
    return _go_round(math.sqrt(total / count) * 1000) / 1000


def _round_robin(after: list[int], subset: Sequence[int], remainder: int, group: int) -> None:
    """Hand ``remainder`` CPUs out ``group`` at a time over ``subset`` (in place)."""
    while remainder > 0:
        for position in subset:
            if remainder == 0:
                break
            if after[position] < group:
                continue
            after[position] -= group
            remainder -= group


class _Chooser:
    """Scores combos of one distributed call; memoized by the members' free counts."""

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
        self.values = [free_counts[numa] for numa in numas]
        # What a combo's score depends on, per position (see ``combos``): the free count,
        # and with align-by-socket the node's sockets too.
        self.keys: list[Hashable] = (
            list(self.values) if sockets is None else list(zip(self.values, sockets, strict=True))
        )
        self.all_values = Counter(free_counts.values())
        self.memo: dict[tuple[int, ...], _Evaluation] = {}
        self.scores: dict[tuple[int, ...], float] = {}
        self.walks: dict[tuple[int, ...], list[tuple[int, ...]]] = {}

    def subsets(self, keys: tuple[int, ...]) -> list[tuple[int, ...]]:
        """Remainder subsets to try (positions in ``keys``): largest first, then in order.

        One representative per class of equal key sequences (see ``combos``).
        """
        found = self.walks.get(keys)
        if found is None:
            found = self.walks[keys] = [
                subset
                for size in range(len(keys), 0, -1)
                for subset in representative_combinations(keys, size)
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

    def evaluate(self, combo_values: tuple[int, ...]) -> _Evaluation:
        found = self.memo.get(combo_values, False)
        if found is not False:
            return found  # type: ignore[return-value]
        result = self._evaluate(combo_values)
        self.memo[combo_values] = result
        return result

    def _evaluate(self, combo_values: tuple[int, ...]) -> _Evaluation:
        count, group = self.count, self.group
        if sum(combo_values) < count:
            return None
        if sum(value // group for value in combo_values) * group < count:
            return None
        share = self.share(combo_values)
        if any(value < share for value in combo_values):
            return None
        others = list((self.all_values - Counter(combo_values)).elements())
        after = [value - share for value in combo_values]
        remainder = count - share * len(combo_values)
        if remainder == 0:
            return (self.score(after + others), (), ())
        candidates = tuple(i for i, value in enumerate(after) if value >= group)
        groups = [after[i] // group for i in candidates]
        best = math.inf
        best_picked: tuple[int, ...] = ()
        for picked in self.subsets(tuple(after[i] for i in candidates)):
            if sum([groups[j] for j in picked]) * group < remainder:
                continue  # cannot take the remainder in whole groups (kubelet hangs here)
            trial = list(after)
            _round_robin(trial, [candidates[j] for j in picked], remainder, group)
            score = self.score(trial + others)
            if score < best:
                best, best_picked = score, picked
        return (best, tuple(candidates[j] for j in best_picked), candidates)

    def evaluate_literal(self, combo: tuple[int, ...]) -> _Evaluation:
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


def _numa_range(ix: TopologyIndex, need: int, numas: list[int], group: int) -> tuple[int, int]:
    """The kubelet's ``rangeNUMANodesNeededToSatisfy``."""
    num_numa = len(ix.numa_bits)
    groups_total = (ix.all_bits.bit_count() - 1) // group + 1
    groups_per_numa = (groups_total - 1) // num_numa + 1
    groups_needed = (need - 1) // group + 1
    low = (groups_needed - 1) // groups_per_numa + 1
    high = min(groups_needed, len(set(numas)))
    return low, high


def _search(
    ix: TopologyIndex, chooser: _Chooser, k: int, *, literal: bool
) -> tuple[tuple[int, ...], _Evaluation, tuple[int, ...] | None]:
    """The kubelet's walk over k-combinations of the NUMA order (positions).

    Returns the combo it keeps, that combo's evaluation (None: no combo was acceptable) and
    the combo whose callback broke the walk (None: the walk ran to the end). ``literal``
    walks every combination with the step-by-step evaluation (the reference); otherwise one
    representative per class of interchangeable combos is scored (``combos``), which keeps
    the same combo and, since the break follows the combo that scored 0, the same break.
    """
    numas, values, align = chooser.numas, chooser.values, chooser.align
    best_score = math.inf
    best_positions: tuple[int, ...] = ()
    best_evaluation: _Evaluation = None
    best_in_one_socket = False
    if literal:
        walk: Iterator[tuple[int, ...]] = combinations(range(len(numas)), k)
    else:
        walk = representative_combinations(chooser.keys, k)
    for positions in walk:
        if best_score == 0 and (not align or best_in_one_socket):
            # the kubelet appended this combination before its callback broke the walk
            return best_positions, best_evaluation, positions
        combo = tuple(numas[i] for i in positions)
        if literal:
            evaluation = chooser.evaluate_literal(combo)
        else:
            evaluation = chooser.evaluate(tuple(values[i] for i in positions))
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
            if not literal and best_score == 0 and (not align or best_in_one_socket):
                # the next representative may not be the next combination: name it
                return best_positions, best_evaluation, next_combination(positions, len(numas))
    return best_positions, best_evaluation, None


def _choose(
    ix: TopologyIndex, chooser: _Chooser, k: int, *, literal: bool, fixed: bool
) -> tuple[tuple[int, ...], tuple[int, ...], bool]:
    """The combo of size ``k`` the kubelet allocates from, its remainder nodes (NUMA ids).

    ``fixed``: the combo that won (k/k#141238); otherwise what released kubelets read back
    from the slices they kept (``go_append``). The flag says whether the two differ. An
    empty combo means no combo of size ``k`` is acceptable.
    """
    numas = chooser.numas
    best_positions, best_evaluation, stop = _search(ix, chooser, k, literal=literal)
    if best_evaluation is None:
        return (), (), False
    _, subset, candidates = best_evaluation
    combo = tuple(numas[i] for i in best_positions)
    remainder = tuple(combo[i] for i in subset)
    if fixed:
        return combo, remainder, False
    read_back = tuple(numas[i] for i in aliased_combination(best_positions, len(numas), stop))
    if subset:
        # remainderCombo holds the winner's own nodes (copied values); its subset aliases
        inner = aliased_combination([candidates.index(i) for i in subset], len(candidates))
        remainder_read = tuple(combo[candidates[i]] for i in inner)
    else:
        remainder_read = ()
    return read_back, remainder_read, (read_back, remainder_read) != (combo, remainder)


def take_distributed(
    ix: TopologyIndex,
    available: int,
    count: int,
    *,
    group: int,
    spread: bool = False,
    align_by_socket: bool = False,
    trace: list[str] | None = None,
    literal: bool = False,
    combination_fix: bool = False,
) -> int:
    """Bitmask of ``count`` CPUs spread evenly over NUMA nodes (see the module docstring).

    ``literal`` forces the step-by-step evaluation (the reference for differential tests);
    ``combination_fix`` allocates from the winning combo (k/k#141238) instead of what
    released kubelets read back from their overwritten slices.
    """
    if group < 1 or count % group != 0:
        if trace is not None:
            trace.append(f"{count} CPUs are not a multiple of {group}: packing instead")
        return take_packed(ix, available, count, spread=spread, trace=trace)
    acc = Accumulator(ix, available, count, trace)
    if acc.satisfied():
        return 0
    if acc.failed():
        raise not_enough(count, available.bit_count())
    numas = acc.numa_order()
    free_counts = {numa: (acc.free & ix.numa_bits[numa]).bit_count() for numa in numas}
    sockets = None
    if align_by_socket:
        sockets = [tuple(socket for socket, _ in ix.numa_sockets[numa]) for numa in numas]
    chooser = _Chooser(numas, free_counts, count, group, sockets=sockets)
    literal = literal or len(set(numas)) != len(numas)
    low, high = _numa_range(ix, count, numas, group)
    for k in range(low, high + 1):
        combo, remainder_nodes, aliased = _choose(
            ix, chooser, k, literal=literal, fixed=combination_fix
        )
        if combo:
            if aliased:
                acc.note(
                    "released kubelets allocate from the combination their walk wrote last "
                    "(k/k#141237), not from the best one"
                )
            return _allocate(acc, combo, remainder_nodes, count=count, group=group, spread=spread)
    acc.note("no NUMA combination can share the request evenly: packing instead")
    return take_packed(ix, available, count, spread=spread, trace=trace)


def _allocate(
    acc: Accumulator,
    combo: tuple[int, ...],
    remainder_nodes: tuple[int, ...],
    *,
    count: int,
    group: int,
    spread: bool,
) -> int:
    ix = acc.ix
    share = count // len(combo) // group * group
    for numa in combo:
        share = min(share, (acc.free & ix.numa_bits[numa]).bit_count() // group * group)
    acc.note(
        f"spreading {count} CPUs over NUMA nodes {','.join(map(str, combo))}: {share} each"
        + (f", remainder on {','.join(map(str, remainder_nodes))}" if remainder_nodes else "")
    )
    for numa in combo:
        acc.take(
            _packed_or_nothing(acc, numa, share, spread=spread), f"{share} CPUs of NUMA node {numa}"
        )
    remainder = count - share * len(combo)
    while remainder > 0:
        progressed = False
        for numa in remainder_nodes:
            if remainder == 0:
                break
            if (acc.free & ix.numa_bits[numa]).bit_count() < group:
                continue
            acc.take(
                _packed_or_nothing(acc, numa, group, spread=spread), f"remainder from NUMA {numa}"
            )
            remainder -= group
            progressed = True
        if not progressed:
            break  # cannot happen for a subset chosen above; never spin
    if acc.need > 0:
        msg = f"accounting error, not enough CPUs allocated, remaining: {acc.need}"
        raise NotEnoughCPUsError(msg)
    if acc.need < 0:
        msg = f"accounting error, too many CPUs allocated, remaining: {acc.need}"
        raise NotEnoughCPUsError(msg)
    return acc.result


def _packed_or_nothing(acc: Accumulator, numa: int, count: int, *, spread: bool) -> int:
    """The kubelet ignores errors of these inner packed calls (they yield no CPUs)."""
    try:
        return take_packed(acc.ix, acc.free & acc.ix.numa_bits[numa], count, spread=spread)
    except NotEnoughCPUsError:
        return 0
