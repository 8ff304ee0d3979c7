"""Device allocation and release, as the kubelet's device manager does them (``manager.go``).

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
containers' devices are not. Release (``UpdateAllocatedDevices``) frees every device of a
pod that is gone.

Errors are :class:`UnexpectedAdmissionError` with the admission message the kubelet
prints: ``Allocate failed due to <device manager error>, which is unexpected``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType

from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.devices.requests import container_device_requests
from cpumanager.core.devices.state import DeviceState
from cpumanager.core.hints.hint import TopologyHint
from cpumanager.core.ids import ContainerKey, PodUID
from cpumanager.core.workload import Container, ContainerKind, Pod
from cpumanager.errors import UnexpectedAdmissionError

__all__ = ["DeviceAllocation", "PreferredAllocation", "allocate_devices", "release_pod_devices"]

_DIGITS = re.compile(r"(\d+)")

PreferredAllocation = Callable[[str, frozenset[str], frozenset[str], int], Iterable[str]]
"""A device plugin's ``GetPreferredAllocation``: ``(resource, available, must_include, size)``
to the device ids it would pick. Ids that are not candidates are ignored, as in the kubelet."""


def _natural(device_id: str) -> tuple[tuple[int, int | str], ...]:
    return tuple(
        (0, int(part)) if part.isdigit() else (1, part) for part in _DIGITS.split(device_id) if part
    )


@dataclass(frozen=True, slots=True)
class DeviceAllocation:
    """Devices given to one container per resource, and the state after the allocation."""

    devices: Mapping[str, tuple[str, ...]]
    state: DeviceState


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
