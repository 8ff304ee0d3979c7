"""Distributed tie-breaking as released kubelets do it (k/k#141237) and as intended (#141238).

The four machines of issue 12: 2 sockets x 64 cores x 2 threads, core ``c`` on socket
``c // 64``, CPUs ``c`` and ``c + 128`` siblings, ``P`` NUMA nodes per socket holding
``64 / P`` consecutive cores each. The released answers were measured on the kubelet's own
Go code (v1.32.10).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable

import pytest

from cpumanager.core.allocation import StaticPolicyOptions, take_by_topology
from cpumanager.core.allocation.go_append import (
    aliased_combination,
    go_grow_capacity,
    shared_array_start,
)
from cpumanager.core.cpuset import CPUSet
from cpumanager.presets import synthetic

RELEASED = StaticPolicyOptions(distribute_cpus_across_numa=True)
FIXED = StaticPolicyOptions(distribute_cpus_across_numa=True, distributed_combination_fix=True)

ROWS = [
    # (NUMA nodes per socket, every third CPU taken, n, released kubelet, intended rule)
    (
        4,
        False,
        100,
        "0-12,16-28,32-44,112-124,128-139,144-155,160-171,240-251",
        "0-12,16-28,32-44,48-60,128-139,144-155,160-171,176-187",
    ),
    (8, False, 64, "0-23,120-151,248-255", "0-31,128-159"),
    (
        8,
        False,
        100,
        "0-22,24-30,32-38,112-118,120-126,128-134,136-142,144-150,152-158,160-166,240-246,248-254",
        "0-22,24-30,32-38,40-46,48-54,128-134,136-142,144-150,152-158,160-166,168-174,176-182",
    ),
    (
        8,
        True,
        64,
        "8,10-11,13-14,16-17,19-20,22-23,32,34-35,37-38,40-41,43-44,46-47,56,58-59,61-62,"
        "112-113,115-116,119,136-137,139-140,142-143,145-146,148-149,151,160-161,163-164,"
        "166-167,169-170,172-173,175,184-185,187-188,190,241-242,244-245,247",
        "8,10-11,13-14,16-17,19-20,22-23,32,34-35,37-38,40-41,43-44,46-47,56,58-59,61-62,"
        "64-65,67-68,71,136-137,139-140,142-143,145-146,148-149,151,160-161,163-164,166-167,"
        "169-170,172-173,175,184-185,187-188,190,193-194,196-197,199",
    ),
]


def _machine(per_socket: int, thirds_taken: bool) -> tuple[object, CPUSet]:
    topology = synthetic(sockets=2, numa_per_socket=per_socket, cores_per_numa=64 // per_socket)
    available = topology.all_cpus
    if thirds_taken:
        available = CPUSet(cpu for cpu in available if cpu % 3)
    return topology, available


@pytest.mark.parametrize(("per_socket", "thirds", "count", "released", "intended"), ROWS)
def test_issue_rows_released_by_default(
    per_socket: int, thirds: bool, count: int, released: str, intended: str
) -> None:
    topology, available = _machine(per_socket, thirds)
    trace: list[str] = []
    got = take_by_topology(topology, available, count, RELEASED, trace=trace)  # type: ignore[arg-type]
    assert got == CPUSet.parse(released)
    assert any("k/k#141237" in step for step in trace)


@pytest.mark.parametrize(("per_socket", "thirds", "count", "released", "intended"), ROWS)
def test_issue_rows_intended_with_the_fix(
    per_socket: int, thirds: bool, count: int, released: str, intended: str
) -> None:
    topology, available = _machine(per_socket, thirds)
    trace: list[str] = []
    got = take_by_topology(topology, available, count, FIXED, trace=trace)  # type: ignore[arg-type]
    assert got == CPUSet.parse(intended)
    assert got != CPUSet.parse(released)
    assert not any("k/k#141237" in step for step in trace)


def test_no_tie_no_difference() -> None:
    """One NUMA node fits the request: no combination to overwrite, both rules agree."""
    topology, available = _machine(4, False)
    assert take_by_topology(topology, available, 8, RELEASED) == take_by_topology(  # type: ignore[arg-type]
        topology,  # type: ignore[arg-type]
        available,
        8,
        FIXED,
    )


@pytest.mark.parametrize(
    ("old_cap", "new_len", "expected"),
    # Go: append([]int{}, 1) has cap 1, appending 5 ints to an empty slice gives cap 6
    # (48-byte size class), doubling below 256, then growth by (cap + 768) / 4.
    [
        (0, 1, 1),
        (1, 2, 2),
        (2, 3, 4),
        (4, 5, 8),
        (0, 3, 3),
        (0, 5, 6),
        (3, 4, 6),
        (5, 6, 10),
        (128, 129, 256),
        (256, 257, 512),
        (512, 513, 848),
    ],
)
def test_go_grow_capacity(old_cap: int, new_len: int, expected: int) -> None:
    assert go_grow_capacity(old_cap, new_len) == expected


def test_shared_array_start() -> None:
    starts = [shared_array_start(k) for k in range(1, 19)]
    assert starts == [1, 2, 3, 3, 5, 5, 5, 5, 9, 9, 9, 9, 9, 9, 9, 9, 17, 17]


def _go_walk(n: int, k: int, on_leaf: Callable[[list[int | None], int], bool]) -> None:
    """The kubelet's recursive helper over explicit backing arrays (Go's append, literally)."""

    def helper(left: int, start: int, array: list[int | None], length: int) -> bool:
        if left == 0:
            return on_leaf(array, length)
        for i in range(start, n - left + 1):
            if length < len(array):  # spare capacity: write in place
                target = array
            else:  # full: copy into a new array of the grown capacity
                capacity = go_grow_capacity(len(array), length + 1)
                target = array[:length] + [None] * (capacity - length)
            target[length] = i
            if helper(left - 1, i + 1, target, length + 1):
                return True
        return False

    helper(k, 0, [], 0)


@pytest.mark.parametrize("seed", range(40))
def test_closed_form_matches_a_literal_walk(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(1, 12)
    k = rng.randint(1, n)
    leaves: list[tuple[int | None, ...]] = []

    def record(array: list[int | None], length: int) -> bool:
        leaves.append(tuple(array[:length]))
        return False

    _go_walk(n, k, record)
    assert leaves == list(itertools.combinations(range(n), k))
    best_index = rng.randrange(len(leaves))
    stop_index = rng.choice([None, *range(best_index + 1, len(leaves))])
    kept: list[tuple[list[int | None], int]] = []
    counter = iter(range(len(leaves)))

    def on_leaf(array: list[int | None], length: int) -> bool:
        index = next(counter)
        if index == stop_index:
            return True
        if index == best_index:
            kept.append((array, length))
        return False

    _go_walk(n, k, on_leaf)
    array, length = kept[0]
    best = tuple(int(i) for i in leaves[best_index] if i is not None)
    stop = None if stop_index is None else [int(i) for i in leaves[stop_index] if i is not None]
    assert tuple(array[:length]) == aliased_combination(best, n, stop)
