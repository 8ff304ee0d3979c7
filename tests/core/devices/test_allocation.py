"""Device allocation and reuse on the kubelet device manager's own cases, ported as facts.

Sources: ``pkg/kubelet/cm/devicemanager/topology_hints_test.go`` (TestTopologyAlignedAllocation
rows with a plugin preferred allocation, TestGetPreferredAllocationParameters) and
``manager_test.go`` (TestFilterByAffinity, TestPodContainerDeviceAllocation,
TestPodContainerDeviceToAllocate, TestInitContainerDeviceAllocation,
TestRestartableInitContainerDeviceAllocation, TestGetDeviceRunContainerOptions,
TestGetAllocatableDevices*). Row ids keep the kubelet test's name.

The kubelet picks inside each group (reusable, aligned, plugin-preferred, unaligned, no NUMA)
in Go map order, i.e. at random; where a kubelet test leaves the choice open, these tests
check only what it checks (counts per node, subsets, disjointness).
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction
from typing import Any

import pytest

from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.devices import (
    Device,
    DeviceState,
    allocate_devices,
    device_hints,
    release_pod_devices,
)
from cpumanager.core.hints.hint import NO_PREFERENCE, TopologyHint
from cpumanager.core.ids import ContainerKey, ContainerName, PodUID
from cpumanager.core.workload import Container, ContainerKind, Pod
from cpumanager.errors import UnexpectedAdmissionError

# --- helpers ---------------------------------------------------------------------------------


def dev(device_id: str, *nodes: int, healthy: bool = True) -> Device:
    return Device(device_id, tuple(nodes), healthy)


def hint(*nodes: int) -> TopologyHint:
    return TopologyHint(NUMAMask(nodes), True)


def ctr(name: str, kind: ContainerKind = ContainerKind.APP, **limits: int) -> Container:
    lim = {k.replace("_", "."): Fraction(v) for k, v in limits.items()}
    return Container(ContainerName(name), requests=lim, limits=lim, kind=kind)


def pod(*containers: Container, init: tuple[Container, ...] = (), uid: str = "podUID") -> Pod:
    return Pod(uid=PodUID(uid), name=uid.lower(), containers=containers, init_containers=init)


def with_allocations(
    base: DeviceState, held: dict[tuple[str, str], dict[str, Iterable[str]]]
) -> DeviceState:
    """``base`` plus devices already held by (pod, container), as the kubelet tests insert."""
    table: dict[ContainerKey, Any] = {}
    for (pod_uid, name), per_resource in held.items():
        key = ContainerKey(PodUID(pod_uid), ContainerName(name))
        table[key] = {r: frozenset(ids) for r, ids in per_resource.items()}
    return DeviceState(base.numa_node_ids, base.devices, table)


def per_node(machine: DeviceState, resource: str, chosen: Iterable[str]) -> dict[int, int]:
    """The kubelet tests' alignment count: devices per first NUMA node."""
    counts: dict[int, int] = {}
    for device_id in chosen:
        nodes = machine.devices[resource][device_id].numa_nodes
        if nodes:
            counts[nodes[0]] = counts.get(nodes[0], 0) + 1
    return counts


def numbered(first: int, stop: int, node: int) -> list[Device]:
    return [dev(f"Dev{i}", node) for i in range(first, stop)]


class Plugin:
    """A device plugin's GetPreferredAllocation that answers a fixed list and records calls."""

    def __init__(self, answer: Iterable[str] = ()) -> None:
        self.answer = tuple(answer)
        self.calls: list[tuple[str, frozenset[str], frozenset[str], int]] = []

    def __call__(
        self, resource: str, available: frozenset[str], must_include: frozenset[str], size: int
    ) -> tuple[str, ...]:
        self.calls.append((resource, available, must_include, size))
        return self.answer


# --- TestTopologyAlignedAllocation: rows with a preferred allocation --------------------------

# (id, request, devices, hint nodes, plugin answer, expected preferred subset, alignment)
PREFERRED_ALIGNED = [
    (
        "TestTopologyAlignedAllocation/Request for 5, socket 0, preferred aligned accepted",
        5,
        numbered(0, 100, 0) + numbered(100, 200, 1),
        (0,),
        ["Dev0", "Dev19", "Dev83", "Dev42", "Dev77"],
        ["Dev0", "Dev19", "Dev83", "Dev42", "Dev77"],
        {0: 5},
    ),
    (
        "TestTopologyAlignedAllocation/Request for 5, socket 0, preferred aligned accepted, "
        "unaligned ignored",
        5,
        numbered(0, 100, 0) + numbered(100, 200, 1),
        (0,),
        ["Dev0", "Dev19", "Dev83", "Dev150", "Dev186"],
        ["Dev0", "Dev19", "Dev83"],
        {0: 5},
    ),
    (
        "TestTopologyAlignedAllocation/Request for 5, socket 1, preferred aligned accepted, "
        "bogus ignored",
        5,
        numbered(0, 100, 1),
        (1,),
        ["Dev0", "Dev19", "Dev83", "bogus0", "bogus1"],
        ["Dev0", "Dev19", "Dev83"],
        {1: 5},
    ),
    (
        "TestTopologyAlignedAllocation/Request for 5, multisocket, preferred accepted",
        5,
        numbered(0, 3, 0) + numbered(3, 100, 1),
        (0,),
        ["Dev0", "Dev1", "Dev2", "Dev42", "Dev83"],
        ["Dev0", "Dev1", "Dev2", "Dev42", "Dev83"],
        {0: 3, 1: 2},
    ),
    (
        "TestTopologyAlignedAllocation/Request for 5, multisocket, preferred unaligned "
        "accepted, bogus ignored",
        5,
        numbered(0, 3, 0) + numbered(3, 100, 1),
        (0,),
        ["Dev0", "Dev1", "Dev2", "Dev42", "bogus0"],
        ["Dev0", "Dev1", "Dev2", "Dev42"],
        {0: 3, 1: 2},
    ),
]


@pytest.mark.parametrize(
    ("request_", "devices", "nodes", "answer", "expected", "alignment"),
    [row[1:] for row in PREFERRED_ALIGNED],
    ids=[row[0] for row in PREFERRED_ALIGNED],
)
def test_aligned_allocation_with_preferred_allocation(
    request_: int,
    devices: list[Device],
    nodes: tuple[int, ...],
    answer: list[str],
    expected: list[str],
    alignment: dict[int, int],
) -> None:
    machine = DeviceState.create((0, 1), {"resource": devices})
    container = ctr("containerName", resource=request_)
    plugin = Plugin(answer)
    result = allocate_devices(machine, pod(container), container, hint(*nodes), preferred=plugin)
    chosen = result.devices["resource"]
    assert len(chosen) == request_
    assert set(expected) <= set(chosen)
    assert per_node(machine, "resource", chosen) == alignment
    assert len(plugin.calls) == 1


def test_aligned_allocation_without_plugin_keeps_the_same_alignment() -> None:
    """The same rows without GetPreferredAllocation: only the alignment is fixed."""
    for _, request_, devices, nodes, _, _, alignment in PREFERRED_ALIGNED:
        machine = DeviceState.create((0, 1), {"resource": devices})
        container = ctr("containerName", resource=request_)
        chosen = allocate_devices(machine, pod(container), container, hint(*nodes))
        assert per_node(machine, "resource", chosen.devices["resource"]) == alignment


# --- TestGetPreferredAllocationParameters ----------------------------------------------------

# (id, request, devices, held by others, reusable (held by an init container), hint nodes,
#  expected available, expected must-include, expected size)
EIGHT_ON_0 = numbered(0, 8, 0)
FOUR_AND_FOUR = numbered(0, 4, 0) + numbered(4, 8, 1)
PARAMETERS = [
    (
        "TestGetPreferredAllocationParameters/Request for 1, socket 0, 0 already allocated, "
        "0 reusable",
        1,
        numbered(0, 4, 0),
        [],
        [],
        (0,),
        ["Dev0", "Dev1", "Dev2", "Dev3"],
        [],
        1,
    ),
    (
        "TestGetPreferredAllocationParameters/Request for 4, socket 0, 2 already allocated, "
        "2 reusable",
        4,
        EIGHT_ON_0,
        [],
        ["Dev0", "Dev5"],
        (0,),
        [f"Dev{i}" for i in range(8)],
        ["Dev0", "Dev5"],
        4,
    ),
    (
        "TestGetPreferredAllocationParameters/Request for 4, socket 0, 4 already allocated, "
        "2 reusable",
        4,
        EIGHT_ON_0,
        ["Dev4", "Dev1"],
        ["Dev0", "Dev5"],
        (0,),
        ["Dev0", "Dev2", "Dev3", "Dev5", "Dev6", "Dev7"],
        ["Dev0", "Dev5"],
        4,
    ),
    (
        "TestGetPreferredAllocationParameters/Request for 6, multisocket, 2 already "
        "allocated, 2 reusable",
        6,
        FOUR_AND_FOUR,
        [],
        ["Dev1", "Dev6"],
        (0,),
        [f"Dev{i}" for i in range(8)],
        ["Dev0", "Dev1", "Dev2", "Dev3", "Dev6"],
        6,
    ),
    (
        "TestGetPreferredAllocationParameters/Request for 6, multisocket, 4 already "
        "allocated, 2 reusable",
        6,
        FOUR_AND_FOUR,
        ["Dev0", "Dev7"],
        ["Dev1", "Dev6"],
        (0,),
        ["Dev1", "Dev2", "Dev3", "Dev4", "Dev5", "Dev6"],
        ["Dev1", "Dev2", "Dev3", "Dev6"],
        6,
    ),
]


def _reusing_state(
    devices: list[Device], others: list[str], reusable: list[str], the_pod: Pod
) -> DeviceState:
    """Devices held by another pod, and ``reusable`` left by the pod's init container."""
    machine = DeviceState.create((0, 1), {"resource": devices})
    machine = with_allocations(machine, {("otherPod", "c"): {"resource": others}})
    if not reusable:
        return machine
    init = the_pod.init_containers[0]  # its plugin hands it exactly the reusable devices
    chosen = allocate_devices(machine, the_pod, init, hint(0, 1), preferred=Plugin(reusable))
    return chosen.state


@pytest.mark.parametrize(
    ("request_", "devices", "others", "reusable", "nodes", "available", "must", "size"),
    [row[1:] for row in PARAMETERS],
    ids=[row[0] for row in PARAMETERS],
)
def test_preferred_allocation_parameters(
    request_: int,
    devices: list[Device],
    others: list[str],
    reusable: list[str],
    nodes: tuple[int, ...],
    available: list[str],
    must: list[str],
    size: int,
) -> None:
    app = ctr("containerName", resource=request_)
    init = ctr("init", ContainerKind.INIT, resource=max(len(reusable), 1))
    the_pod = pod(app, init=(init,))
    machine = _reusing_state(devices, others, reusable, the_pod)
    assert machine.reusable_for(the_pod.uid, "resource") == frozenset(reusable)
    plugin = Plugin()  # answers nothing: the kubelet falls back to its own groups
    result = allocate_devices(machine, the_pod, app, hint(*nodes), preferred=plugin)
    assert plugin.calls == [("resource", frozenset(available), frozenset(must), size)]
    chosen = set(result.devices["resource"])
    assert len(chosen) == request_
    assert set(reusable) <= chosen
    assert not chosen & set(others)


def test_preferred_allocation_is_not_asked_when_reusable_devices_suffice() -> None:
    app = ctr("app", resource=1)
    init = ctr("init", ContainerKind.INIT, resource=1)
    the_pod = pod(app, init=(init,))
    machine = DeviceState.create((0,), {"resource": numbered(0, 2, 0)})
    first = allocate_devices(machine, the_pod, init, hint(0))
    plugin = Plugin(["Dev1"])
    second = allocate_devices(first.state, the_pod, app, hint(0), preferred=plugin)
    assert second.devices == first.devices
    assert plugin.calls == []


def test_preferred_allocation_cannot_pull_in_unaligned_devices_when_aligned_suffice() -> None:
    machine = DeviceState.create((0, 1), {"resource": numbered(0, 3, 0) + numbered(3, 6, 1)})
    container = ctr("c", resource=2)
    plugin = Plugin(["Dev3", "Dev4"])
    result = allocate_devices(machine, pod(container), container, hint(0), preferred=plugin)
    assert per_node(machine, "resource", result.devices["resource"]) == {0: 2}
    assert plugin.calls[0][1] == frozenset({"Dev0", "Dev1", "Dev2"})


# --- TestFilterByAffinity (through allocation) -----------------------------------------------

FILTER_DEVICES = [
    dev("dev1", 1),
    dev("dev2", 1, 2),
    dev("dev3", 2),
    dev("dev4", 2),
    dev("dev5"),
]
# (id, available, aligned (hint {2}), unaligned)
FILTER = [
    ("TestFilterByAffinity/0", ["dev1", "dev2"], {"dev2"}, {"dev1"}),
    ("TestFilterByAffinity/1", ["dev1", "dev2", "dev3", "dev4"], {"dev2", "dev3", "dev4"},
     {"dev1"}),
]  # fmt: skip


@pytest.mark.parametrize(("available", "aligned", "unaligned"), [r[1:] for r in FILTER],
                         ids=[r[0] for r in FILTER])  # fmt: skip
def test_filter_by_affinity(available: list[str], aligned: set[str], unaligned: set[str]) -> None:
    """Aligned devices (any node in the hint) go first, then other nodes; no-NUMA last."""
    base = DeviceState.create((0, 1, 2), {"res1": FILTER_DEVICES})
    others = [d.id for d in FILTER_DEVICES if d.id not in available and d.id != "dev5"]
    machine = with_allocations(base, {("other", "c"): {"res1": others}})
    container = ctr("c", res1=len(aligned))
    got = allocate_devices(machine, pod(container), container, hint(2)).devices["res1"]
    assert set(got) == aligned
    container = ctr("c", res1=len(aligned) + len(unaligned))
    got = allocate_devices(machine, pod(container), container, hint(2)).devices["res1"]
    assert set(got) == aligned | unaligned  # dev5 (no NUMA) only after every unaligned one
    container = ctr("c", res1=len(aligned) + len(unaligned) + 1)
    got = allocate_devices(machine, pod(container), container, hint(2)).devices["res1"]
    assert set(got) == aligned | unaligned | {"dev5"}


# --- TestPodContainerDeviceAllocation --------------------------------------------------------


def test_pod_container_device_allocation_sequence() -> None:
    """Three pods in turn; the second asks for a resource already used up."""
    machine = DeviceState.create(
        (0,),
        {
            "domain1.com/resource1": [dev("dev1", 0), dev("dev2", 0)],
            "domain2.com/resource2": [dev("dev3"), dev("dev4")],
        },
    )
    first = ctr("c", cpu=2, **{"domain1.com/resource1": 2, "domain2.com/resource2": 1})
    result = allocate_devices(machine, pod(first, uid="pod0"), first, None)
    state = result.state
    assert len(state.allocated("domain1.com/resource1")) == 2
    assert len(state.allocated("domain2.com/resource2")) == 1

    second = ctr("c", **{"domain1.com/resource1": 1})
    with pytest.raises(UnexpectedAdmissionError) as caught:
        allocate_devices(state, pod(second, uid="pod1"), second, None)
    assert caught.value.message == (
        "Allocate failed due to requested number of devices unavailable for "
        "domain1.com/resource1. Requested: 1, Available: 0, which is unexpected"
    )

    third = ctr("c", **{"domain2.com/resource2": 1})
    state = allocate_devices(state, pod(third, uid="pod2"), third, None).state
    assert len(state.allocated("domain1.com/resource1")) == 2
    assert len(state.allocated("domain2.com/resource2")) == 2


# --- TestPodContainerDeviceToAllocate --------------------------------------------------------

R1, R2, R3 = "domain1.com/resource1", "domain2.com/resource2", "domain2.com/resource3"
TO_ALLOCATE = [
    (
        "TestPodContainerDeviceToAllocate/Admission error in case no healthy devices to "
        "allocate present",
        "pod1",
        "con1",
        R1,
        2,
        "no healthy devices present; cannot allocate unhealthy devices domain1.com/resource1",
    ),
    (
        "TestPodContainerDeviceToAllocate/Admission error in case resource is not registered",
        "pod2",
        "con2",
        R2,
        1,
        "cannot allocate unregistered device domain2.com/resource2",
    ),
    (
        "TestPodContainerDeviceToAllocate/Admission error in case resource not devices "
        "previously allocated no longer healthy",
        "pod3",
        "con3",
        R3,
        1,
        "previously allocated devices are no longer healthy; cannot allocate unhealthy "
        "devices domain2.com/resource3",
    ),
]


def _to_allocate_state() -> DeviceState:
    # resource1: registered, its devices gone unhealthy; resource2: not registered at all;
    # resource3: registered with dev7 and dev8 only (dev5, held by pod3, has left).
    base = DeviceState.create(
        (0,),
        {
            R1: [dev("dev1", 0, healthy=False), dev("dev2", 0, healthy=False)],
            R3: [dev("dev7"), dev("dev8")],
        },
    )
    return with_allocations(
        base,
        {
            ("pod1", "con1"): {R1: ["dev1", "dev2"]},
            ("pod2", "con2"): {R2: ["dev5"]},
            ("pod3", "con3"): {R3: ["dev5"]},
        },
    )


@pytest.mark.parametrize(("pod_uid", "name", "resource", "count", "detail"),
                         [r[1:] for r in TO_ALLOCATE], ids=[r[0] for r in TO_ALLOCATE])  # fmt: skip
def test_pod_container_device_to_allocate(
    pod_uid: str, name: str, resource: str, count: int, detail: str
) -> None:
    container = ctr(name, **{resource: count})
    with pytest.raises(UnexpectedAdmissionError) as caught:
        allocate_devices(_to_allocate_state(), pod(container, uid=pod_uid), container, None)
    assert caught.value.message == f"Allocate failed due to {detail}, which is unexpected"


def test_unregistered_but_held_resource_is_still_a_device_resource() -> None:
    """isDevicePluginResource: a resource some container still holds counts, with no hints."""
    machine = _to_allocate_state()
    assert machine.is_device_resource(R2)
    assert not machine.is_device_resource("example.com/never-seen")
    container = ctr("fresh", **{R2: 1})
    assert device_hints(machine, pod(container), container) == {R2: NO_PREFERENCE}
    assert device_hints(machine, pod(container), None) == {R2: NO_PREFERENCE}
    source = device_hints(machine, pod(container), container, implicit=True)[R2]
    assert source is NO_PREFERENCE
    with pytest.raises(UnexpectedAdmissionError, match="cannot allocate unregistered device"):
        allocate_devices(machine, pod(container), container, None)


# --- TestInitContainerDeviceAllocation / TestRestartableInitContainerDeviceAllocation --------


def _run(machine: DeviceState, the_pod: Pod) -> dict[str, dict[str, frozenset[str]]]:
    """Allocate every container in kubelet order; devices per container and resource."""
    state = machine
    for container in (*the_pod.init_containers, *the_pod.containers):
        state = allocate_devices(state, the_pod, container, None).state
    return {
        c.name: {r: state.container_devices(the_pod.key(c.name), r) for r in state.devices}
        for c in (*the_pod.init_containers, *the_pod.containers)
    }


def test_init_container_device_allocation() -> None:
    """TestInitContainerDeviceAllocation: app containers reuse the init containers' devices."""
    machine = DeviceState.create(
        (0,), {R1: [dev("dev1"), dev("dev2")], R2: [dev("dev3", 0), dev("dev4", 0)]}
    )
    the_pod = pod(
        ctr("app1", **{R1: 1, R2: 1}),
        ctr("app2", **{R1: 1, R2: 1}),
        init=(ctr("init1", ContainerKind.INIT, **{R1: 1}), ctr("init2", ContainerKind.INIT,
                                                                **{R1: 2})),
    )  # fmt: skip
    held = _run(machine, the_pod)
    init1, init2 = held["init1"][R1], held["init2"][R1]
    app1, app2 = held["app1"][R1], held["app2"][R1]
    assert (len(init1), len(init2), len(app1), len(app2)) == (1, 2, 1, 1)
    assert init1 <= init2
    assert app1 <= init2
    assert app2 <= init2
    assert not app1 & app2


def test_restartable_init_container_device_allocation() -> None:
    """TestRestartableInitContainerDeviceAllocation: sidecars keep theirs, apps get new ones."""
    machine = DeviceState.create((0,), {R1: [dev(f"dev{i}") for i in range(1, 7)]})
    the_pod = pod(
        ctr("app1", **{R1: 1}),
        ctr("app2", **{R1: 2}),
        init=(
            ctr("init1", ContainerKind.INIT, **{R1: 3}),
            ctr("side2", ContainerKind.SIDECAR, **{R1: 1}),
            ctr("side3", ContainerKind.SIDECAR, **{R1: 2}),
        ),
    )
    held = _run(machine, the_pod)
    init1 = held["init1"][R1]
    dedicated = [held[name][R1] for name in ("side2", "side3", "app1", "app2")]
    assert [len(init1), *map(len, dedicated)] == [3, 1, 2, 1, 2]
    assert dedicated[0] <= init1
    assert dedicated[1] <= init1
    for i, first in enumerate(dedicated):
        for second in dedicated[i + 1 :]:
            assert not first & second


# --- TestGetDeviceRunContainerOptions (device part) and allocatable devices -------------------


def test_devices_of_a_pod_gone_from_active_pods_are_freed() -> None:
    machine = DeviceState.create(
        (0,), {R1: [dev("dev1", 0), dev("dev2", 0)], R2: [dev("dev3"), dev("dev4")]}
    )
    c1 = ctr("c", **{R1: 2, R2: 1})
    c2 = ctr("c", **{R2: 1})
    state = allocate_devices(machine, pod(c1, uid="pod1"), c1, None).state
    state = allocate_devices(state, pod(c2, uid="pod2"), c2, None).state
    assert len(state.container_devices(pod(c1, uid="pod1").key("c"), R1)) == 2
    state = release_pod_devices(state, PodUID("pod1"))
    assert state.container_devices(pod(c1, uid="pod1").key("c"), R1) == frozenset()
    assert state.available(R1) == frozenset({"dev1", "dev2"})
    assert len(state.allocated(R2)) == 1


def test_allocatable_devices_are_the_healthy_ones() -> None:
    """TestGetAllocatableDevicesMultipleResources / HealthTransition."""
    machine = DeviceState.create(
        (0,),
        {
            R1: [dev("R1Device1"), dev("R1Device2"), dev("R1Device3", healthy=False)],
            "other.domain2.org/resource2": [dev("R2Device1")],
        },
    )
    assert machine.healthy(R1) == frozenset({"R1Device1", "R1Device2"})
    assert machine.healthy("other.domain2.org/resource2") == frozenset({"R2Device1"})
    healed = DeviceState.create((0,), {R1: [dev(f"R1Device{i}") for i in (1, 2, 3)]})
    assert healed.healthy(R1) == frozenset({"R1Device1", "R1Device2", "R1Device3"})
