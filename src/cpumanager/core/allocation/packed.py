"""Packed take-by-topology (the kubelet's ``takeByTopologyNUMAPacked``).

Whole units first, biggest first, so an exclusive container shares as little as possible:

1. whole elements of the first level (NUMA nodes when NUMA-first, else sockets),
2. whole elements of the second level (the other one),
3. with prefer-align-cpus-by-uncorecache: whole uncore caches, else the lowest cores of
   the first cache in order that give exactly the CPUs still needed (best effort),
4. whole cores, unless distribute-cpus-across-cores (spread) is on,
5. single CPUs in CPU order (packed: core by core, filling partly used cores first;
   spread: socket by socket, ascending CPU id).

Each step walks the order fixed at its start, takes an element when at least its size is
still needed, and the algorithm stops as soon as nothing more is needed. Orders and
tie-breaks are those of :mod:`cpumanager.core.allocation.accumulator`.
"""

from __future__ import annotations

from cpumanager.core.allocation.accumulator import Accumulator
from cpumanager.core.allocation.index import TopologyIndex
from cpumanager.errors import NotEnoughCPUsError

__all__ = ["not_enough", "take_packed"]


def not_enough(requested: int, available: int) -> NotEnoughCPUsError:
    return NotEnoughCPUsError(
        f"not enough cpus available to satisfy request: requested={requested}, "
        f"available={available}"
    )


def take_packed(
    ix: TopologyIndex,
    available: int,
    count: int,
    *,
    spread: bool = False,
    uncore: bool = False,
    uncore_odd: bool = True,
    declared_free: bool = False,
    trace: list[str] | None = None,
) -> int:
    """Bitmask of ``count`` CPUs from ``available``; NotEnoughCPUsError otherwise."""
    acc = Accumulator(ix, available, count, trace, declared=declared_free)
    if acc.satisfied():
        return 0
    if acc.failed():
        raise not_enough(count, available.bit_count())
    if (
        count == acc.free.bit_count()
        and trace is None
        and not declared_free
        and acc.one_node() is not None
    ):
        # Every free CPU, on one node of one socket: no order repeats an element there, so
        # each step adds new CPUs only and the steps end holding all of them.
        return acc.free
    if ix.numa_first:
        acc.take_full_numa_nodes()
        if acc.satisfied():
            return acc.result
        acc.take_full_sockets()
    else:
        acc.take_full_sockets()
        if acc.satisfied():
            return acc.result
        acc.take_full_numa_nodes()
    if acc.satisfied():
        return acc.result
    if uncore:
        acc.take_uncore_caches(odd=uncore_odd)
        if acc.satisfied():
            return acc.result
    if not spread:
        acc.take_full_cores()
        if acc.satisfied():
            return acc.result
    acc.take_remaining_cpus(spread=spread)
    if acc.satisfied():
        return acc.result
    msg = "failed to allocate cpus"
    raise NotEnoughCPUsError(msg)
