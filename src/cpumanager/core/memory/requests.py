"""What the memory manager is asked for: memory and hugepages requests in whole bytes.

A container asks for its ``memory`` and ``hugepages-*`` requests; a pod (pod scope) for its
peak need per type, the kubelet's ``getPodRequestedResources``: the larger of the app
containers' sum and the biggest init container, with sidecars counted throughout. Amounts
that are not a whole int64 make the request unrepresentable (None), as the kubelet's
``Value()`` conversion check does.
"""

from __future__ import annotations

from cpumanager.core.workload import Container, ContainerKind, Pod

__all__ = ["container_memory_requests", "is_memory_resource", "pod_memory_requests"]

_MAX_INT64 = (1 << 63) - 1


def is_memory_resource(resource: str) -> bool:
    """Regular memory or a hugepage size: the resources the memory manager pins."""
    return resource == "memory" or resource.startswith("hugepages-")


def container_memory_requests(container: Container) -> dict[str, int] | None:
    """Memory and hugepages requests in bytes; None when one is not a whole int64."""
    out: dict[str, int] = {}
    for resource, amount in sorted(container.requests.items()):
        if not is_memory_resource(resource):
            continue
        if amount.denominator != 1 or not -_MAX_INT64 <= amount.numerator <= _MAX_INT64:
            return None
        out[resource] = amount.numerator
    return out


def pod_memory_requests(pod: Pod) -> dict[str, int] | None:
    """The pod's peak memory need per type (sidecars counted throughout)."""
    init_peak: dict[str, int] = {}
    sidecars: dict[str, int] = {}
    for container in pod.init_containers:
        requests = container_memory_requests(container)
        if requests is None:
            return None
        for resource, amount in requests.items():
            init_peak.setdefault(resource, 0)
            if container.kind is ContainerKind.SIDECAR:
                sidecars[resource] = sidecars.get(resource, 0) + amount
            elif sidecars.get(resource, 0) + amount > init_peak[resource]:
                init_peak[resource] = sidecars.get(resource, 0) + amount
    apps: dict[str, int] = {}
    for container in pod.containers:
        requests = container_memory_requests(container)
        if requests is None:
            return None
        for resource, amount in requests.items():
            apps[resource] = apps.get(resource, 0) + amount
    # The kubelet keys the result by the app containers' types only.
    return {r: max(amount + sidecars.get(r, 0), init_peak.get(r, 0)) for r, amount in apps.items()}
