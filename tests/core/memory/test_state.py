"""The memory state's shared rules: the group rule and the coverage checks.

``violates_groups`` is the one rule behind the kubelet's ``calculateHints`` group checks
(``hinting=True``) and ``isAffinityViolatingNUMAAllocations`` (``hinting=False``); they
differ only on a single node listed in a multi-node group.
"""

from __future__ import annotations

from types import MappingProxyType

import pytest

from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.ids import PodUID
from cpumanager.core.memory import MemoryState, MemoryTable, NodeMemory

GI = 2**30


def state(*nodes: tuple[int, tuple[int, ...]]) -> MemoryState:
    """Three 4Gi nodes; ``nodes`` gives (assignments, cells) per node."""
    base = MemoryState.create(dict.fromkeys(range(3), 4 * GI))
    table = {
        n: NodeMemory(base.nodes[n].tables, count, cells) for n, (count, cells) in enumerate(nodes)
    }
    return MemoryState(nodes=MappingProxyType(table))


IDLE = state((0, (0,)), (0, (1,)), (0, (2,)))
SINGLE_ON_0 = state((1, (0,)), (0, (1,)), (0, (2,)))
GROUP_0_1 = state((2, (0, 1)), (2, (0, 1)), (0, (2,)))
EMPTY_CELLS = state((1, ()), (0, (1,)), (0, (2,)))

GROUPS = [
    # (id, state, nodes, violates when hinting, violates at allocation)
    ("idle nodes, one", IDLE, (0,), False, False),
    ("idle nodes, several", IDLE, (0, 1, 2), False, False),
    ("single-node user alone", SINGLE_ON_0, (0,), False, False),
    ("single-node user in a wider mask", SINGLE_ON_0, (0, 1), True, True),
    ("group member alone", GROUP_0_1, (0,), True, False),
    ("exactly the group", GROUP_0_1, (0, 1), False, False),
    ("the group and one more", GROUP_0_1, (0, 1, 2), True, True),
    ("a group member with another node", GROUP_0_1, (1, 2), True, True),
    ("idle nodes beside a group", GROUP_0_1, (2,), False, False),
    ("used node with empty cells, alone", EMPTY_CELLS, (0,), False, False),
    ("used node with empty cells, in a mask", EMPTY_CELLS, (0, 1), True, True),
]  # fmt: skip


@pytest.mark.parametrize(("memory", "nodes", "hinting", "allocating"), [g[1:] for g in GROUPS],
                         ids=[g[0] for g in GROUPS])  # fmt: skip
def test_group_rule(
    memory: MemoryState, nodes: tuple[int, ...], hinting: bool, allocating: bool
) -> None:
    assert memory.violates_groups(nodes, hinting=True) is hinting
    assert memory.violates_groups(nodes, hinting=False) is allocating


def test_free_memory_counts_reusable_memory_only_when_asked() -> None:
    memory = MemoryState(
        nodes=IDLE.nodes,
        reusable_pod=PodUID("p"),
        reusable=MappingProxyType({(NUMAMask.of(0).bits, "memory"): GI}),
    )
    need = {"memory": 5 * GI}
    assert not memory.free_covers(NUMAMask.of(0), need)
    assert memory.free_covers(NUMAMask.of(0), need, reusing=PodUID("p"))
    assert not memory.free_covers(NUMAMask.of(0), need, reusing=PodUID("other"))
    assert not memory.free_covers(NUMAMask.of(1), need, reusing=PodUID("p"))  # other mask
    assert memory.free_covers(NUMAMask((0, 1)), need)


def test_allocatable_counts_memory_in_use() -> None:
    full = MemoryTable(total=4 * GI, system_reserved=0, allocatable=4 * GI, reserved=4 * GI, free=0)
    busy = NodeMemory(MappingProxyType({"memory": full}), 1, (0,))
    memory = MemoryState(nodes=MappingProxyType({0: busy}))
    assert memory.allocatable_covers((0,), {"memory": 4 * GI})
    assert not memory.free_covers(NUMAMask.of(0), {"memory": 1})
    assert not memory.allocatable_covers((0,), {"memory": 4 * GI + 1, "hugepages-2Mi": 0})
