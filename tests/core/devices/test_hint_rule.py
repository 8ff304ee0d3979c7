"""Device hints as rules (``device_hints(..., implicit=True)``) against the lists.

Exactness: up to 8 NUMA nodes the rule's ``explicit()`` must be the very list (masks,
preferred flags, order) that ``device_hints`` enumerates in both scopes, and both
must match a naive reference written here from the kubelet's rule. Past 8 nodes the
sources must come back without walking 2^N masks (64 nodes would never finish).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations
from types import MappingProxyType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.devices import (
    Device,
    DeviceState,
    container_device_requests,
    device_hints,
    pod_device_requests,
)
from cpumanager.core.hints.hint import NO_PLACEMENT, NO_PREFERENCE, ResourceHints, TopologyHint
from cpumanager.core.hints.limits import ENUMERATE_LIMIT
from cpumanager.core.hints.source import CapacityHintSource
from cpumanager.core.ids import ContainerKey, ContainerName, PodUID
from cpumanager.core.workload import Container, ContainerKind, Pod
from cpumanager.errors import UnexpectedAdmissionError

GPU = "example.com/gpu"
POD_UID = PodUID("pod-a")


def ctr(name: str, count: int | None, kind: ContainerKind = ContainerKind.APP) -> Container:
    limits = {} if count is None else {GPU: Fraction(count)}
    return Container(ContainerName(name), requests=limits, limits=limits, kind=kind)


# --- a naive reference of the kubelet's rule -------------------------------------------------


def _touching(devices: list[Device], nodes: frozenset[int]) -> int:
    return sum(1 for d in devices if any(n in nodes for n in d.numa_nodes))


def reference(
    machine: DeviceState,
    requested: int,
    mine: frozenset[str],
    reusable: frozenset[str],
) -> ResourceHints:
    """``generateDeviceTopologyHints`` spelled out: every subset of nodes, kubelet order."""
    table = dict(machine.devices[GPU])
    if not any(d.numa_nodes for d in table.values()):
        return NO_PREFERENCE
    if mine:
        if len(mine) != requested:
            return NO_PLACEMENT
        pool, anchors = mine, frozenset[str]()
    else:
        healthy = {i for i, d in table.items() if d.healthy}
        held: set[str] = set()
        for per_resource in machine.allocations.values():
            held |= per_resource.get(GPU, frozenset())
        pool, anchors = frozenset(healthy - held), reusable
        if len(pool | anchors) < requested:
            return NO_PLACEMENT
    node_ids = machine.numa_node_ids
    everything = list(table.values())
    min_affinity = len(node_ids)
    for size in range(1, len(node_ids)):
        if any(
            _touching(everything, frozenset(c)) >= requested for c in combinations(node_ids, size)
        ):
            min_affinity = size
            break
    anchored = [table[i] for i in anchors if i in table and table[i].numa_nodes]
    candidates = [table[i] for i in pool if i in table]
    hints = []
    for size in range(1, len(node_ids) + 1):
        for combo in combinations(node_ids, size):
            nodes = frozenset(combo)
            if _touching(anchored, nodes) != len(anchored):
                continue
            if len(anchored) + _touching(candidates, nodes) >= requested:
                hints.append(TopologyHint(NUMAMask(combo), size == min_affinity))
    return tuple(hints)


def as_explicit(answer: CapacityHintSource | ResourceHints) -> ResourceHints:
    if isinstance(answer, CapacityHintSource):
        return answer.explicit()
    return answer


def check_source_contract(answer: CapacityHintSource | ResourceHints) -> None:
    """A rule's narrowest size must be the narrowest hint it lists."""
    if isinstance(answer, CapacityHintSource):
        listed = answer.explicit()
        expected = min((h.mask.count() for h in listed if h.mask is not None), default=0)
        assert answer.min_size() == expected


# --- random machines -------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    machine: DeviceState
    pod: Pod
    held: frozenset[str]
    reusable: frozenset[str]


@st.composite
def machines(draw: st.DrawFn) -> tuple[tuple[int, ...], list[Device]]:
    """1-8 NUMA nodes (ids not always 0..n-1) and a device table on them."""
    count = draw(st.integers(min_value=1, max_value=8))
    spread = draw(st.booleans())
    if spread:
        node_ids = tuple(sorted(draw(st.sets(st.integers(0, 15), min_size=count, max_size=count))))
    else:
        node_ids = tuple(range(count))
    multi_node = len(node_ids) > 1 and draw(st.integers(0, 2)) == 0  # mostly single-node
    layout: list[tuple[tuple[int, ...], bool]] = []
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.integers(0, 9))  # 0: no NUMA node, 1: several (if drawn), else one
        if kind == 0:
            nodes: tuple[int, ...] = ()
        elif kind == 1 and multi_node:
            nodes = tuple(sorted(draw(st.sets(st.sampled_from(node_ids), min_size=2))))
        else:
            nodes = (draw(st.sampled_from(node_ids)),)
        layout.append((nodes, draw(st.integers(0, 9)) != 0))
    devices = [Device(f"d{i}", nodes, healthy) for i, (nodes, healthy) in enumerate(layout)]
    return node_ids, devices


def _subset(draw: st.DrawFn, ids: list[str], *, max_size: int | None = None) -> frozenset[str]:
    if not ids:
        return frozenset()
    return frozenset(draw(st.sets(st.sampled_from(ids), max_size=max_size)))


@st.composite
def container_cases(draw: st.DrawFn) -> tuple[Case, Container]:
    node_ids, devices = draw(machines())
    ids = [d.id for d in devices]
    others = _subset(draw, ids)
    mode = draw(st.sampled_from(["free", "held-exact", "held-any"]))
    held = frozenset[str]()
    if mode != "free":
        pool = [i for i in ids if i not in others] or ids
        held = frozenset(draw(st.permutations(pool))[: draw(st.integers(1, len(pool)))])
    # holding exactly the request is the interesting held case
    requested = len(held) if mode == "held-exact" else draw(st.integers(0, 8))
    container = ctr("app", requested)
    pod = Pod(uid=POD_UID, name="a", containers=(container,), init_containers=())
    allocations: dict[ContainerKey, MappingProxyType[str, frozenset[str]]] = {}
    if others:
        other = ContainerKey(PodUID("pod-b"), ContainerName("x"))
        allocations[other] = MappingProxyType({GPU: others})
    if held:
        allocations[pod.key(container.name)] = MappingProxyType({GPU: held})
    reusable = frozenset[str]()
    if draw(st.booleans()):
        reusable = frozenset(draw(st.sets(st.sampled_from(ids), min_size=1, max_size=4)))
        if draw(st.booleans()):
            init = ContainerKey(POD_UID, ContainerName("init"))
            allocations[init] = MappingProxyType({GPU: reusable})
    base = DeviceState.create(node_ids, {GPU: devices})
    machine = DeviceState(
        base.numa_node_ids,
        base.devices,
        MappingProxyType(allocations),
        reusable_pod=POD_UID if reusable else None,
        reusable=MappingProxyType({GPU: reusable} if reusable else {}),
    )
    return Case(machine, pod, held, reusable), container


@st.composite
def pod_cases(draw: st.DrawFn) -> Case:
    node_ids, devices = draw(machines())
    ids = [d.id for d in devices]
    kinds = st.sampled_from([ContainerKind.INIT, ContainerKind.SIDECAR])
    inits = tuple(
        ctr(f"init{i}", draw(st.one_of(st.none(), st.integers(0, 5))), draw(kinds))
        for i in range(draw(st.integers(0, 2)))
    )
    apps = tuple(
        ctr(
            f"app{i}",
            draw(st.integers(0, 4) if i == 0 else st.one_of(st.none(), st.integers(0, 4))),
        )
        for i in range(draw(st.integers(1, 3)))
    )
    pod = Pod(uid=POD_UID, name="a", containers=apps, init_containers=inits)
    others = _subset(draw, ids)
    allocations: dict[ContainerKey, MappingProxyType[str, frozenset[str]]] = {}
    if others:
        other = ContainerKey(PodUID("pod-b"), ContainerName("x"))
        allocations[other] = MappingProxyType({GPU: others})
    held: set[str] = set()
    peak = pod_device_requests(DeviceState.create(node_ids, {GPU: devices}), pod).get(GPU, 0)
    mode = draw(st.sampled_from(["free", "per-container", "exact"]))
    if mode == "exact" and 0 < peak <= len(ids):
        # the pod holds exactly its peak need: the held-devices rule
        mine = frozenset(draw(st.permutations(ids))[:peak])
        allocations[pod.key(apps[0].name)] = MappingProxyType({GPU: mine})
        held |= mine
    elif mode == "per-container":
        for container in (*inits, *apps):
            mine = _subset(draw, [i for i in ids if i not in others] or ids, max_size=3)
            if mine:
                allocations[pod.key(container.name)] = MappingProxyType({GPU: mine})
                held |= mine
    base = DeviceState.create(node_ids, {GPU: devices})
    machine = DeviceState(base.numa_node_ids, base.devices, MappingProxyType(allocations))
    return Case(machine, pod, frozenset(held), frozenset())


# --- differential tests ----------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(case=container_cases())
def test_container_source_is_exactly_the_explicit_hints(case: tuple[Case, Container]) -> None:
    data, container = case
    requested = container_device_requests(data.machine, container)[GPU]
    explicit = device_hints(data.machine, data.pod, container)[GPU]
    answer = device_hints(data.machine, data.pod, container, implicit=True)[GPU]
    assert explicit == reference(data.machine, requested, data.held, data.reusable)
    assert as_explicit(answer) == explicit
    check_source_contract(answer)
    single_node = all(len(d.numa_nodes) <= 1 for d in data.machine.devices[GPU].values())
    if single_node and explicit not in (NO_PREFERENCE, NO_PLACEMENT):
        assert isinstance(answer, CapacityHintSource)  # held devices too: no enumeration


@settings(max_examples=300, deadline=None)
@given(data=pod_cases())
def test_pod_source_is_exactly_the_explicit_hints(data: Case) -> None:
    requests = pod_device_requests(data.machine, data.pod)
    explicit = device_hints(data.machine, data.pod, None).get(GPU, NO_PREFERENCE)
    answer = device_hints(data.machine, data.pod, None, implicit=True).get(GPU, NO_PREFERENCE)
    if GPU in requests:
        assert explicit == reference(data.machine, requests[GPU], data.held, frozenset())
    assert as_explicit(answer) == explicit
    check_source_contract(answer)
    single_node = all(len(d.numa_nodes) <= 1 for d in data.machine.devices[GPU].values())
    if single_node and explicit not in (NO_PREFERENCE, NO_PLACEMENT):
        assert isinstance(answer, CapacityHintSource)


# --- fixed cases -----------------------------------------------------------------------------


def test_held_devices_become_required_nodes() -> None:
    devices = [Device("a", (0,)), Device("b", (1,)), Device("c", (1,)), Device("d", (2,))]
    container = ctr("app", 2)
    pod = Pod(uid=POD_UID, name="a", containers=(container,), init_containers=())
    base = DeviceState.create((0, 1, 2), {GPU: devices})
    held = {pod.key(container.name): MappingProxyType({GPU: frozenset({"a", "d"})})}
    machine = DeviceState(base.numa_node_ids, base.devices, MappingProxyType(held))
    answer = device_hints(machine, pod, container, implicit=True)[GPU]
    assert isinstance(answer, CapacityHintSource)
    assert answer.required == 0b101
    assert answer.preferred_size == 1
    assert answer.explicit() == (
        TopologyHint(NUMAMask.of(0, 2), False),
        TopologyHint(NUMAMask.of(0, 1, 2), False),
    )


@pytest.mark.parametrize(
    ("held", "expected"),
    [
        (frozenset({"a"}), NO_PLACEMENT),  # holds 1, asks 2
        (frozenset({"a", "u"}), NO_PLACEMENT),  # a held device on no node: no mask counts it
    ],
)
def test_held_devices_without_a_rule(held: frozenset[str], expected: ResourceHints) -> None:
    devices = [Device("a", (0,)), Device("b", (1,)), Device("u", ())]
    container = ctr("app", 2)
    pod = Pod(uid=POD_UID, name="a", containers=(container,), init_containers=())
    base = DeviceState.create((0, 1), {GPU: devices})
    table = {pod.key(container.name): MappingProxyType({GPU: held})}
    machine = DeviceState(base.numa_node_ids, base.devices, MappingProxyType(table))
    assert device_hints(machine, pod, container, implicit=True)[GPU] == expected
    assert device_hints(machine, pod, container)[GPU] == expected


def test_resource_not_asked_for_has_no_preference() -> None:
    machine = DeviceState.create((0, 1), {GPU: [Device("a", (0,))]})
    container = ctr("app", None)
    pod = Pod(uid=POD_UID, name="a", containers=(container,), init_containers=())
    assert GPU not in device_hints(machine, pod, container, implicit=True)
    assert GPU not in device_hints(machine, pod, None, implicit=True)


# --- 64 NUMA nodes: rules without enumeration ------------------------------------------------


def _wide_machine() -> tuple[DeviceState, Pod, Container]:
    """64 nodes, two devices on each even node, one on each odd node, half of them taken."""
    devices = [Device(f"e{node}-{k}", (node,)) for node in range(0, 64, 2) for k in range(2)]
    devices += [Device(f"o{node}", (node,)) for node in range(1, 64, 2)]
    container = ctr("app", 5)
    pod = Pod(uid=POD_UID, name="a", containers=(container,), init_containers=())
    base = DeviceState.create(range(64), {GPU: devices})
    taken = frozenset(f"e{node}-{k}" for node in range(0, 40, 2) for k in range(2))
    other = ContainerKey(PodUID("pod-b"), ContainerName("x"))
    allocations = {other: MappingProxyType({GPU: taken})}
    machine = DeviceState(base.numa_node_ids, base.devices, MappingProxyType(allocations))
    return machine, pod, container


def test_64_nodes_container_scope_is_a_rule() -> None:
    machine, pod, container = _wide_machine()
    answer = device_hints(machine, pod, container, implicit=True)[GPU]
    assert isinstance(answer, CapacityHintSource)
    assert answer.preferred_size == 3  # 2 + 2 + 2 >= 5 counting every device
    assert answer.min_size() == 3  # three free even nodes from 40 up
    assert answer.feasible((1 << 40) | (1 << 42) | (1 << 44))
    assert not answer.feasible((1 << 0) | (1 << 2) | (1 << 4))  # taken


def test_64_nodes_held_devices_are_a_rule() -> None:
    machine, pod, container = _wide_machine()
    held = frozenset({"o1", "o3", "e50-0", "e50-1", "o63"})
    allocations = dict(machine.allocations)
    allocations[pod.key(container.name)] = MappingProxyType({GPU: held})
    machine = DeviceState(machine.numa_node_ids, machine.devices, MappingProxyType(allocations))
    answer = device_hints(machine, pod, container, implicit=True)[GPU]
    assert isinstance(answer, CapacityHintSource)
    assert answer.required == (1 << 1) | (1 << 3) | (1 << 50) | (1 << 63)
    assert answer.min_size() == 4
    assert answer.preferred_size == 3
    assert not answer.preferred(answer.required)


def test_64_nodes_pod_scope_is_a_rule() -> None:
    machine, _, _ = _wide_machine()
    apps = (ctr("app0", 3), ctr("app1", 4))
    inits = (ctr("init0", 9, ContainerKind.INIT),)
    pod = Pod(uid=POD_UID, name="a", containers=apps, init_containers=inits)
    answer = device_hints(machine, pod, None, implicit=True)[GPU]
    assert isinstance(answer, CapacityHintSource)
    assert answer.need == 9  # the init container's peak beats 3 + 4
    assert answer.preferred_size == 5
    assert answer.min_size() == 5


def test_devices_on_several_nodes_past_the_enumeration_limit_are_refused() -> None:
    devices = [Device("nic", (0, 1)), Device("gpu", (2,))]
    machine = DeviceState.create(range(ENUMERATE_LIMIT + 4), {GPU: devices})
    the_pod = Pod(uid=PodUID("p"), name="p", containers=(ctr("app", 1),))
    with pytest.raises(UnexpectedAdmissionError, match="attached to several NUMA nodes"):
        device_hints(machine, the_pod, the_pod.containers[0], implicit=True)
    small = DeviceState.create(range(4), {GPU: devices})
    assert device_hints(small, the_pod, the_pod.containers[0], implicit=True)[GPU]  # enumerated
