"""What the device manager is asked for: whole devices per device-plugin resource.

A container asks for the ``Value()`` (ceiling) of its limits on device resources; a pod
(pod scope) for its peak need, the sidecar-aware ``PodLimits``: app containers and sidecars
summed, or the biggest init container with the sidecars started before it, whichever is
larger.
"""

from __future__ import annotations

from fractions import Fraction

from cpumanager.core.devices.state import DeviceState
from cpumanager.core.quantity import value
from cpumanager.core.workload import Container, ContainerKind, Pod

__all__ = ["container_device_requests", "pod_device_requests"]


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
