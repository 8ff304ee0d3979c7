"""The static memory policy (state, hints, allocation, release) on the kubelet's own cases.

Sources (kubernetes/kubernetes, pkg/kubelet/cm/memorymanager): policy_static_test.go
(TestStaticPolicyStart's default machine state, TestStaticPolicyAllocate,
TestStaticPolicyAllocateWithInitContainers, TestStaticPolicyAllocateWithRestartableInitContainers,
TestStaticPolicyRemoveContainer, TestStaticPolicyGetTopologyHints, Test_getPodRequestedResources)
and memory_manager_test.go (TestGetTopologyHints, TestAllocateAndAddPodWithInitContainers,
TestValidateReservedMemory, TestConvertPreReserved, TestGetSystemReservedMemory). Each row's id
starts with the kubelet test's name; machine states are the tests' own hand-made tables
(sizes in MiB, in the kubelet's field order: allocatable, free, reserved, system reserved,
total). Every hints and allocation row also runs through the rule form used past 8 NUMA nodes,
which must agree with the enumeration on these states too.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from types import MappingProxyType
from typing import Any

import pytest

from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.hints.hint import TopologyHint
from cpumanager.core.hints.source import MultiCapacityHintSource
from cpumanager.core.ids import ContainerKey, ContainerName, PodUID
from cpumanager.core.memory import (
    MemoryBlock,
    MemoryState,
    MemoryTable,
    NodeMemory,
    allocate_memory,
    memory_hints,
    pod_memory_requests,
    release_started_init_containers,
    remove_container_memory,
)
from cpumanager.core.workload import Container, ContainerKind, Pod
from cpumanager.errors import ConfigError, UnexpectedAdmissionError
from cpumanager.formats.kubelet_config import KubeletConfig, reserved_memory_per_node

MB, GB = 2**20, 2**30
HP = "hugepages-1Gi"
HP2 = "hugepages-2Mi"
INIT, SIDECAR, APP = ContainerKind.INIT, ContainerKind.SIDECAR, ContainerKind.APP

Row = tuple[int, int, int, int, int]  # MiB: allocatable, free, reserved, system reserved, total


def tab(row: Row) -> MemoryTable:
    allocatable, free, reserved, system_reserved, total = (v * MB for v in row)
    return MemoryTable(total, system_reserved, allocatable, reserved, free)


def nd(mem: Row, pages: Row | None = None, *, cells: tuple[int, ...] = (), n: int = 0,
       pages_type: str = HP) -> NodeMemory:  # fmt: skip
    tables = {"memory": tab(mem)}
    if pages is not None:
        tables[pages_type] = tab(pages)
    return NodeMemory(MappingProxyType(tables), n, cells)


BlockSpec = Mapping[tuple[str, str], list[tuple[tuple[int, ...], str, int]]]


def ms(nodes: Mapping[int, NodeMemory], blocks: BlockSpec | None = None,
       reusable_pod: str | None = None) -> MemoryState:  # fmt: skip
    table = {
        ContainerKey(PodUID(p), ContainerName(c)): tuple(
            MemoryBlock(aff, size * MB, kind) for aff, kind, size in spec
        )
        for (p, c), spec in (blocks or {}).items()
    }
    return MemoryState(
        nodes=MappingProxyType(dict(nodes)),
        blocks=MappingProxyType(table),
        reusable_pod=None if reusable_pod is None else PodUID(reusable_pod),
    )


def ctr(name: str, mem: int, pages: int | None = None, *, kind: ContainerKind = APP,
        pages_type: str = HP, burstable: bool = False,
        limits: bool = True) -> Container:  # fmt: skip
    """Sizes in MiB; Guaranteed (limits == requests) unless ``burstable``."""
    requests = {"cpu": Fraction(1), "memory": Fraction(mem * MB)}
    if pages is not None:
        requests[pages_type] = Fraction(pages * MB)
    caps = dict(requests)
    if burstable:
        caps = {k: v if k == "cpu" else 2 * v for k, v in requests.items()}
    return Container(ContainerName(name), requests=requests, limits=caps if limits else {},
                     kind=kind)  # fmt: skip


def pod(uid: str, *apps: Container, init: tuple[Container, ...] = ()) -> Pod:
    return Pod(uid=PodUID(uid), name=uid, containers=apps, init_containers=init)


def h(nodes: str, preferred: bool) -> TopologyHint:
    return TopologyHint(NUMAMask(int(n) for n in nodes.split(",")), preferred)


NONE = TopologyHint(None, preferred=False)  # the fake topology manager's empty hint
GUAR = ctr("container1", 1024, 1024)
GUAR2 = ctr("container2", 1024, 1024)
M2G: Row = (1536, 1536, 0, 512, 2048)
H1G: Row = (1024, 1024, 0, 0, 1024)
H1G_USED: Row = (1024, 0, 1024, 0, 1024)


def _blocks(state: MemoryState) -> dict[tuple[str, str], list[tuple[tuple[int, ...], str, int]]]:
    return {
        (str(key.pod_uid), str(key.container_name)): sorted(
            (b.numa_affinity, b.resource, b.size // MB) for b in blocks
        )
        for key, blocks in state.blocks.items()
    }


def _nodes(state: MemoryState) -> dict[int, tuple[dict[str, MemoryTable], int, list[int]]]:
    return {
        n: (dict(info.tables), info.assignments, sorted(info.cells))
        for n, info in state.nodes.items()
    }


@pytest.fixture(params=[False, True], ids=["enumerated", "rule"])
def implicit(request: pytest.FixtureRequest) -> bool:
    """Run each allocation row with mask enumeration and with the rule form (past 8 nodes)."""
    return bool(request.param)


# --- TestStaticPolicyStart: the default machine state ------------------------------------


def test_start_fills_the_default_machine_state() -> None:
    """TestStaticPolicyStart/should fill the state with default values, when the state is empty."""
    state = MemoryState.create(
        {0: 3 * GB}, hugepages={0: {HP: GB}}, system_reserved={0: {"memory": 512 * MB}}
    )
    assert _nodes(state) == _nodes(ms({0: nd((*M2G[:4], 3072), H1G, cells=(0,))}))
    assert state.blocks == {}


# --- TestStaticPolicyAllocate ------------------------------------------------------------

_C1_2 = {("pod1", "container1"): [((0,), "memory", 1024), ((0,), HP, 1024)]}
_THREE = {
    0: nd((1024, 512, 512, 512, 1536), H1G, cells=(0,), n=1),
    1: nd((512, 512, 0, 512, 1536), H1G, cells=(1,)),
    2: nd((512, 512, 0, 512, 1536), H1G, cells=(2,)),
}
_C1_HALF = {("pod1", "container1"): [((0,), "memory", 512)]}
_FOUR = {i: nd((512, 512, 0, 512, 1024), H1G, cells=(i,)) for i in range(4)}
_SMALL_WITH_PAIR = {
    0: nd((512, 512, 0, 512, 1024), H1G, cells=(0,)),
    1: nd((1536, 512, 1024, 512, 2048), H1G, cells=(1, 2), n=1),
    2: nd((1536, 512, 1024, 512, 2048), H1G, cells=(1, 2), n=1),
}

ALLOCATE: list[tuple[str, MemoryState, Pod, TopologyHint, str | None, MemoryState | None]] = [
    ("TestStaticPolicyAllocate/should do nothing for non-guaranteed pods",
     ms({0: nd(M2G, H1G)}), pod("pod1", ctr("container1", 1024, 1024, burstable=True)), NONE,
     None, ms({0: nd(M2G, H1G)})),
    ("TestStaticPolicyAllocate/should do nothing once container already exists under the state "
     "file",
     ms({0: nd((1536, 512, 1024, 512, 2048), H1G)},
        {("pod1", "container1"): [((0,), "memory", 1024)]}),
     pod("pod1", GUAR), NONE, None,
     ms({0: nd((1536, 512, 1024, 512, 2048), H1G)},
        {("pod1", "container1"): [((0,), "memory", 1024)]})),
    ("TestStaticPolicyAllocate/should calculate a default topology hint when no NUMA affinity was "
     "provided by the topology manager hint",
     ms({0: nd(M2G, H1G, cells=(0,))}), pod("pod1", GUAR), NONE, None,
     ms({0: nd((1536, 512, 1024, 512, 2048), H1G_USED, cells=(0,), n=2)}, _C1_2)),
    ("TestStaticPolicyAllocate/should fail when no NUMA affinity was provided under the topology "
     "manager hint and calculation of the default hint failed",
     ms({0: nd((1536, 512, 1024, 512, 2048), H1G_USED, cells=(0,), n=2)}, _C1_2),
     pod("pod2", GUAR2), NONE,
     "[memorymanager] failed to get the default NUMA affinity, no NUMA nodes with enough memory "
     "is available", None),
    ("TestStaticPolicyAllocate/should fail when no NUMA affinity was provided under the topology "
     "manager preferred hint and default hint has preferred false",
     ms(_THREE, _C1_HALF), pod("pod2", GUAR2), TopologyHint(None, preferred=True),
     "[memorymanager] failed to find the default preferred hint", None),
    ("TestStaticPolicyAllocate/should fail when NUMA affinity provided under the topology manager "
     "hint did not satisfy container requirements and extended hint generation failed",
     ms(_SMALL_WITH_PAIR), pod("pod1", GUAR), h("0", False),
     "[memorymanager] failed to find NUMA nodes to extend the current topology hint", None),
    ("TestStaticPolicyAllocate/should fail when the topology manager provided the preferred hint "
     "and extended hint has preferred false",
     ms(_THREE, _C1_HALF), pod("pod2", GUAR2), h("1", True),
     "[memorymanager] failed to find the extended preferred hint", None),
    ("policy_static.go rule/the default hint may use a node whose Cells are empty",
     ms({0: nd(M2G, H1G)}), pod("pod1", GUAR), NONE, None,
     ms({0: nd((1536, 512, 1024, 512, 2048), H1G_USED, cells=(0,), n=2)}, _C1_2)),
    ("TestStaticPolicyAllocate/should succeed to allocate memory from multiple NUMA nodes",
     ms(_FOUR), pod("pod1", GUAR), TopologyHint(None, preferred=True), None,
     ms({0: nd((512, 0, 512, 512, 1024), H1G_USED, cells=(0, 1), n=2),
         1: nd((512, 0, 512, 512, 1024), H1G, cells=(0, 1), n=2),
         2: _FOUR[2], 3: _FOUR[3]},
        {("pod1", "container1"): [((0, 1), "memory", 1024), ((0, 1), HP, 1024)]})),
]  # fmt: skip


@pytest.mark.parametrize(("state", "the_pod", "hint", "error", "expected"),
                         [r[1:] for r in ALLOCATE], ids=[r[0] for r in ALLOCATE])  # fmt: skip
def test_allocate(
    implicit: bool,
    state: MemoryState,
    the_pod: Pod,
    hint: TopologyHint,
    error: str | None,
    expected: MemoryState | None,
) -> None:
    if error is not None:
        with pytest.raises(UnexpectedAdmissionError) as caught:
            allocate_memory(state, the_pod, the_pod.containers[0], hint, implicit=implicit)
        assert caught.value.message == f"Allocate failed due to {error}, which is unexpected"
        return
    assert expected is not None
    done = allocate_memory(state, the_pod, the_pod.containers[0], hint, implicit=implicit).state
    assert _blocks(done) == _blocks(expected)
    assert _nodes(done) == _nodes(expected)


# --- init containers (all init containers, then all app containers, the fake empty hint) ---


def _one_node(mem: Row, pages: Row) -> MemoryState:
    return ms({0: nd(mem, pages, cells=(0,))})


def _init_pod(apps: list[int], inits: list[tuple[str, int, ContainerKind]]) -> Pod:
    return pod(
        "pod1",
        *(ctr(f"container{i + 1}", gi * 1024, gi * 1024) for i, gi in enumerate(apps)),
        init=tuple(ctr(name, gi * 1024, gi * 1024, kind=kind) for name, gi, kind in inits),
    )


def _gi_blocks(**sizes: int) -> dict[tuple[str, str], list[tuple[tuple[int, ...], str, int]]]:
    return {
        ("pod1", name): sorted([((0,), "memory", gi * 1024), ((0,), HP, gi * 1024)])
        for name, gi in sizes.items()
    }


_8G = ((7680, 7680, 0, 512, 8192), (8192, 8192, 0, 0, 8192))
_10G = ((10240, 10240, 0, 512, 10240), (10240, 10240, 0, 0, 10240))
_7G = ((7168, 7168, 0, 512, 7680), (7168, 7168, 0, 0, 7168))
WITH_INIT: list[tuple[str, MemoryState, Pod, dict[str, int], Row, Row, int]] = [
    ("TestStaticPolicyAllocateWithInitContainers/should re-use init containers memory, init "
     "containers requests 1Gi and 2Gi, apps containers 3Gi and 4Gi",
     _one_node(*_8G), _init_pod([3, 4], [("initContainer1", 1, INIT), ("initContainer2", 2, INIT)]),
     {"initContainer1": 0, "initContainer2": 0, "container1": 3, "container2": 4},
     (7680, 512, 7168, 512, 8192), (8192, 1024, 7168, 0, 8192), 8),
    ("TestStaticPolicyAllocateWithInitContainers/should re-use init containers memory, init "
     "containers requests 4Gi and 3Gi, apps containers 2Gi and 1Gi",
     _one_node(*_8G), _init_pod([2, 1], [("initContainer1", 4, INIT), ("initContainer2", 3, INIT)]),
     {"initContainer1": 0, "initContainer2": 1, "container1": 2, "container2": 1},
     (7680, 3584, 4096, 512, 8192), (8192, 4096, 4096, 0, 8192), 8),
    ("TestStaticPolicyAllocateWithInitContainers/should re-use init containers memory, init "
     "containers requests 7Gi and 4Gi, apps containers 4Gi and 3Gi",
     _one_node(*_8G), _init_pod([4, 3], [("initContainer1", 7, INIT), ("initContainer2", 4, INIT)]),
     {"initContainer1": 0, "initContainer2": 0, "container1": 4, "container2": 3},
     (7680, 512, 7168, 512, 8192), (8192, 1024, 7168, 0, 8192), 8),
    ("TestStaticPolicyAllocateWithInitContainers/should re-use init containers memory, init "
     "containers requests 7Gi and 4Gi, apps containers 5Gi and 2Gi",
     # the policy starts holding (empty) reusable memory of another pod
     MemoryState(nodes=_one_node(*_10G).nodes, reusable_pod=PodUID("pod0")),
     _init_pod([5, 2], [("initContainer1", 7, INIT), ("initContainer2", 4, INIT)]),
     {"initContainer1": 0, "initContainer2": 0, "container1": 5, "container2": 2},
     (10240, 3072, 7168, 512, 10240), (10240, 3072, 7168, 0, 10240), 8),
    ("TestStaticPolicyAllocateWithRestartableInitContainers/should not re-use restartable init "
     "containers memory",
     _one_node(*_7G),
     _init_pod([1], [("initContainer1", 1, INIT), ("restartableInitContainer2", 2, SIDECAR),
                     ("initContainer3", 3, INIT), ("restartableInitContainer4", 4, SIDECAR)]),
     {"initContainer1": 0, "restartableInitContainer2": 2, "initContainer3": 0,
      "restartableInitContainer4": 4, "container1": 1},
     (7168, 0, 7168, 512, 7680), (7168, 0, 7168, 0, 7168), 10),
]  # fmt: skip


@pytest.mark.parametrize(("state", "the_pod", "sizes", "mem", "pages", "count"),
                         [r[1:] for r in WITH_INIT], ids=[r[0] for r in WITH_INIT])  # fmt: skip
def test_allocate_with_init_containers(
    implicit: bool,
    state: MemoryState,
    the_pod: Pod,
    sizes: dict[str, int],
    mem: Row,
    pages: Row,
    count: int,
) -> None:
    for container in the_pod.all_containers():
        state = allocate_memory(state, the_pod, container, NONE, implicit=implicit).state
    assert _blocks(state) == _gi_blocks(**sizes)
    assert _nodes(state) == _nodes(ms({0: nd(mem, pages, cells=(0,), n=count)}))


def test_restartable_init_containers_already_in_the_state(implicit: bool) -> None:
    """TestStaticPolicyAllocateWithRestartableInitContainers/should do nothing once containers
    already exist under the state file."""
    held = {
        ("pod1", "initContainer1"): [((0,), "memory", 1024)],
        ("pod1", "container1"): [((0,), "memory", 1024)],
    }
    state = ms({0: nd((2560, 512, 2048, 512, 3072), (2048, 2048, 0, 0, 2048))}, held)
    the_pod = pod("pod1", GUAR, init=(ctr("initContainer1", 1024, 1024, kind=SIDECAR),))
    after = state
    for container in the_pod.all_containers():
        after = allocate_memory(after, the_pod, container, NONE, implicit=implicit).state
    assert _blocks(after) == _blocks(state)
    assert _nodes(after) == _nodes(state)


def test_init_containers_removed_once_the_app_container_starts(implicit: bool) -> None:
    """TestAllocateAndAddPodWithInitContainers/should remove init containers from the state
    file, once app container started (the manager's AddContainer releases the init
    container after the app container reused its memory)."""
    node = nd((9728, 9728, 0, 512, 10240), (5120, 5120, 0, 0, 5120))
    state = ms({0: replace_cells(node, (0,)), 1: replace_cells(node, (1,))})
    init = ctr("initContainer1", 7 * 1024, 5 * 1024, kind=INIT)
    app = ctr("container1", 4 * 1024, 4 * 1024)
    the_pod = pod("pod1", app, init=(init,))
    for container in the_pod.all_containers():
        state = allocate_memory(state, the_pod, container, NONE, implicit=implicit).state
    for container in the_pod.all_containers():
        state = release_started_init_containers(state, the_pod, container)
    assert _blocks(state) == _gi_blocks(container1=4)
    expected = {
        0: nd((9728, 5632, 4096, 512, 10240), (5120, 1024, 4096, 0, 5120), cells=(0,), n=2),
        1: replace_cells(node, (1,)),
    }
    assert _nodes(state) == _nodes(ms(expected))


def replace_cells(node: NodeMemory, cells: tuple[int, ...]) -> NodeMemory:
    return NodeMemory(node.tables, node.assignments, cells)


# --- TestStaticPolicyRemoveContainer -----------------------------------------------------

REMOVE: list[tuple[str, MemoryState, MemoryState]] = [
    ("TestStaticPolicyRemoveContainer/should do nothing when the container does not exist under "
     "the state",
     ms({0: nd(M2G, H1G)}), ms({0: nd(M2G, H1G)})),
    ("TestStaticPolicyRemoveContainer/should delete the container assignment and update the "
     "machine state",
     ms({0: nd((1536, 512, 1024, 512, 2048), H1G_USED, cells=(0,), n=2)}, _C1_2),
     ms({0: nd(M2G, H1G, cells=(0,))})),
    ("TestStaticPolicyRemoveContainer/should delete the cross NUMA container assignment and "
     "update the machine state",
     ms({0: nd((512, 0, 512, 512, 1024), H1G_USED, cells=(0, 1), n=2),
         1: nd((512, 0, 512, 512, 1024), H1G, cells=(0, 1), n=2)},
        {("pod1", "container1"): [((0, 1), "memory", 1024), ((0, 1), HP, 1024)]}),
     ms({0: nd((512, 512, 0, 512, 1024), H1G, cells=(0,)),
         1: nd((512, 512, 0, 512, 1024), H1G, cells=(1,))})),
]  # fmt: skip


@pytest.mark.parametrize(("state", "expected"), [r[1:] for r in REMOVE],
                         ids=[r[0] for r in REMOVE])  # fmt: skip
def test_remove_container(state: MemoryState, expected: MemoryState) -> None:
    done = remove_container_memory(state, ContainerKey(PodUID("pod1"), ContainerName("container1")))
    assert _blocks(done) == {}
    assert _nodes(done) == _nodes(expected)


# --- TestStaticPolicyGetTopologyHints and the manager's TestGetTopologyHints --------------

_BOTH = ("memory", HP)
_PAIR_USED = {
    0: nd((1536, 0, 1536, 512, 2048), H1G_USED, cells=(0, 1), n=2),
    1: nd((1536, 1024, 512, 512, 2048), H1G_USED, cells=(0, 1), n=2),
    2: nd(M2G, H1G, cells=(2,)),
    3: nd(M2G, H1G, cells=(3,)),
}
_PAIR_2M = {
    0: nd((1536, 0, 1536, 512, 2048), (20, 0, 20, 0, 20), cells=(0, 1), n=2, pages_type=HP2),
    1: nd((1536, 1024, 512, 512, 2048), (20, 16, 4, 0, 20), cells=(0, 1), n=2, pages_type=HP2),
}
_MANAGER = {
    0: nd((9216, 7168, 2048, 1024, 10240), (5120, 3072, 2048, 0, 5120), cells=(0,), n=4),
    1: nd((9216, 9216, 0, 1024, 10240), (5120, 5120, 0, 0, 5120), cells=(1,)),
}
_FAKE_POD1 = {
    ("fakePod1", c): [((0,), "memory", 1024), ((0,), HP, 1024)]
    for c in ("fakeContainer1", "fakeContainer2")
}

HINTS: list[tuple[str, MemoryState, Pod, dict[str, tuple[TopologyHint, ...]]]] = [
    ("TestStaticPolicyGetTopologyHints/should not provide topology hints for non-guaranteed pods",
     ms({}), pod("pod1", ctr("container1", 1024, 1024, burstable=True)), {}),
    ("TestStaticPolicyGetTopologyHints/should provide topology hints based on the existent memory "
     "assignment",
     ms({}, _C1_2), pod("pod1", GUAR), dict.fromkeys(_BOTH, (h("0", True),))),
    ("TestStaticPolicyGetTopologyHints/should calculate new topology hints, when the container "
     "does not exist under assignments",
     ms(_PAIR_USED, {("pod1", "container1"): [((0, 1), "memory", 2048), ((0, 1), HP, 2048)]}),
     pod("pod2", GUAR2), dict.fromkeys(_BOTH, (h("2", True), h("3", True), h("2,3", False)))),
    ("TestStaticPolicyGetTopologyHints/should fail when number of existing memory assignment "
     "resources are different from resources requested by container",
     ms({}, {("pod1", "container1"): [((0,), "memory", 1024)]}), pod("pod1", GUAR), {}),
    ("TestStaticPolicyGetTopologyHints/should fail when existing memory assignment resources are "
     "different from resources requested by container",
     ms({}, {("pod1", "container1"): [((0,), "memory", 1024), ((0,), HP2, 1024)]}),
     pod("pod1", GUAR), {}),
    ("TestStaticPolicyGetTopologyHints/should fail when existing memory assignment size is "
     "different from one requested by the container",
     ms({}, {("pod1", "container1"): [((0,), "memory", 512), ((0,), HP, 1024)]}),
     pod("pod1", GUAR), {}),
    ("TestStaticPolicyGetTopologyHints/should not return preferred hints with multiple NUMA nodes "
     "for the pod with resources satisfied by a single NUMA node",
     ms(_PAIR_2M, {("pod1", "container1"): [((0, 1), "memory", 2048), ((0, 1), HP2, 24)]}),
     pod("pod2", ctr("container2", 1024, 16, pages_type=HP2)),
     dict.fromkeys(("memory", HP2), (h("0,1", False),))),
    # Not a kubelet test case: calculateHints refuses a single node only when its Cells list
    # several nodes, so the empty Cells of the tests' hand-made states do not block it.
    ("calculateHints rule/a node with empty Cells and no assignments serves single-node hints",
     ms({0: nd(M2G, H1G), 1: nd(M2G, H1G)}), pod("pod1", GUAR),
     dict.fromkeys(_BOTH, (h("0", True), h("1", True), h("0,1", False)))),
    ("calculateHints rule/a node with empty Cells and assignments is kept out of multi-node masks",
     ms({0: nd(M2G, H1G, n=1), 1: nd(M2G, H1G, cells=(1,))}), pod("pod1", GUAR),
     dict.fromkeys(_BOTH, (h("0", True), h("1", True)))),
    ("TestGetTopologyHints/Successful hint generation (fakePod1 active)",
     ms(_MANAGER, _FAKE_POD1), pod("fakePod2", ctr("fakeContainer1", 1024, 1024)),
     dict.fromkeys(_BOTH, (h("0", True), h("1", True)))),
]  # fmt: skip


def _check_hints(state: MemoryState, the_pod: Pod, expected: Mapping[str, Any]) -> None:
    container = the_pod.containers[0]
    want = {resource: tuple(hints) for resource, hints in expected.items()}
    assert memory_hints(state, the_pod, container) == want
    # the rule form used past 8 NUMA nodes gives the same answer
    ruled = {
        resource: value.explicit() if isinstance(value, MultiCapacityHintSource) else value
        for resource, value in memory_hints(state, the_pod, container, implicit=True).items()
    }
    assert ruled == want


@pytest.mark.parametrize(("state", "the_pod", "expected"), [r[1:] for r in HINTS],
                         ids=[r[0] for r in HINTS])  # fmt: skip
def test_get_topology_hints(
    state: MemoryState, the_pod: Pod, expected: dict[str, tuple[TopologyHint, ...]]
) -> None:
    _check_hints(state, the_pod, expected)


def test_manager_hints_after_removing_stale_containers() -> None:
    """TestGetTopologyHints/Successful hint generation (no active pods: the manager first
    removes fakePod1's containers as stale, which frees node 0 for cross-node masks)."""
    state = ms(_MANAGER, _FAKE_POD1)
    for name in ("fakeContainer1", "fakeContainer2"):
        state = remove_container_memory(
            state, ContainerKey(PodUID("fakePod1"), ContainerName(name))
        )
    assert state.nodes[0].assignments == 0
    assert state.nodes[0].cells == (0,)
    expected = dict.fromkeys(_BOTH, (h("0", True), h("1", True), h("0,1", False)))
    _check_hints(state, pod("fakePod2", ctr("fakeContainer1", 1024, 1024)), expected)


# --- Test_getPodRequestedResources -------------------------------------------------------


def _req_pod(apps: list[tuple[int, int]], inits: list[tuple[int, int, ContainerKind]]) -> Pod:
    """Pods with requests only (no limits), sizes in GiB (memory, hugepages-1Gi)."""
    return pod(
        "",
        *(ctr(f"container{i}", m * 1024, p * 1024, limits=False) for i, (m, p) in enumerate(apps)),
        init=tuple(
            ctr(f"init{i}", m * 1024, p * 1024, kind=k, limits=False)
            for i, (m, p, k) in enumerate(inits)
        ),
    )


POD_REQUESTS: list[tuple[str, Pod, int, int]] = [
    ("Test_getPodRequestedResources/maximum resources of init containers > total resources of "
     "containers",
     _req_pod([(1, 1), (2, 2)], [(1, 1, INIT), (4, 4, INIT)]), 4, 4),
    ("Test_getPodRequestedResources/maximum resources of init containers < total resources of "
     "containers",
     _req_pod([(2, 2), (3, 3)], [(1, 1, INIT), (3, 3, INIT)]), 5, 5),
    ("Test_getPodRequestedResources/calculate different resources independently",
     _req_pod([(2, 1), (3, 2)], [(1, 1, INIT), (3, 4, INIT)]), 5, 4),
    ("Test_getPodRequestedResources/maximum resources of init containers > total resources of "
     "long running containers, including restartable init containers",
     _req_pod([(1, 1), (2, 2)], [(2, 2, SIDECAR), (4, 4, INIT)]), 6, 6),
    ("Test_getPodRequestedResources/maximum resources of init containers < total resources of "
     "long running containers, including restartable init containers",
     _req_pod([(2, 2), (3, 3)], [(2, 2, SIDECAR), (4, 4, INIT)]), 7, 7),
]  # fmt: skip


@pytest.mark.parametrize(("the_pod", "memory", "pages"), [r[1:] for r in POD_REQUESTS],
                         ids=[r[0] for r in POD_REQUESTS])  # fmt: skip
def test_pod_requested_resources(the_pod: Pod, memory: int, pages: int) -> None:
    assert pod_memory_requests(the_pod) == {"memory": memory * GB, HP: pages * GB}


# --- reservedMemory: TestValidateReservedMemory, TestConvertPreReserved,
#     TestGetSystemReservedMemory, TestStaticPolicyNew -------------------------------------
# Node Allocatable's memory reservation is kubeReserved + systemReserved + evictionHard; the
# rows switch eviction off (evictionHard: {}) so the reservation is the one the kubelet test
# gives. Node Allocatable never holds hugepages (kubeReserved/systemReserved do not accept
# them), so the kubelet rows that put hugepages there have no configuration to port.


def _config(allocatable: str | None, reserved: list[tuple[int, dict[str, str]]]) -> KubeletConfig:
    body: dict[str, Any] = {"memoryManagerPolicy": "Static", "evictionHard": {}}
    if allocatable is not None:
        body["kubeReserved"] = {"memory": allocatable}
    body["reservedMemory"] = [{"numaNode": n, "limits": limits} for n, limits in reserved]
    return KubeletConfig.from_mapping(body)


NOT_EQUAL = 'the total amount "{}" of type "{}" is not equal to the value "{}" determined by Node '

RESERVED: list[tuple[str, str | None, list[tuple[int, dict[str, str]]], str | None, dict]] = [
    ("TestValidateReservedMemory/Node Allocatable not set (equal zero), reserved set",
     None, [(0, {"memory": "12"})], NOT_EQUAL.format("12", "memory", "0"), {}),
    ("TestValidateReservedMemory/Reserved not equal to Node Allocatable",
     "5", [(0, {"memory": "12"})], NOT_EQUAL.format("12", "memory", "5"), {}),
    ("TestValidateReservedMemory/Reserved contains the NUMA node that does not exist under the "
     "machine",
     "17", [(0, {"memory": "12"}), (2, {"memory": "5"})],
     "the reserved memory configuration references a NUMA node 2 that does not exist on this "
     "machine", {}),
    ("TestValidateReservedMemory/Reserved total equal to Node Allocatable (memory part)",
     "17", [(0, {"memory": "12"}), (1, {"memory": "5"})], None,
     {0: {"memory": 12}, 1: {"memory": 5}}),
    ("TestGetSystemReservedMemory/Should return error when Allocatable reservation is not equal "
     "to the reserved memory",
     None, [(0, {"memory": "1Gi"})], NOT_EQUAL.format("1Gi", "memory", "0"), {}),
    ("TestGetSystemReservedMemory/Reserved should be equal to systemReservedMemory",
     "2Gi", [(0, {"memory": "1Gi"}), (1, {"memory": "1Gi"})], None,
     {0: {"memory": GB}, 1: {"memory": GB}}),
    ("TestConvertPreReserved/Single NUMA node is reserved (memory part)",
     "12", [(0, {"memory": "12"})], None, {0: {"memory": 12}}),
    ("TestStaticPolicyNew/should succeed, when at least one NUMA node has reserved memory",
     "512Mi", [(0, {}), (1, {"memory": "512Mi"})], None, {1: {"memory": 512 * MB}}),
]  # fmt: skip


@pytest.mark.parametrize(("allocatable", "reserved", "error", "expected"),
                         [r[1:] for r in RESERVED], ids=[r[0] for r in RESERVED])  # fmt: skip
def test_reserved_memory(
    allocatable: str | None,
    reserved: list[tuple[int, dict[str, str]]],
    error: str | None,
    expected: dict[int, dict[str, int]],
) -> None:
    if error is not None:
        with pytest.raises(ConfigError) as caught:
            reserved_memory_per_node(_config(allocatable, reserved), (0, 1))
        assert str(caught.value).startswith(error)
        return
    got = reserved_memory_per_node(_config(allocatable, reserved), (0, 1))
    # the kubelet lists every node, an unreserved one with an empty map
    assert {n: v for n, v in got.items() if v} == expected


def test_started_containers_release_only_earlier_regular_init_containers() -> None:
    """The AddContainer clean-up keeps sidecars and the starting container itself."""
    state = _one_node(*_7G)
    the_pod = _init_pod(
        [1], [("initContainer1", 1, INIT), ("restartableInitContainer2", 2, SIDECAR),
              ("initContainer3", 3, INIT)],
    )  # fmt: skip
    for container in the_pod.all_containers():
        state = allocate_memory(state, the_pod, container, NONE).state
    third = the_pod.container("initContainer3")
    after_third = release_started_init_containers(state, the_pod, third)
    assert set(_blocks(after_third)) == {
        ("pod1", "restartableInitContainer2"), ("pod1", "initContainer3"), ("pod1", "container1")
    }  # fmt: skip
    done = release_started_init_containers(after_third, the_pod, the_pod.containers[0])
    assert _blocks(done) == _gi_blocks(restartableInitContainer2=2, container1=1)
    assert done.nodes[0].tables["memory"].reserved == 3 * GB
    assert done.nodes[0].assignments == 4
