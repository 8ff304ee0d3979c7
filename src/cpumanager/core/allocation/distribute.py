"""distribute-cpus-across-numa (the kubelet's ``takeByTopologyNUMADistributed``, KEP-2902).

When a request needs more than one NUMA node, spread it evenly instead of filling nodes one
after the other. CPUs are handed out in groups of ``g`` (1, or CPUs-per-core with
full-pcpus-only) so whole cores stay together.

For k = kmin .. kmax NUMA nodes (kmin from the machine's groups per node, kmax from the
groups needed and the nodes with free CPUs), every k-combination of the NUMA order
(lexicographic over that order) is scored (``balance``): each member gives an even share of
``d`` CPUs, the remainder goes round robin over the subset of members that leaves the most
balanced machine, and the score is the kubelet's standard deviation of the free CPUs left.
The combo with the lowest score wins (``search``); ties keep the earlier combo and the
earlier (larger) subset. With align-by-socket a combo inside one socket beats any
cross-socket combo. Released kubelets then allocate from what their kept slices read back
once later combinations overwrote them (k/k#141237, modelled in ``go_append``);
``combination_fix`` allocates from the winner itself (k/k#141238). The first k with a
winner is allocated: ``d`` CPUs from each member by the packed algorithm, then the
remainder group by group over the chosen subset. When nothing fits, or ``n`` is not a
multiple of ``g``, the packed algorithm (without uncore alignment) decides.

**The kubelet's missing rule.** The kubelet only checks that a remainder subset has at
least ``remainder`` free CPUs in total, not that it has that many in *whole groups*. With
``g = 2`` and an odd number of free CPUs left on the subset's nodes (free counts 3 and 3,
remainder 6) its round-robin loop never ends. We skip such a subset — it cannot take the
remainder — which is what the kubelet's own loop assumes (and what its newest resize code
checks). A subset that can take the remainder always exists (all members with a free group),
so every combo that passes the checks above still gets a score, and every other decision is
unchanged.

Speed: the search scores one combo per class of interchangeable ones, in order of a lower
bound of their score, and stops once no bound can beat the best (``search``); when the NUMA
order repeats a node (socket-first machines whose NUMA node spans sockets) the literal walk
of every combination runs; it is also the reference of the differential tests.
"""

from __future__ import annotations

from cpumanager.core.allocation.accumulator import Accumulator
from cpumanager.core.allocation.balance import ComboScorer
from cpumanager.core.allocation.go_append import aliased_combination
from cpumanager.core.allocation.index import TopologyIndex
from cpumanager.core.allocation.packed import not_enough, take_packed
from cpumanager.core.allocation.search import literal_search, search
from cpumanager.errors import NotEnoughCPUsError

__all__ = ["take_distributed"]


def _numa_range(ix: TopologyIndex, need: int, numas: list[int], group: int) -> tuple[int, int]:
    """The kubelet's ``rangeNUMANodesNeededToSatisfy``."""
    num_numa = len(ix.numa_bits)
    groups_total = (ix.all_bits.bit_count() - 1) // group + 1
    groups_per_numa = (groups_total - 1) // num_numa + 1
    groups_needed = (need - 1) // group + 1
    low = (groups_needed - 1) // groups_per_numa + 1
    high = min(groups_needed, len(set(numas)))
    return low, high


def _choose(
    ix: TopologyIndex, scorer: ComboScorer, k: int, *, literal: bool, fixed: bool
) -> tuple[tuple[int, ...], tuple[int, ...], bool]:
    """The combo of size ``k`` the kubelet allocates from, its remainder nodes (NUMA ids).

    ``fixed``: the combo that won (k/k#141238); otherwise what released kubelets read back
    from the slices they kept (``go_append``). The flag says whether the two differ. An
    empty combo means no combo of size ``k`` is acceptable.
    """
    numas = scorer.numas
    walk = literal_search if literal else search
    best_positions, best_evaluation, stop = walk(ix, scorer, k)
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
    cap_shares: bool = True,
    declared_free: bool = False,
) -> int:
    """Bitmask of ``count`` CPUs spread evenly over NUMA nodes (see the module docstring).

    ``literal`` forces the step-by-step evaluation (the reference for differential tests);
    ``combination_fix`` allocates from the winning combo (k/k#141238) instead of what
    released kubelets read back from their overwritten slices. ``cap_shares`` (1.37 on)
    lowers the even share to what every chosen node still has in whole groups; before,
    a node that cannot give its share gives nothing and the accounting error follows.
    ``declared_free``: the packed steps' "free" test of kubelets before 1.37 (see
    ``Accumulator``).
    """
    if group < 1 or count % group != 0:
        if trace is not None:
            trace.append(f"{count} CPUs are not a multiple of {group}: packing instead")
        return take_packed(
            ix, available, count, spread=spread, declared_free=declared_free, trace=trace
        )
    acc = Accumulator(ix, available, count, trace, declared=declared_free)
    if acc.satisfied():
        return 0
    if acc.failed():
        raise not_enough(count, available.bit_count())
    numas = acc.numa_order()
    free_counts = {numa: (acc.free & ix.numa_bits[numa]).bit_count() for numa in numas}
    sockets = None
    if align_by_socket:
        sockets = [tuple(socket for socket, _ in ix.numa_sockets[numa]) for numa in numas]
    scorer = ComboScorer(numas, free_counts, count, group, sockets=sockets)
    literal = literal or len(set(numas)) != len(numas)
    low, high = _numa_range(ix, count, numas, group)
    for k in range(low, high + 1):
        combo, remainder_nodes, aliased = _choose(
            ix, scorer, k, literal=literal, fixed=combination_fix
        )
        if combo:
            if aliased:
                acc.note(
                    "released kubelets allocate from the combination their walk wrote last "
                    "(k/k#141237), not from the best one"
                )
            return _allocate(
                acc,
                combo,
                remainder_nodes,
                count=count,
                group=group,
                spread=spread,
                cap_shares=cap_shares,
            )
    acc.note("no NUMA combination can share the request evenly: packing instead")
    return take_packed(
        ix, available, count, spread=spread, declared_free=declared_free, trace=trace
    )


def _allocate(
    acc: Accumulator,
    combo: tuple[int, ...],
    remainder_nodes: tuple[int, ...],
    *,
    count: int,
    group: int,
    spread: bool,
    cap_shares: bool = True,
    declared_free: bool = False,
) -> int:
    ix = acc.ix
    share = count // len(combo) // group * group
    for numa in combo if cap_shares else ():
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
        return take_packed(
            acc.ix,
            acc.free & acc.ix.numa_bits[numa],
            count,
            spread=spread,
            declared_free=acc.declared,
        )
    except NotEnoughCPUsError:
        return 0
