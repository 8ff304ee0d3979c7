"""Issue 21, item 1: the preferred-mask search on a machine of the most NUMA nodes we take.

The searches were recursive, one frame per NUMA node: 1,024 nodes overflowed Python's stack
(RecursionError in every admission on such a node). They now keep their own stacks.
"""

from __future__ import annotations

import sys

import pytest

from cpumanager.core import limits
from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.hints.hint import TopologyHint
from cpumanager.core.hints.source import CapacityHintSource
from cpumanager.core.merge.closest import DEFAULT_CLASS_LIMIT
from cpumanager.core.merge.fast import merge_fast
from cpumanager.core.merge.options import NUMAInfo

NODES = limits.MAX_NUMA_NODES


def capacity(free: dict[int, int], need: int, preferred: int) -> CapacityHintSource:
    return CapacityHintSource(
        universe=(1 << NODES) - 1, free=free, need=need, preferred_size=preferred
    )


def test_a_search_over_1024_numa_nodes_needs_no_deep_stack() -> None:
    numa = NUMAInfo.of(list(range(NODES)))
    # Only nodes 0 and 1 have a free CPU; the pod needs two, so the one preferred mask is
    # {0, 1}, which the search (highest node first, leaving each out before taking it)
    # reaches past every other node.
    free = {node: (1 if node < 2 else 0) for node in range(NODES)}
    cpu = capacity(free, 2, 2)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(400)  # far below the node count: any per-node recursion fails
    try:
        hint, admit = merge_fast("best-effort", numa, [{"cpu": cpu}])
    finally:
        sys.setrecursionlimit(limit)
    assert admit
    assert hint == TopologyHint(NUMAMask.of(0, 1), True)


@pytest.mark.parametrize(
    ("class_limit", "free_nodes"),
    [(DEFAULT_CLASS_LIMIT, (0, 1)), (0, (NODES - 2, NODES - 1))],
    ids=["classes", "bound"],
)
def test_prefer_closest_over_1024_numa_nodes_needs_no_deep_stack(
    class_limit: int, free_nodes: tuple[int, int]
) -> None:
    # Two sockets of 512 nodes; only two nodes have a free CPU, placed where each search
    # (the distance classes leave nodes out first, the branch and bound takes the lowest
    # first) meets them last, past every other node.
    rows = {
        a: tuple(10 if a == b else (12 if a // 512 == b // 512 else 32) for b in range(NODES))
        for a in range(NODES)
    }
    numa = NUMAInfo.of(list(range(NODES)), distances=rows)
    free = {node: (1 if node in free_nodes else 0) for node in range(NODES)}
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(400)
    try:
        hint, admit = merge_fast(
            "best-effort",
            numa,
            [{"cpu": capacity(free, 2, 2)}],
            prefer_closest=True,
            class_limit=class_limit,
        )
    finally:
        sys.setrecursionlimit(limit)
    assert admit
    assert hint == TopologyHint(NUMAMask.of(*free_nodes), True)
