"""Device hint provider and allocator, as the kubelet's device manager does it (pure).

Model: per extended resource (``nvidia.com/gpu``, ``example.com/nic``), the devices a
device plugin reported, each attached to one NUMA node, several, or none, healthy or not.
:class:`DeviceState` is immutable: allocation and release return a new state.

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

Allocation (``devicesToAllocate``): reusable devices (left by the pod's init containers)
first; then, with the container's merged hint, devices touching the hint's nodes
("aligned"), then devices on other nodes, then devices without NUMA affinity. A plugin with
``GetPreferredAllocation`` (the optional ``preferred`` callable) is asked once: among the
aligned devices when they alone cover the rest, else after all aligned ones are taken, among
every available device; only its picks that are candidates count. The kubelet picks within
each group by iterating Go sets, i.e. in random order (its per-node sort in
``filterByAffinity`` is lost when the groups become sets); here the tie-break is the device id
in natural order (``dev2`` < ``dev10``), one of the kubelet's possible answers.
Init containers' devices become reusable by the pod's later containers; sidecars' and app
containers' devices are not. A resource that is not registered but still held by some
container is a device resource with no hints and fails allocation as unregistered.

Errors are :class:`UnexpectedAdmissionError` with the admission message the kubelet
prints: ``Allocate failed due to <device manager error>, which is unexpected``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from types import MappingProxyType

from cpumanager.core.bitmask import NUMAMask, iterate_masks
from cpumanager.core.hints.hint import (
    NO_PLACEMENT,
    NO_PREFERENCE,
    ProviderHints,
    ResourceHints,
    TopologyHint,
)
from cpumanager.core.hints.source import CapacityHintSource, bits_of
from cpumanager.core.ids import ContainerKey, PodUID
from cpumanager.core.quantity import value
from cpumanager.core.workload import Container, ContainerKind, Pod
from cpumanager.errors import MachineError, UnexpectedAdmissionError

__all__ = [
    "Device",
    "DeviceAllocation",
    "DeviceState",
    "PreferredAllocation",
    "allocate_devices",
    "container_device_requests",
    "device_capacity",
    "device_hint_source",
    "device_hints",
    "pod_device_hint_source",
    "pod_device_hints",
    "pod_device_requests",
    "release_pod_devices",
]

_DIGITS = re.compile(r"(\d+)")
_Allocations = Mapping[ContainerKey, Mapping[str, frozenset[str]]]

PreferredAllocation = Callable[[str, frozenset[str], frozenset[str], int], Iterable[str]]
"""A device plugin's ``GetPreferredAllocation``: ``(resource, available, must_include, size)``
to the device ids it would pick. Ids that are not candidates are ignored, as in the kubelet."""


def _natural(device_id: str) -> tuple[tuple[int, int | str], ...]:
    return tuple(
        (0, int(part)) if part.isdigit() else (1, part) for part in _DIGITS.split(device_id) if part
    )


@dataclass(frozen=True, slots=True)
class Device:
    """One device: its id, the NUMA nodes it is attached to (may be none), its health."""

    id: str
    numa_nodes: tuple[int, ...] = ()
    healthy: bool = True

    def touches(self, bits: int) -> bool:
        return any((bits >> node) & 1 for node in self.numa_nodes)


@dataclass(frozen=True, slots=True)
class DeviceState:
    """Devices per resource, what is allocated to whom, and the pod's reusable devices."""

    numa_node_ids: tuple[int, ...]
    devices: Mapping[str, Mapping[str, Device]]
    allocations: _Allocations = field(default_factory=lambda: MappingProxyType({}))
    reusable_pod: PodUID | None = None
    reusable: Mapping[str, frozenset[str]] = field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def create(
        cls, numa_node_ids: Iterable[int], devices: Mapping[str, Iterable[Device]]
    ) -> DeviceState:
        """A state with nothing allocated; device ids must be unique per resource."""
        nodes = tuple(sorted(set(numa_node_ids)))
        table: dict[str, Mapping[str, Device]] = {}
        for resource, listed in sorted(devices.items()):
            by_id: dict[str, Device] = {}
            for device in listed:
                if device.id in by_id:
                    msg = f"device {device.id!r} of {resource!r} is listed twice; ids are unique"
                    raise MachineError(msg)
                unknown = [n for n in device.numa_nodes if n not in nodes]
                if unknown:
                    msg = (
                        f"device {device.id!r} of {resource!r} is on NUMA node {unknown[0]}, "
                        f"which the machine does not have (nodes {list(nodes)})"
                    )
                    raise MachineError(msg)
                by_id[device.id] = device
            table[resource] = MappingProxyType(by_id)
        return cls(numa_node_ids=nodes, devices=MappingProxyType(table))

    # --- queries --------------------------------------------------------------------------

    def is_device_resource(self, resource: str) -> bool:
        """Registered, or still held by a container (the kubelet's ``isDevicePluginResource``)."""
        return resource in self.devices or any(
            resource in per_resource for per_resource in self.allocations.values()
        )

    def has_topology(self, resource: str) -> bool:
        """The kubelet's ``deviceHasTopologyAlignment``: some device reports a NUMA node."""
        return any(d.numa_nodes for d in self.devices.get(resource, {}).values())

    def healthy(self, resource: str) -> frozenset[str]:
        return frozenset(d.id for d in self.devices.get(resource, {}).values() if d.healthy)

    def allocated(self, resource: str) -> frozenset[str]:
        """Every device of ``resource`` held by any container."""
        held: set[str] = set()
        for per_resource in self.allocations.values():
            held |= per_resource.get(resource, frozenset())
        return frozenset(held)

    def available(self, resource: str) -> frozenset[str]:
        return self.healthy(resource) - self.allocated(resource)

    def container_devices(self, key: ContainerKey, resource: str) -> frozenset[str]:
        return self.allocations.get(key, {}).get(resource, frozenset())

    def pod_devices(self, pod_uid: PodUID, resource: str) -> frozenset[str]:
        held: set[str] = set()
        for key, per_resource in self.allocations.items():
            if key.pod_uid == pod_uid:
                held |= per_resource.get(resource, frozenset())
        return frozenset(held)

    def reusable_for(self, pod_uid: PodUID, resource: str) -> frozenset[str]:
        if self.reusable_pod != pod_uid:
            return frozenset()
        return self.reusable.get(resource, frozenset())


@dataclass(frozen=True, slots=True)
class DeviceAllocation:
    """Devices given to one container per resource, and the state after the allocation."""

    devices: Mapping[str, tuple[str, ...]]
    state: DeviceState


# --- requests ---------------------------------------------------------------------------


def container_device_requests(state: DeviceState, container: Container) -> dict[str, int]:
    """Device-plugin resources of a container: whole units of its limits (Value(), ceil)."""
    return {
        resource: value(amount)
        for resource, amount in sorted(container.limits.items())
        if state.is_device_resource(resource)
    }


def pod_device_requests(state: DeviceState, pod: Pod) -> dict[str, int]:
    """The pod's peak device need per resource (sidecar-aware ``PodLimits``)."""
    totals: dict[str, Fraction] = {}
    for container in pod.containers:
        for resource, amount in container.limits.items():
            totals[resource] = totals.get(resource, Fraction(0)) + amount
    sidecars: dict[str, Fraction] = {}
    init_peak: dict[str, Fraction] = {}
    for container in pod.init_containers:
        if container.kind is ContainerKind.SIDECAR:
            for resource, amount in container.limits.items():
                totals[resource] = totals.get(resource, Fraction(0)) + amount
                sidecars[resource] = sidecars.get(resource, Fraction(0)) + amount
            use = dict(sidecars)
        else:
            use = {r: a + sidecars.get(r, Fraction(0)) for r, a in container.limits.items()}
            for resource, amount in sidecars.items():
                use.setdefault(resource, amount)
        for resource, amount in use.items():
            init_peak[resource] = max(init_peak.get(resource, amount), amount)
    for resource, amount in init_peak.items():
        totals[resource] = max(totals.get(resource, amount), amount)
    return {r: value(a) for r, a in sorted(totals.items()) if state.is_device_resource(r)}


# --- hints ------------------------------------------------------------------------------


def device_hints(state: DeviceState, pod: Pod, container: Container) -> ProviderHints:
    """Container-scope hints for every device resource the container asks for."""
    key = pod.key(container.name)
    return {
        resource: _explicit(
            state,
            resource,
            requested,
            state.container_devices(key, resource),
            state.reusable_for(pod.uid, resource),
        )
        for resource, requested in container_device_requests(state, container).items()
    }


def pod_device_hints(state: DeviceState, pod: Pod) -> ProviderHints:
    """Pod-scope hints: the pod's peak need, against the pod's devices or the free ones."""
    return {
        resource: _explicit(
            state, resource, requested, state.pod_devices(pod.uid, resource), frozenset()
        )
        for resource, requested in pod_device_requests(state, pod).items()
    }


def _explicit(
    state: DeviceState,
    resource: str,
    requested: int,
    mine: frozenset[str],
    reusable: frozenset[str],
) -> ResourceHints:
    """One resource's enumerated answer (``mine``: devices the container/pod holds)."""
    if not state.has_topology(resource):
        return NO_PREFERENCE
    if mine:
        if len(mine) != requested:
            return NO_PLACEMENT
        return _generate(state, resource, mine, frozenset(), requested)
    available = state.available(resource)
    if len(available | reusable) < requested:
        return NO_PLACEMENT
    return _generate(state, resource, available, reusable, requested)


# Past this many NUMA nodes explicit device hints (needed only for devices attached to several
# nodes, or below the rules' switch-over) would take minutes: refuse instead of hanging.
ENUMERATE_LIMIT = 20


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
    anchored = [table[d] for d in reusable if d in table and table[d].numa_nodes]
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


def device_hint_source(
    state: DeviceState, pod: Pod, container: Container, resource: str
) -> CapacityHintSource | ResourceHints:
    """The container-scope hints of one resource as an implicit rule when possible.

    Devices attached to one NUMA node each make the hints an additive-capacity family
    (:class:`CapacityHintSource`) that the fast merge searches without enumerating masks,
    also when the container already holds its devices (every mask holding their nodes).
    No preference / no placement, and resources with a device spanning several nodes, get
    the explicit answer.
    """
    requests = container_device_requests(state, container)
    if resource not in requests:
        return NO_PREFERENCE  # as device_hints: a resource not asked for has no entry
    return _source(
        state,
        resource,
        requests[resource],
        state.container_devices(pod.key(container.name), resource),
        state.reusable_for(pod.uid, resource),
    )


def pod_device_hint_source(
    state: DeviceState, pod: Pod, resource: str
) -> CapacityHintSource | ResourceHints:
    """The pod-scope twin of :func:`device_hint_source` (``pod_device_hints`` as a rule).

    The pod's peak need against the pod's held devices, or else its free devices (no
    reusable devices in pod scope); the explicit answer where the container scope gives one.
    """
    requests = pod_device_requests(state, pod)
    if resource not in requests:
        return NO_PREFERENCE
    return _source(
        state, resource, requests[resource], state.pod_devices(pod.uid, resource), frozenset()
    )


def _source(
    state: DeviceState,
    resource: str,
    requested: int,
    mine: frozenset[str],
    reusable: frozenset[str],
) -> CapacityHintSource | ResourceHints:
    table = state.devices.get(resource, {})
    if not state.has_topology(resource):
        return NO_PREFERENCE
    if any(len(d.numa_nodes) > 1 for d in table.values()):
        return _explicit(state, resource, requested, mine, reusable)
    universe = bits_of(state.numa_node_ids)
    preferred_size = _min_affinity(state, resource, requested)
    unit = f"{resource} devices"
    if mine:
        if len(mine) != requested:
            return NO_PLACEMENT
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
    available = state.available(resource)
    if len(available | reusable) < requested:
        return NO_PLACEMENT
    free: dict[int, int] = {}
    for device_id in available:
        device = table.get(device_id)
        if device is not None and device.numa_nodes:
            free[device.numa_nodes[0]] = free.get(device.numa_nodes[0], 0) + 1
    anchored = [table[d] for d in reusable if d in table and table[d].numa_nodes]
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
    universe = 0
    for node in state.numa_node_ids:
        universe |= 1 << node
    return CapacityHintSource(
        universe=universe,
        free=MappingProxyType(free),
        need=requested,
        preferred_size=1,
        base=anywhere,
        node_order=state.numa_node_ids,
        unit=f"{resource} devices",
    )


# --- allocation and release -------------------------------------------------------------


def allocate_devices(
    state: DeviceState,
    pod: Pod,
    container: Container,
    hint: TopologyHint | None,
    *,
    preferred: PreferredAllocation | None = None,
) -> DeviceAllocation:
    """Give ``container`` its devices near ``hint`` (the merged hint; None = no affinity).

    ``preferred`` stands for a plugin that offers ``GetPreferredAllocation``; without it the
    kubelet (and this function) picks inside each group on its own.
    """
    key = pod.key(container.name)
    if state.reusable_pod != pod.uid:
        state = replace(state, reusable_pod=pod.uid, reusable=MappingProxyType({}))
    given: dict[str, tuple[str, ...]] = {}
    for resource, needed in container_device_requests(state, container).items():
        chosen = _devices_to_allocate(state, key, resource, needed, hint, preferred=preferred)
        if not chosen:
            continue
        given[resource] = chosen
        per_container = dict(state.allocations.get(key, {}))
        per_container[resource] = frozenset(chosen)
        allocations = dict(state.allocations)
        allocations[key] = MappingProxyType(per_container)
        state = replace(state, allocations=MappingProxyType(allocations))
    state = _update_reusable(state, key, container)
    return DeviceAllocation(devices=MappingProxyType(given), state=state)


def _update_reusable(state: DeviceState, key: ContainerKey, container: Container) -> DeviceState:
    reusable = {r: set(ids) for r, ids in state.reusable.items()}
    for resource, ids in state.allocations.get(key, {}).items():
        if container.kind is ContainerKind.INIT:
            reusable.setdefault(resource, set()).update(ids)
        else:
            reusable.setdefault(resource, set()).difference_update(ids)
    frozen = {r: frozenset(ids) for r, ids in sorted(reusable.items()) if ids}
    return replace(state, reusable=MappingProxyType(frozen))


def _unexpected(detail: str) -> UnexpectedAdmissionError:
    return UnexpectedAdmissionError(f"Allocate failed due to {detail}, which is unexpected")


def _devices_to_allocate(
    state: DeviceState,
    key: ContainerKey,
    resource: str,
    required: int,
    hint: TopologyHint | None,
    *,
    preferred: PreferredAllocation | None = None,
) -> tuple[str, ...]:
    needed = required
    existing = state.container_devices(key, resource)
    if existing:
        needed -= len(existing)
        if needed != 0:
            msg = (
                f'pod "{key.pod_uid}" container "{key.container_name}" changed request for '
                f'resource "{resource}" from {len(existing)} to {required}'
            )
            raise _unexpected(msg)
    if resource not in state.devices:
        msg = f"cannot allocate unregistered device {resource}"
        raise _unexpected(msg)
    healthy = state.healthy(resource)
    if not healthy:
        msg = f"no healthy devices present; cannot allocate unhealthy devices {resource}"
        raise _unexpected(msg)
    if not existing <= healthy:
        msg = (
            "previously allocated devices are no longer healthy; cannot allocate unhealthy "
            f"devices {resource}"
        )
        raise _unexpected(msg)
    if needed == 0:
        return ()
    chosen: list[str] = []

    def take(group: Iterable[str]) -> bool:
        nonlocal needed
        for device_id in sorted(set(group) - set(chosen), key=_natural):
            chosen.append(device_id)
            needed -= 1
            if needed == 0:
                return True
        return False

    if take(state.reusable_for(key.pod_uid, resource)):
        return tuple(chosen)
    available = healthy - state.allocated(resource) - set(chosen)
    if len(available) < needed:
        msg = (
            f"requested number of devices unavailable for {resource}. Requested: {needed}, "
            f"Available: {len(available)}"
        )
        raise _unexpected(msg)
    aligned, unaligned, unattached = _filter_by_affinity(state, resource, available, hint)

    def plugin_choice(candidates: Iterable[str]) -> set[str]:
        """The plugin's picks among ``candidates`` (held ones included), as the kubelet asks."""
        if preferred is None:
            return set()
        offered = frozenset(candidates) | frozenset(chosen)
        return set(preferred(resource, offered, frozenset(chosen), required))

    if needed < len(aligned):
        if not take(plugin_choice(aligned) & set(aligned)):
            take(aligned)
        return tuple(chosen)
    if take(aligned):
        return tuple(chosen)
    for group in (plugin_choice(available) & available, unaligned, unattached):
        if take(group):
            return tuple(chosen)
    msg = (  # pragma: no cover - available >= needed makes this unreachable
        f"unexpectedly allocated less resources than required. Requested: {required}, "
        f"Got: {required - needed}"
    )
    raise _unexpected(msg)  # pragma: no cover


def _filter_by_affinity(
    state: DeviceState, resource: str, available: frozenset[str], hint: TopologyHint | None
) -> tuple[list[str], list[str], list[str]]:
    """Split available devices: touching the hint's nodes, other nodes, no NUMA node."""
    if hint is None or hint.mask is None or not state.has_topology(resource):
        return [], [], sorted(available, key=_natural)
    mask: NUMAMask = hint.mask
    table = state.devices[resource]
    aligned, unaligned, unattached = [], [], []
    for device_id in sorted(available, key=_natural):
        device = table[device_id]
        if not device.numa_nodes:
            unattached.append(device_id)
        elif device.touches(mask.bits):
            aligned.append(device_id)
        else:
            unaligned.append(device_id)
    return aligned, unaligned, unattached


def release_pod_devices(state: DeviceState, pod_uid: PodUID) -> DeviceState:
    """Free every device of a pod that is gone (the kubelet's ``UpdateAllocatedDevices``)."""
    kept = {k: v for k, v in state.allocations.items() if k.pod_uid != pod_uid}
    if state.reusable_pod == pod_uid:
        state = replace(state, reusable_pod=None, reusable=MappingProxyType({}))
    return replace(state, allocations=MappingProxyType(kept))
