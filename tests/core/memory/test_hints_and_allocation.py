"""Memory manager (static policy) hints and allocation.

Machines follow the kubelet's policy_static_test.go shapes: two NUMA nodes with 10Gi of
memory each (some with a 1Gi hugepages-1Gi pool), 1Gi of reserved memory per node.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.hints.hint import TopologyHint
from cpumanager.core.ids import ContainerName, PodUID
from cpumanager.core.memory import (
    MemoryBlock,
    MemoryState,
    allocate_memory,
    container_memory_requests,
    memory_hints,
    pod_memory_requests,
    remove_container_memory,
)
from cpumanager.core.topology import CPUInfo, CPUTopology, NUMANodeInfo
from cpumanager.core.workload import Container, ContainerKind, Pod
from cpumanager.errors import MachineError, UnexpectedAdmissionError

GI = 2**30


def h(nodes: str, preferred: bool = True) -> TopologyHint:
    return TopologyHint(NUMAMask(int(n) for n in nodes.split(",")), preferred)


def ctr(name: str, memory_gi: float, *, cpu: str = "1", kind: ContainerKind = ContainerKind.APP,
        hugepages_gi: int = 0, requests_cpu: str | None = None) -> Container:  # fmt: skip
    limits = {"cpu": Fraction(cpu), "memory": Fraction(memory_gi) * GI}
    if hugepages_gi:
        limits["hugepages-1Gi"] = Fraction(hugepages_gi * GI)
    requests = dict(limits)
    if requests_cpu is not None:
        requests["cpu"] = Fraction(requests_cpu)
    return Container(ContainerName(name), requests=requests, limits=limits, kind=kind)


def pod(*containers: Container, init: tuple[Container, ...] = (), uid: str = "p") -> Pod:
    return Pod(uid=PodUID(uid), name=uid, containers=containers, init_containers=init)


def machine(nodes: int = 2, gi: int = 10, hugepages: int = 0) -> MemoryState:
    pages = {n: {"hugepages-1Gi": hugepages * GI} for n in range(nodes)} if hugepages else None
    return MemoryState.create(
        dict.fromkeys(range(nodes), gi * GI),
        hugepages=pages,
        system_reserved={n: {"memory": GI} for n in range(nodes)},
    )


HINTS = [
    # (description, machine, container request Gi, expected hints)
    ("fits one node", machine(), 1, [h("0"), h("1"), h("0,1", False)]),
    ("needs two nodes", machine(), 12, [h("0,1")]),
    ("too big for the machine", machine(), 20, None),
    ("allocatable is 9Gi per node", machine(), 9, [h("0"), h("1"), h("0,1", False)]),
    ("just over one node", machine(), 9.5, [h("0,1")]),
    ("four nodes, needs three", machine(4), 20,
     [h("0,1,2"), h("0,1,3"), h("0,2,3"), h("1,2,3"), h("0,1,2,3", False)]),
]  # fmt: skip


@pytest.mark.parametrize(("state", "gi", "expected"), [c[1:] for c in HINTS],
                         ids=[c[0] for c in HINTS])  # fmt: skip
def test_container_hints(state: MemoryState, gi: float, expected: list | None) -> None:
    container = ctr("c", gi)
    got = memory_hints(state, pod(container), container)
    assert got == ({} if expected is None else {"memory": tuple(expected)})


def test_hugepages_hints_share_the_masks() -> None:
    state = machine(hugepages=2)
    container = ctr("c", 1, hugepages_gi=1)
    got = memory_hints(state, pod(container), container)
    assert got == {"hugepages-1Gi": (h("0"), h("1"), h("0,1", False))} | {
        "memory": (h("0"), h("1"), h("0,1", False))
    }
    assert state.nodes[0].tables["memory"].allocatable == 7 * GI  # 10 - 1 reserved - 2 pages


def test_not_guaranteed_gets_nothing() -> None:
    burstable = ctr("c", 1, requests_cpu="0.5")
    the_pod = pod(burstable)
    assert memory_hints(machine(), the_pod, burstable) == {}
    assert memory_hints(machine(), the_pod, None) == {}
    assert allocate_memory(machine(), the_pod, burstable, h("0")).blocks == ()


def test_fractional_bytes_are_not_an_int64() -> None:
    odd = Container(ContainerName("c"), requests={"memory": Fraction(1, 2)})
    assert container_memory_requests(odd) is None


def test_allocation_charges_nodes_in_order_and_groups_them() -> None:
    container = ctr("c", 12)
    the_pod = pod(container)
    result = allocate_memory(machine(), the_pod, container, h("0,1"))
    assert result.blocks == (MemoryBlock((0, 1), 12 * GI, "memory"),)
    n0, n1 = result.state.nodes[0], result.state.nodes[1]
    assert (n0.tables["memory"].free, n1.tables["memory"].free) == (0, 6 * GI)
    assert (n0.assignments, n0.cells, n1.cells) == (1, (0, 1), (0, 1))
    # the group blocks single-node hints on its nodes and any other multi-node mix
    other = ctr("d", 1)
    assert memory_hints(result.state, pod(other, uid="q"), other) == {"memory": (h("0,1", False),)}
    # regenerated hints for the admitted container
    assert memory_hints(result.state, the_pod, container) == {"memory": (h("0,1"),)}
    released = remove_container_memory(result.state, the_pod.key("c"))
    assert released.nodes == machine().nodes
    assert remove_container_memory(released, the_pod.key("c")) is released


def test_single_node_allocation_blocks_multi_node_masks_through_it() -> None:
    small = ctr("s", 1)
    state = allocate_memory(machine(3), pod(small, uid="a"), small, h("0")).state
    big = ctr("b", 12)
    hints = memory_hints(state, pod(big, uid="b"), big)
    assert hints == {"memory": (h("1,2"),)}


def test_zero_hint_uses_the_best_own_hint() -> None:
    container = ctr("c", 1)
    result = allocate_memory(machine(), pod(container), container, None)
    assert result.blocks == (MemoryBlock((0,), GI, "memory"),)


def test_narrow_hint_is_widened_to_fit() -> None:
    container = ctr("c", 12)
    result = allocate_memory(machine(), pod(container), container, h("1", False))
    assert result.blocks[0].numa_affinity == (0, 1)


def _used_machine() -> MemoryState:
    """Nodes 0 and 1 (9Gi allocatable) each hold a 5Gi single-node block; 2 and 3 have 4Gi."""
    state = MemoryState.create(
        {0: 10 * GI, 1: 10 * GI, 2: 5 * GI, 3: 5 * GI},
        system_reserved={n: {"memory": GI} for n in range(4)},
    )
    for node in (0, 1):
        used = ctr("u", 5)
        state = allocate_memory(state, pod(used, uid=f"u{node}"), used, h(str(node))).state
    return state


SMALL_FIRST = MemoryState.create(
    {0: 5 * GI, 1: 10 * GI, 2: 10 * GI}, system_reserved={n: {"memory": GI} for n in range(3)}
)
ALLOC_ERRORS = [
    ("no memory anywhere", machine(), 30, None,
     "[memorymanager] failed to get the default NUMA affinity, no NUMA nodes with enough memory"
     " is available"),
    ("preferred merge without affinity, only a wide own fit", _used_machine(), 6,
     TopologyHint(None, True), "[memorymanager] failed to find the default preferred hint"),
    ("preferred narrow hint that must widen to a non-preferred one", SMALL_FIRST, 5, h("0"),
     "[memorymanager] failed to find the extended preferred hint"),
    ("nothing to widen to", _used_machine(), 6, h("0"),
     "[memorymanager] failed to find NUMA nodes to extend the current topology hint"),
]  # fmt: skip


@pytest.mark.parametrize(("state", "gi", "hint", "message"), [c[1:] for c in ALLOC_ERRORS],
                         ids=[c[0] for c in ALLOC_ERRORS])  # fmt: skip
def test_allocation_errors(
    state: MemoryState, gi: int, hint: TopologyHint | None, message: str
) -> None:
    container = ctr("c", gi)
    with pytest.raises(UnexpectedAdmissionError) as caught:
        allocate_memory(state, pod(container), container, hint)
    assert caught.value.message == f"Allocate failed due to {message}, which is unexpected"


def test_group_violation_is_refused() -> None:
    small = ctr("s", 1)
    state = allocate_memory(machine(), pod(small, uid="a"), small, h("0")).state
    big = ctr("b", 2)
    with pytest.raises(UnexpectedAdmissionError, match="preferred hint violates NUMA node"):
        allocate_memory(state, pod(big, uid="b"), big, h("0,1", False))


def test_init_memory_is_reused_by_the_app_container() -> None:
    init = ctr("init", 4, kind=ContainerKind.INIT)
    app = ctr("app", 3)
    the_pod = pod(app, init=(init,))
    s1 = allocate_memory(machine(), the_pod, init, h("0")).state
    assert s1.nodes[0].tables["memory"].free == 5 * GI
    s2 = allocate_memory(s1, the_pod, app, h("0")).state
    assert s2.nodes[0].tables["memory"].free == 5 * GI  # 3Gi reused from the init container
    assert s2.blocks[the_pod.key("init")][0].size == GI  # bookkeeping shrinks the init block
    assert s2.reusable_for(the_pod.uid, NUMAMask.of(0).bits, "memory") == GI


def test_sidecar_memory_is_not_reusable() -> None:
    side = ctr("side", 4, kind=ContainerKind.SIDECAR)
    app = ctr("app", 3)
    the_pod = pod(app, init=(side,))
    s1 = allocate_memory(machine(), the_pod, side, h("0")).state
    s2 = allocate_memory(s1, the_pod, app, h("0")).state
    assert s2.nodes[0].tables["memory"].free == 2 * GI


def test_allocate_is_idempotent() -> None:
    container = ctr("c", 1)
    once = allocate_memory(machine(), pod(container), container, h("1"))
    again = allocate_memory(once.state, pod(container), container, h("0"))
    assert again.blocks == once.blocks
    assert again.state.nodes == once.state.nodes


def test_regenerated_hints_with_mismatched_blocks_have_no_preference() -> None:
    container = ctr("c", 1)
    state = allocate_memory(machine(), pod(container), container, h("0")).state
    bigger = ctr("c", 2)
    assert memory_hints(state, pod(bigger), bigger) == {}


INIT, SIDECAR = ContainerKind.INIT, ContainerKind.SIDECAR
POD_REQUESTS = [
    ("apps add up", pod(ctr("a", 1), ctr("b", 2)), {"memory": 3 * GI}),
    ("init peak wins", pod(ctr("a", 1), init=(ctr("i", 5, kind=INIT),)), {"memory": 5 * GI}),
    ("sidecar counts throughout",
     pod(ctr("a", 1), init=(ctr("s", 2, kind=SIDECAR), ctr("i", 2, kind=INIT))),
     {"memory": 4 * GI}),
]  # fmt: skip


@pytest.mark.parametrize(("the_pod", "expected"), [c[1:] for c in POD_REQUESTS],
                         ids=[c[0] for c in POD_REQUESTS])  # fmt: skip
def test_pod_memory_requests(the_pod: Pod, expected: dict) -> None:
    assert pod_memory_requests(the_pod) == expected


def test_pod_scope_hints() -> None:
    the_pod = pod(ctr("a", 6), ctr("b", 6))
    assert memory_hints(machine(), the_pod, None) == {"memory": (h("0,1"),)}
    state = allocate_memory(machine(), the_pod, the_pod.containers[0], h("0,1")).state
    # a container with blocks short-circuits: its block is compared to the pod's need
    assert memory_hints(state, the_pod, None) == {}


def test_cpu_less_nodes_take_part() -> None:
    topology = CPUTopology(
        [CPUInfo(cpu=0, core=0, socket=0, numa=0, l3=0)],
        numa_nodes=[NUMANodeInfo(0, memory_bytes=4 * GI), NUMANodeInfo(1, memory_bytes=64 * GI)],
    )
    state = MemoryState.from_topology(topology)
    container = ctr("c", 8)
    assert memory_hints(state, pod(container), container) == {"memory": (h("1"), h("0,1", False))}


def test_machine_errors() -> None:
    topology = CPUTopology([CPUInfo(cpu=0, core=0, socket=0, numa=0, l3=0)])
    with pytest.raises(MachineError, match="has no memory size"):
        MemoryState.from_topology(topology)


def test_a_reservation_beyond_the_node_wraps_as_the_kubelets_uint64() -> None:
    # Found by bench/diff_kubelet_memory.py. The kubelet starts (we refused) and its
    # memory_manager_state holds these numbers for node 0: 1280Mi of memory, 1344Mi reserved.
    state = MemoryState.create(
        {0: 1342177280, 1: 4 * GI}, system_reserved={0: {"memory": 1409286144}}
    )
    table = state.nodes[0].tables["memory"]
    assert (table.total, table.system_reserved) == (1342177280, 1409286144)
    assert table.allocatable == table.free == 18446744073642442752
    # Sums over a mask wrap too: node 0's near-2^64 plus node 1's 4Gi is 4Gi - 64Mi.
    assert state.free_covers(NUMAMask.of(0), {"memory": 100 * GI})
    assert state.free_covers(NUMAMask.of(0, 1), {"memory": 4 * GI - 64 * 2**20})
    assert not state.free_covers(NUMAMask.of(0, 1), {"memory": 4 * GI})
    assert not state.allocatable_covers((0, 1), {"memory": 4 * GI})
    # so the two-node mask is no hint for 4Gi, while node 0 alone is
    big = ctr("c", 4)
    assert memory_hints(state, pod(big), big) == {"memory": (h("0"), h("1"))}
