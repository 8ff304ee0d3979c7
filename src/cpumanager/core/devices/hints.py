"""Device topology hints, as the kubelet's device manager gives them (``topology_hints.go``).

Hints for ``n`` devices of a resource (``GetTopologyHints`` / ``GetPodTopologyHints``):

* a resource none of whose devices reports a NUMA node gets *no preference*;
* devices already assigned to the container (pod, in pod scope) regenerate hints from
  those devices alone, or *no placement* if their number differs from the request;
* fewer than ``n`` available (+ reusable) devices: *no placement*;
* otherwise every mask of the machine's NUMA nodes (kubelet order) that keeps every
  reusable device (one with a NUMA node) and reaches ``n`` with available devices that
  touch the mask is a hint; a device counts for a mask if **any** of its nodes is in it,
  devices without NUMA affinity never count. Preferred: the hints with the fewest nodes
  that could hold ``n`` devices counting **all** devices of the resource (free or not).

Form: up to ``IMPLICIT_AFTER`` nodes the hints are listed as the kubelet lists them; past it
(or when asked) devices attached to one NUMA node each make them an additive-capacity rule
(:class:`CapacityHintSource`) the fast merge searches without enumerating masks, also when
the container already holds its devices (every mask holding their nodes). Resources with a
device spanning several nodes keep the list, which is refused past ``ENUMERATE_LIMIT``
nodes rather than left to run for minutes.
"""

from __future__ import annotations

from collections.abc import Callable
from types import MappingProxyType

from cpumanager.core.bitmask import iterate_masks
from cpumanager.core.devices.requests import container_device_requests, pod_device_requests
from cpumanager.core.devices.state import Device, DeviceState
from cpumanager.core.hints.hint import NO_PLACEMENT, NO_PREFERENCE, ResourceHints, TopologyHint
from cpumanager.core.hints.limits import ENUMERATE_LIMIT, implicit_for
from cpumanager.core.hints.source import CapacityHintSource, bits_of
from cpumanager.core.workload import Container, Pod
from cpumanager.errors import UnexpectedAdmissionError

__all__ = ["DeviceHints", "device_capacity", "device_hints"]

# One answer per requested device resource: listed hints or a rule.
DeviceHints = dict[str, ResourceHints | CapacityHintSource]
# (state, resource, requested, held devices, reusable devices) -> one resource's answer
_Answer = Callable[
    [DeviceState, str, int, frozenset[str], frozenset[str]], ResourceHints | CapacityHintSource
]


def device_hints(
    state: DeviceState, pod: Pod, container: Container | None, *, implicit: bool | None = None
) -> DeviceHints:
    """Hints for every device resource ``container`` asks for (the pod's peak need when
    None, pod scope: against the pod's held devices or the free ones, nothing reusable).

    ``implicit`` picks the form: lists (False), rules where possible (True), or by the
    machine's size (None: rules past ``IMPLICIT_AFTER`` NUMA nodes). Both hold the same hints.
    """
    as_rule = implicit_for(len(state.numa_node_ids)) if implicit is None else implicit
    answer: _Answer = _source if as_rule else _explicit
    if container is None:
        return {
            resource: answer(
                state, resource, requested, state.pod_devices(pod.uid, resource), frozenset()
            )
            for resource, requested in pod_device_requests(state, pod).items()
        }
    key = pod.key(container.name)
    return {
        resource: answer(
            state,
            resource,
            requested,
            state.container_devices(key, resource),
            state.reusable_for(pod.uid, resource),
        )
        for resource, requested in container_device_requests(state, container).items()
    }


def _settled(
    state: DeviceState,
    resource: str,
    requested: int,
    mine: frozenset[str],
    reusable: frozenset[str],
) -> ResourceHints | None:
    """The answers that need no mask (None: masks decide): no preference for a resource
    without NUMA information; no placement when the held devices do not match the request
    or too few devices are free (+ reusable)."""
    if not state.has_topology(resource):
        return NO_PREFERENCE
    if mine:
        return NO_PLACEMENT if len(mine) != requested else None
    if len(state.available(resource) | reusable) < requested:
        return NO_PLACEMENT
    return None


def _explicit(
    state: DeviceState,
    resource: str,
    requested: int,
    mine: frozenset[str],
    reusable: frozenset[str],
) -> ResourceHints:
    """One resource's enumerated answer (``mine``: devices the container/pod holds)."""
    settled = _settled(state, resource, requested, mine, reusable)
    if settled is not None:
        return settled
    if mine:
        return _generate(state, resource, mine, frozenset(), requested)
    return _generate(state, resource, state.available(resource), reusable, requested)


def _anchored(state: DeviceState, resource: str, reusable: frozenset[str]) -> list[Device]:
    """Reusable devices with a NUMA node: every hint must hold their nodes."""
    table = state.devices.get(resource, {})
    return [table[d] for d in sorted(reusable) if d in table and table[d].numa_nodes]


def _min_affinity(state: DeviceState, resource: str, requested: int) -> int:
    """Fewest nodes that could hold ``requested`` devices counting every device (free or not).

    Like the kubelet, a mask as wide as the machine is never tested: the machine's node
    count is the answer when no narrower mask reaches the request. Devices on one node each
    add up per node, so the narrowest mask is the nodes with the most devices (no 2^N walk);
    only devices spanning several nodes need the enumeration.
    """
    devices = tuple(state.devices[resource].values())
    node_count = len(state.numa_node_ids)
    if all(len(d.numa_nodes) <= 1 for d in devices):
        known = set(state.numa_node_ids)
        totals: dict[int, int] = {}
        for device in devices:
            if device.numa_nodes and device.numa_nodes[0] in known:
                node = device.numa_nodes[0]
                totals[node] = totals.get(node, 0) + 1
        ranked = sorted(totals.values(), reverse=True)
        have = 0
        for size in range(1, node_count):
            have += ranked[size - 1] if size <= len(ranked) else 0
            if have >= requested:
                return size
        return node_count
    best = node_count
    for mask in iterate_masks(state.numa_node_ids):
        if mask.count() >= best:
            break  # masks come by increasing size: nothing narrower remains
        if sum(1 for d in devices if d.touches(mask.bits)) >= requested:
            best = mask.count()
    return best


def _generate(
    state: DeviceState,
    resource: str,
    available: frozenset[str],
    reusable: frozenset[str],
    requested: int,
) -> ResourceHints:
    if len(state.numa_node_ids) > ENUMERATE_LIMIT:
        msg = (
            f"Allocate failed due to {resource}: devices attached to several NUMA nodes on a "
            f"machine with {len(state.numa_node_ids)} NUMA nodes; their hints are enumerated "
            f"mask by mask, which cpumanager does up to {ENUMERATE_LIMIT} NUMA nodes, which "
            "is unexpected; report each device on one NUMA node"
        )
        raise UnexpectedAdmissionError(msg)
    table = state.devices[resource]
    min_affinity = _min_affinity(state, resource, requested)
    anchored = _anchored(state, resource, reusable)
    candidates = [table[d] for d in available if d in table]
    hints = []
    for mask in iterate_masks(state.numa_node_ids):
        bits = mask.bits
        if not all(d.touches(bits) for d in anchored):
            continue
        matching = len(anchored) + sum(1 for d in candidates if d.touches(bits))
        if matching >= requested:
            hints.append(TopologyHint(mask, mask.count() == min_affinity))
    return tuple(hints)


def _source(
    state: DeviceState,
    resource: str,
    requested: int,
    mine: frozenset[str],
    reusable: frozenset[str],
) -> CapacityHintSource | ResourceHints:
    """One resource's answer as a rule when every device sits on at most one node; the
    explicit answer otherwise (and for no preference / no placement)."""
    settled = _settled(state, resource, requested, mine, reusable)
    if settled is not None:
        return settled
    table = state.devices.get(resource, {})
    if any(len(d.numa_nodes) > 1 for d in table.values()):
        return _explicit(state, resource, requested, mine, reusable)
    universe = bits_of(state.numa_node_ids)
    preferred_size = _min_affinity(state, resource, requested)
    unit = f"{resource} devices"
    if mine:
        held = [table[d] for d in mine if d in table]
        if len(held) != requested or any(not d.numa_nodes for d in held):
            return NO_PLACEMENT  # a held device no mask can count: no hint reaches the request
        return CapacityHintSource(
            universe=universe,
            free=MappingProxyType({}),
            need=requested,
            preferred_size=preferred_size,
            base=len(held),
            required=bits_of([d.numa_nodes[0] for d in held]),
            node_order=state.numa_node_ids,
            unit=unit,
        )
    free: dict[int, int] = {}
    for device_id in state.available(resource):
        device = table.get(device_id)
        if device is not None and device.numa_nodes:
            free[device.numa_nodes[0]] = free.get(device.numa_nodes[0], 0) + 1
    anchored = _anchored(state, resource, reusable)
    return CapacityHintSource(
        universe=universe,
        free=MappingProxyType(free),
        need=requested,
        preferred_size=preferred_size,
        base=len(anchored),
        required=bits_of([d.numa_nodes[0] for d in anchored]),
        node_order=state.numa_node_ids,
        unit=unit,
    )


def device_capacity(state: DeviceState, resource: str, requested: int) -> CapacityHintSource:
    """Free devices per NUMA node against a request, for explanations (not for merging).

    A device on several nodes counts on each of them; devices on no node count everywhere
    (``base``), since they fit any mask.
    """
    table = state.devices.get(resource, {})
    free: dict[int, int] = {}
    anywhere = 0
    for device_id in state.available(resource):
        nodes = table[device_id].numa_nodes
        if not nodes:
            anywhere += 1
        for node in nodes:
            free[node] = free.get(node, 0) + 1
    return CapacityHintSource(
        universe=bits_of(state.numa_node_ids),
        free=MappingProxyType(free),
        need=requested,
        preferred_size=1,
        base=anywhere,
        node_order=state.numa_node_ids,
        unit=f"{resource} devices",
    )
