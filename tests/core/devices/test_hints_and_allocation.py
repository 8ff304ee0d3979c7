"""Device hints and allocation; cases transcribed from the kubelet's devicemanager tests.

Machine of the kubelet's hint tests: NUMA nodes 0 and 1. ``dev("D1", 0)`` is a device on
node 0, ``dev("D1")`` one without NUMA affinity. Hints compare after the kubelet's sort
(preferred first, then narrower).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.devices import (
    Device,
    DeviceState,
    allocate_devices,
    device_hints,
    pod_device_requests,
    release_pod_devices,
)
from cpumanager.core.hints.hint import NO_PLACEMENT, NO_PREFERENCE, TopologyHint
from cpumanager.core.hints.source import CapacityHintSource
from cpumanager.core.ids import ContainerKey, ContainerName, PodUID
from cpumanager.core.workload import Container, ContainerKind, Pod
from cpumanager.errors import MachineError, UnexpectedAdmissionError


def dev(device_id: str, *nodes: int, healthy: bool = True) -> Device:
    return Device(device_id, tuple(nodes), healthy)


def h(nodes: str, preferred: bool = True) -> TopologyHint:
    return TopologyHint(NUMAMask(int(n) for n in nodes.split(",")), preferred)


def ctr(name: str, kind: ContainerKind = ContainerKind.APP, **limits: int) -> Container:
    lim = {k.replace("_", "."): Fraction(v) for k, v in limits.items()}
    return Container(ContainerName(name), requests=lim, limits=lim, kind=kind)


def pod(*containers: Container, init: tuple[Container, ...] = (), uid: str = "fakePod") -> Pod:
    return Pod(uid=PodUID(uid), name=uid.lower(), containers=containers, init_containers=init)


def state(
    devices: dict[str, list[Device]],
    allocated: dict[tuple[str, str], dict[str, list[str]]] | None = None,
    nodes: tuple[int, ...] = (0, 1),
) -> DeviceState:
    base = DeviceState.create(nodes, devices)
    if not allocated:
        return base
    table: dict[ContainerKey, Any] = {}
    for (pod_uid, name), per_resource in allocated.items():
        key = ContainerKey(PodUID(pod_uid), ContainerName(name))
        table[key] = {r: frozenset(ids) for r, ids in per_resource.items()}
    return DeviceState(base.numa_node_ids, base.devices, table)


def ordered(hints: Any) -> Any:
    if hints is NO_PREFERENCE:
        return hints
    return sorted(hints, key=TopologyHint.sort_key)


FOUR = [dev("Dev1", 0), dev("Dev2", 1), dev("Dev3", 0), dev("Dev4", 1)]
SIX = [*FOUR, dev("Dev5", 0), dev("Dev6", 1)]
FOUR_PAIRED = [dev("Dev1", 0), dev("Dev2", 0), dev("Dev3", 1), dev("Dev4", 1)]

# (description, request, devices, allocated {(pod, container): {resource: ids}}, expected)
COMMON = [
    (
        "Single Request, no alignment",
        {"testdevice": 1},
        {"testdevice": [dev("Dev1"), dev("Dev2"), dev("Dev3"), dev("Dev4")]},
        None,
        {"testdevice": NO_PREFERENCE},
    ),
    (
        "Single Request, only one with alignment",
        {"testdevice": 1},
        {"testdevice": [dev("Dev1"), dev("Dev2", 1)]},
        None,
        {"testdevice": [h("1"), h("0,1", False)]},
    ),
    (
        "Single Request, one device per socket",
        {"testdevice": 1},
        {"testdevice": [dev("Dev1", 0), dev("Dev2", 1)]},
        None,
        {"testdevice": [h("0"), h("1"), h("0,1", False)]},
    ),
    (
        "Request for 2, one device per socket",
        {"testdevice": 2},
        {"testdevice": [dev("Dev1", 0), dev("Dev2", 1)]},
        None,
        {"testdevice": [h("0,1")]},
    ),
    (
        "Request for 2, 2 devices per socket",
        {"testdevice": 2},
        {"testdevice": FOUR},
        None,
        {"testdevice": [h("0"), h("1"), h("0,1", False)]},
    ),
    (
        "Request for 2, optimal on 1 NUMA node, forced cross-NUMA",
        {"testdevice": 2},
        {"testdevice": FOUR},
        {("fakePod", "fakeOtherContainer"): {"testdevice": ["Dev1", "Dev2"]}},
        {"testdevice": [h("0,1", False)]},
    ),
    (
        "2 device types, mixed configuration",
        {"testdevice1": 2, "testdevice2": 1},
        {"testdevice1": FOUR, "testdevice2": [dev("Dev1", 0)]},
        None,
        {
            "testdevice1": [h("0"), h("1"), h("0,1", False)],
            "testdevice2": [h("0"), h("0,1", False)],
        },
    ),
    (
        "Single device type, more requested than available",
        {"testdevice": 6},
        {"testdevice": FOUR_PAIRED},
        None,
        {"testdevice": NO_PLACEMENT},
    ),
    (
        "Single device type, all already allocated to container",
        {"testdevice": 2},
        {"testdevice": [dev("Dev1", 0), dev("Dev2", 0)]},
        {("fakePod", "fakeContainer"): {"testdevice": ["Dev1", "Dev2"]}},
        {"testdevice": [h("0"), h("0,1", False)]},
    ),
    (
        "Single device type, less already allocated to container than requested",
        {"testdevice": 4},
        {"testdevice": FOUR_PAIRED},
        {("fakePod", "fakeContainer"): {"testdevice": ["Dev1", "Dev2"]}},
        {"testdevice": NO_PLACEMENT},
    ),
    (
        "Single device type, more already allocated to container than requested",
        {"testdevice": 2},
        {"testdevice": FOUR_PAIRED},
        {("fakePod", "fakeContainer"): {"testdevice": ["Dev1", "Dev2", "Dev3", "Dev4"]}},
        {"testdevice": NO_PLACEMENT},
    ),
]


@pytest.mark.parametrize(("request_", "devices", "allocated", "expected"), [c[1:] for c in COMMON],
                         ids=[c[0] for c in COMMON])  # fmt: skip
def test_container_hints(request_: dict, devices: dict, allocated: Any, expected: dict) -> None:
    container = ctr("fakeContainer", **request_)
    got = device_hints(state(devices, allocated), pod(container), container)
    assert {r: ordered(v) for r, v in got.items()} == {r: ordered(v) for r, v in expected.items()}


@pytest.mark.parametrize(("request_", "devices", "allocated", "expected"), [c[1:] for c in COMMON],
                         ids=[c[0] for c in COMMON])  # fmt: skip
def test_pod_hints_common_cases(
    request_: dict, devices: dict, allocated: Any, expected: dict
) -> None:
    container = ctr("fakeContainer", **request_)
    got = device_hints(state(devices, allocated), pod(container), None)
    assert {r: ordered(v) for r, v in got.items()} == {r: ordered(v) for r, v in expected.items()}


TWO_TYPES = {"testdevice1": FOUR_PAIRED, "testdevice2": FOUR_PAIRED}
POD_SCOPE = [
    (
        "2 device types, user container only",
        pod(ctr("c1", testdevice1=2), ctr("c2", testdevice2=2), ctr("c3", notRegistered=2)),
        None,
        [h("0"), h("1"), h("0,1", False)],
    ),
    (
        "2 device types, request resources for init containers and user container",
        pod(
            ctr("c1", testdevice1=1, testdevice2=1),
            ctr("c2", testdevice1=1, testdevice2=1),
            ctr("c3", notRegistered=1),
            init=(
                ctr("i1", ContainerKind.INIT, testdevice1=1, testdevice2=1),
                ctr("i2", ContainerKind.INIT, testdevice1=1, testdevice2=2),
            ),
        ),
        None,
        [h("0"), h("1"), h("0,1", False)],
    ),
    (
        "2 device types, user container only, optimal on 1 NUMA node, forced cross-NUMA",
        pod(ctr("c1", testdevice1=1, testdevice2=1), ctr("c2", testdevice1=1, testdevice2=1)),
        {("fakeOtherPod", "c"): {"testdevice1": ["Dev1", "Dev3"], "testdevice2": ["Dev1", "Dev3"]}},
        [h("0,1", False)],
    ),
]


@pytest.mark.parametrize(("the_pod", "allocated", "expected"), [c[1:] for c in POD_SCOPE],
                         ids=[c[0] for c in POD_SCOPE])  # fmt: skip
def test_pod_scope_hints(the_pod: Pod, allocated: Any, expected: list) -> None:
    got = device_hints(state(TWO_TYPES, allocated), the_pod, None)
    assert set(got) == {"testdevice1", "testdevice2"}
    assert all(ordered(v) == ordered(expected) for v in got.values())


G = ContainerKind
# (description, pod, expected {resource: count}) -- kubelet TestGetPodDeviceRequest
POD_REQUESTS = [
    ("empty pod", pod(), {}),
    ("init only", pod(init=(ctr("i", G.INIT, cpu=2, gpu=2),)), {"gpu": 2}),
    ("inits", pod(init=(ctr("i1", G.INIT, gpu=2), ctr("i2", G.INIT, gpu=4))), {"gpu": 4}),
    ("user container", pod(ctr("c", cpu=2, gpu=2)), {"gpu": 2}),
    (
        "same amounts",
        pod(
            ctr("c1", gpu=1, nic=1),
            ctr("c2", gpu=1, nic=1),
            init=(ctr("i1", G.INIT, gpu=2, nic=2), ctr("i2", G.INIT, gpu=2, nic=2)),
        ),
        {"gpu": 2, "nic": 2},
    ),
    (
        "init containers request more",
        pod(
            ctr("c1", gpu=1, nic=1),
            ctr("c2", gpu=1),
            init=(ctr("i1", G.INIT, gpu=2, nic=1), ctr("i2", G.INIT, gpu=3, nic=2)),
        ),
        {"gpu": 3, "nic": 2},
    ),
    (
        "user containers request more",
        pod(
            ctr("c1", gpu=3, nic=2),
            ctr("c2", gpu=3, nic=2),
            init=(ctr("i1", G.INIT, gpu=2, nic=1), ctr("i2", G.INIT, gpu=2, nic=1)),
        ),
        {"gpu": 6, "nic": 4},
    ),
    (
        "sidecar counts with apps and with later inits",
        pod(ctr("c", gpu=1), init=(ctr("s", G.SIDECAR, gpu=1), ctr("i", G.INIT, gpu=3))),
        {"gpu": 4},
    ),
    ("sidecar plus apps", pod(ctr("c", gpu=2), init=(ctr("s", G.SIDECAR, gpu=1),)), {"gpu": 3}),
]


@pytest.mark.parametrize(("the_pod", "expected"), [c[1:] for c in POD_REQUESTS],
                         ids=[c[0] for c in POD_REQUESTS])  # fmt: skip
def test_pod_device_requests(the_pod: Pod, expected: dict) -> None:
    registered = DeviceState.create((0,), {"gpu": [], "nic": []})
    assert pod_device_requests(registered, the_pod) == expected


def _spread(counts: dict[int, int]) -> list[Device]:
    out, index = [], 0
    for node, count in counts.items():
        for _ in range(count):
            out.append(dev(f"Dev{index}", node))
            index += 1
    return out


# kubelet TestTopologyAlignedAllocation: (description, request, devices, hint, devices per node)
ALIGNED = [
    ("Single Request, no alignment", 1, [dev("Dev1"), dev("Dev2")], "0,1", {}),
    ("Request for 1, partial alignment", 1, [dev("Dev1"), dev("Dev2", 1)], "1", {1: 1}),
    ("Single Request, socket 0", 1, [dev("Dev1", 0), dev("Dev2", 1)], "0", {0: 1}),
    ("Single Request, socket 1", 1, [dev("Dev1", 0), dev("Dev2", 1)], "1", {1: 1}),
    ("Request for 2, socket 0", 2, FOUR, "0", {0: 2}),
    ("Request for 2, socket 1", 2, FOUR, "1", {1: 2}),
    ("Request for 4, unsatisfiable, prefer socket 0", 4, SIX, "0", {0: 3, 1: 1}),
    ("Request for 4, unsatisfiable, prefer socket 1", 4, SIX, "1", {0: 1, 1: 3}),
    ("Request for 4, multisocket", 4, [dev(f"Dev{i + 1}", i % 4) for i in range(8)], "1,3",
     {1: 2, 3: 2}),
    ("Request for 5, socket 0", 5, _spread({0: 100, 1: 100}), "0", {0: 5}),
    ("Request for 5, multisocket", 5, _spread({0: 3, 1: 97}), "0", {0: 3, 1: 2}),
]  # fmt: skip


@pytest.mark.parametrize(("count", "devices", "hint", "alignment"), [c[1:] for c in ALIGNED],
                         ids=[c[0] for c in ALIGNED])  # fmt: skip
def test_topology_aligned_allocation(count: int, devices: list, hint: str, alignment: dict) -> None:
    nodes = tuple(sorted({n for d in devices for n in d.numa_nodes} | {0, 1}))
    machine = DeviceState.create(nodes, {"resource": devices})
    container = ctr("c", resource=count)
    result = allocate_devices(machine, pod(container), container, h(hint))
    chosen = result.devices["resource"]
    assert len(chosen) == count
    table = machine.devices["resource"]
    per_node: dict[int, int] = {}
    for device_id in chosen:
        if table[device_id].numa_nodes:
            per_node[table[device_id].numa_nodes[0]] = (
                per_node.get(table[device_id].numa_nodes[0], 0) + 1
            )
    assert per_node == alignment


# --- our own behaviour: reuse, release, errors, tie-breaks --------------------------------


def test_tie_break_is_natural_device_order() -> None:
    machine = DeviceState.create((0,), {"gpu": [dev("gpu10", 0), dev("gpu9", 0), dev("gpu2", 0)]})
    container = ctr("c", gpu=2)
    assert allocate_devices(machine, pod(container), container, h("0")).devices == {
        "gpu": ("gpu2", "gpu9")
    }


def test_no_hint_takes_any_device() -> None:
    machine = DeviceState.create((0, 1), {"gpu": [dev("a", 1), dev("b", 0)]})
    container = ctr("c", gpu=1)
    assert allocate_devices(machine, pod(container), container, None).devices == {"gpu": ("a",)}


def test_multi_numa_device_is_aligned_if_any_node_matches() -> None:
    machine = DeviceState.create((0, 1, 2), {"nic": [dev("x", 2), dev("y", 0, 1)]})
    container = ctr("c", nic=1)
    hints = device_hints(machine, pod(container), container)["nic"]
    assert ordered(hints) == ordered([h("0"), h("1"), h("2"), h("0,1", False), h("0,2", False),
                                      h("1,2", False), h("0,1,2", False)])  # fmt: skip
    assert allocate_devices(machine, pod(container), container, h("1")).devices == {"nic": ("y",)}


def test_devices_without_numa_never_count_for_a_mask() -> None:
    machine = DeviceState.create((0, 1), {"gpu": [dev("a", 0), dev("b"), dev("c")]})
    container = ctr("c", gpu=2)
    assert device_hints(machine, pod(container), container) == {"gpu": ()}


def test_unhealthy_devices_count_for_preference_only() -> None:
    machine = DeviceState.create(
        (0, 1), {"gpu": [dev("a", 0, healthy=False), dev("b", 0), dev("c", 1)]}
    )
    container = ctr("c", gpu=2)
    assert ordered(device_hints(machine, pod(container), container)["gpu"]) == [h("0,1", False)]


def test_init_devices_are_reused_by_app_container_but_sidecar_devices_are_not() -> None:
    machine = DeviceState.create((0, 1), {"gpu": [dev("a", 0), dev("b", 1), dev("c", 1)]})
    init = ctr("init", ContainerKind.INIT, gpu=1)
    side = ctr("side", ContainerKind.SIDECAR, gpu=1)
    app = ctr("app", gpu=2)
    the_pod = pod(app, init=(init, side))
    s1 = allocate_devices(machine, the_pod, init, h("0"))
    assert s1.devices == {"gpu": ("a",)}
    assert ordered(device_hints(s1.state, the_pod, app)["gpu"]) == [h("0,1", False)]
    s2 = allocate_devices(s1.state, the_pod, side, h("1"))
    assert s2.devices == {"gpu": ("a",)}  # sidecars reuse init devices too, then hold them
    s3 = allocate_devices(s2.state, the_pod, app, h("0,1"))
    assert s3.devices == {"gpu": ("b", "c")}
    assert s3.state.reusable_for(the_pod.uid, "gpu") == frozenset()
    released = release_pod_devices(s3.state, the_pod.uid)
    assert released.available("gpu") == frozenset({"a", "b", "c"})
    assert released.reusable_pod is None


def test_reuse_is_forgotten_when_another_pod_allocates() -> None:
    machine = DeviceState.create((0,), {"gpu": [dev("a", 0), dev("b", 0)]})
    init = ctr("init", ContainerKind.INIT, gpu=1)
    first = pod(ctr("app"), init=(init,), uid="p1")
    s1 = allocate_devices(machine, first, init, h("0")).state
    other = ctr("x", gpu=1)
    s2 = allocate_devices(s1, pod(other, uid="p2"), other, h("0")).state
    assert s2.reusable_for(first.uid, "gpu") == frozenset()


def test_allocation_is_idempotent_for_a_container_that_holds_its_devices() -> None:
    machine = DeviceState.create((0,), {"gpu": [dev("a", 0), dev("b", 0)]})
    container = ctr("c", gpu=1)
    once = allocate_devices(machine, pod(container), container, h("0"))
    again = allocate_devices(once.state, pod(container), container, h("0"))
    assert again.devices == {}
    assert again.state.allocations == once.state.allocations


AB = {"gpu": [dev("a", 0), dev("b", 0)]}
HELD_A = {("fakePod", "c"): {"gpu": ["a"]}}
ERRORS = [
    ("changed request", AB, HELD_A, 2,
     'Allocate failed due to pod "fakePod" container "c" changed request for resource "gpu" '
     "from 1 to 2, which is unexpected"),
    ("no healthy", {"gpu": [dev("a", 0, healthy=False)]}, None, 1,
     "Allocate failed due to no healthy devices present; cannot allocate unhealthy devices "
     "gpu, which is unexpected"),
    ("unhealthy held", {"gpu": [dev("a", 0, healthy=False), dev("b", 0)]}, HELD_A, 1,
     "Allocate failed due to previously allocated devices are no longer healthy; cannot "
     "allocate unhealthy devices gpu"),
    ("too few", AB, {("other", "x"): {"gpu": ["a"]}}, 2,
     "Allocate failed due to requested number of devices unavailable for gpu. Requested: 2, "
     "Available: 1, which is unexpected"),
]  # fmt: skip


@pytest.mark.parametrize(("devices", "allocated", "count", "message"), [e[1:] for e in ERRORS],
                         ids=[e[0] for e in ERRORS])  # fmt: skip
def test_allocation_errors(devices: dict, allocated: Any, count: int, message: str) -> None:
    container = ctr("c", gpu=count)
    with pytest.raises(UnexpectedAdmissionError) as caught:
        allocate_devices(state(devices, allocated), pod(container), container, h("0"))
    assert caught.value.message.startswith(message)
    assert caught.value.reason == "UnexpectedAdmissionError"


def test_state_validation() -> None:
    with pytest.raises(MachineError, match="listed twice"):
        DeviceState.create((0,), {"gpu": [dev("a", 0), dev("a", 0)]})
    with pytest.raises(MachineError, match="on NUMA node 3, which the machine does not have"):
        DeviceState.create((0, 1), {"gpu": [dev("a", 3)]})


def test_non_device_resources_are_ignored() -> None:
    machine = DeviceState.create((0,), {"gpu": [dev("a", 0)]})
    container = ctr("c", cpu=2, memory=1024)
    assert device_hints(machine, pod(container), container) == {}


# --- implicit form == explicit form ----------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    layout=st.lists(st.integers(min_value=0, max_value=4), min_size=0, max_size=10),
    taken=st.sets(st.integers(min_value=0, max_value=9)),
    count=st.integers(min_value=1, max_value=6),
    unattached=st.integers(min_value=0, max_value=2),
)
def test_hint_source_describes_the_explicit_hints(
    layout: list[int], taken: set[int], count: int, unattached: int
) -> None:
    devices = [dev(f"d{i}", node) for i, node in enumerate(layout)]
    devices += [dev(f"u{i}") for i in range(unattached)]
    allocated = {("other", "x"): {"gpu": [f"d{i}" for i in taken if i < len(layout)]}}
    machine = state({"gpu": devices}, allocated, nodes=(0, 1, 2, 3, 4))
    container = ctr("c", gpu=count)
    explicit = device_hints(machine, pod(container), container)["gpu"]
    source = device_hints(machine, pod(container), container, implicit=True)["gpu"]
    if isinstance(source, CapacityHintSource):
        assert source.explicit() == explicit
    else:
        assert source == explicit
