"""The kubelet's resource-fit predicate (``pkg/kubelet/lifecycle/predicate.go``), pure.

After the resource managers admit a pod, the kubelet's predicate admit handler runs the
scheduler's ``noderesources`` Fits on a NodeInfo holding the node's other active pods: the
pod count first (``maxPods``), then CPU (millicores), memory (bytes), then every extended
resource the pod requests. The first shortfall becomes the rejection: reason
``OutOf<resource>`` and the InsufficientResourceError text ``Node didn't have enough
resource: <name>, requested: N, used: N, capacity: N`` (capacity is the node's allocatable).

Node allocatable is capacity minus ``kubeReserved``, ``systemReserved`` and, for memory, the
``memory.available`` hard eviction threshold (a quantity or a percentage of capacity);
memory also loses the hugepage pools (the kubelet's node status does the same). A pod's
request is the effective pod request (containers summed, init peak, pod-level requests
for cpu and memory where given) plus the pod's ``spec.overhead``. Extended resources are
checked in name order (the scheduler walks a Go map).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import cast

from cpumanager.core.devices import DeviceState
from cpumanager.core.quantity import parse_quantity
from cpumanager.core.topology import CPUTopology
from cpumanager.core.workload import Pod, aggregate_container_requests
from cpumanager.formats.kubelet_config import KubeletConfig

__all__ = [
    "Allocatable",
    "FitFailure",
    "compared_requests",
    "fit_failures",
    "node_allocatable",
    "pod_requests",
    "pods_usage",
    "resource_fit",
]

_NATIVE = ("cpu", "memory", "ephemeral-storage", "pods")
_CPU_MEMORY = ("cpu", "memory")


@dataclass(frozen=True, slots=True)
class Allocatable:
    """The node's capacity and allocatable per resource (cpu in millicores, bytes, counts)."""

    capacity: Mapping[str, int]
    allocatable: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class FitFailure:
    """One resource the pod does not fit in: the kubelet's reason and message."""

    resource: str
    requested: int
    used: int
    capacity: int

    @property
    def reason(self) -> str:
        return f"OutOf{self.resource}"

    @property
    def message(self) -> str:
        return (
            f"Node didn't have enough resource: {self.resource}, requested: {self.requested}, "
            f"used: {self.used}, capacity: {self.capacity}"
        )


def _amount(resource: str, value: Fraction) -> int:
    """A quantity in the predicate's units: millicores for cpu, whole units (rounded up,
    as resource.Quantity.Value does) otherwise."""
    if resource == "cpu":
        return math.ceil(value * 1000)
    return math.ceil(value)


def pod_requests(pod: Pod) -> dict[str, int]:
    """The effective pod request per resource (PodRequests: containers, init peak, the
    pod-level requests where given for cpu and memory, then the pod overhead added).
    Computed once per pod object (``Pod._memo``: its fields are frozen); a new dict each call."""
    found = pod._memo.get("fit requests")
    if found is None:
        found = pod._memo["fit requests"] = _pod_requests(pod)
    return dict(cast(dict[str, int], found))


def _pod_requests(pod: Pod) -> dict[str, int]:
    total = aggregate_container_requests(pod)
    for name in ("cpu", "memory"):
        if name in pod.requests:
            total[name] = pod.requests[name]
    for name, amount in pod.overhead.items():
        total[name] = total.get(name, Fraction(0)) + amount
    return {name: _amount(name, value) for name, value in total.items()}


def _eviction_memory(kubelet: KubeletConfig, capacity: int) -> int:
    raw = kubelet.eviction_hard.get("memory.available", "")
    if not raw:
        return 0
    text = raw.strip()
    if text.endswith("%"):
        return math.ceil(Fraction(text[:-1]) / 100 * capacity)
    return _amount("memory", parse_quantity(text, field="evictionHard[memory.available]"))


def node_allocatable(
    topology: CPUTopology,
    kubelet: KubeletConfig,
    *,
    hugepages: Mapping[int, Mapping[str, int]],
    devices: DeviceState | None,
) -> Allocatable:
    """Capacity and allocatable as the kubelet reports them on its Node object."""
    memory = sum(n.memory_bytes or 0 for n in topology.numa_nodes)
    pods = kubelet.max_pods
    if kubelet.pods_per_core > 0:
        pods = min(pods, kubelet.pods_per_core * len(topology.core_ids()))
    capacity: dict[str, int] = {
        "cpu": len(topology.all_cpus) * 1000,
        "memory": memory,
        "pods": pods,
    }
    for pools in hugepages.values():
        for name, size in pools.items():
            capacity[name] = capacity.get(name, 0) + size
    if devices is not None:
        for resource in devices.devices:
            capacity[resource] = len(devices.healthy(resource))
    allocatable = dict(capacity)
    reserved: dict[str, int] = {}
    # --reserved-cpus overrides the cpu of kubeReserved and systemReserved (kubelet server.go)
    for table in (kubelet.effective_kube_reserved(), kubelet.effective_system_reserved()):
        for name, amount in table.items():
            reserved[name] = reserved.get(name, 0) + _amount(name, amount)
    reserved["memory"] = reserved.get("memory", 0) + _eviction_memory(kubelet, memory)
    for name, held in reserved.items():
        if name in allocatable:
            allocatable[name] = max(0, allocatable[name] - held)
    huge = sum(v for k, v in capacity.items() if k.startswith("hugepages-"))
    allocatable["memory"] = max(0, allocatable["memory"] - huge)
    return Allocatable(capacity, allocatable)


def pods_usage(pods: Iterable[Pod]) -> dict[str, int]:
    """The summed effective requests of ``pods`` per resource (what NodeInfo counts)."""
    used: dict[str, int] = {}
    for other in pods:
        for name, value in pod_requests(other).items():
            used[name] = used.get(name, 0) + value
    return used


def compared_requests(wanted: Mapping[str, int]) -> tuple[tuple[str, int], ...]:
    """The requests the predicate compares with the node's free amounts, in its order (cpu,
    memory, then extended resources by name; none when the pod requests nothing), zeros
    left out."""
    if not any(wanted.values()):
        return ()
    extended = [name for name in wanted if name not in _NATIVE]
    order = ("cpu", "memory", *sorted(extended)) if extended else _CPU_MEMORY
    return tuple((name, wanted[name]) for name in order if wanted.get(name, 0))


def fit_failures(
    wanted: Mapping[str, int], used: Mapping[str, int], count: int, node: Allocatable
) -> list[FitFailure]:
    """:func:`resource_fit` on numbers: the pod's requests, the other pods' summed requests
    and how many other pods there are."""
    failures: list[FitFailure] = []
    allocatable = node.allocatable
    allowed = allocatable.get("pods", 0)
    if count + 1 > allowed:
        failures.append(FitFailure("pods", 1, count, allowed))
    for name, request in compared_requests(wanted):
        capacity, held = allocatable.get(name, 0), used.get(name, 0)
        if request > capacity - held:
            failures.append(FitFailure(name, request, held, capacity))
    return failures


def resource_fit(pod: Pod, others: Iterable[Pod], node: Allocatable) -> list[FitFailure]:
    """Every shortfall in the kubelet's order (pods, cpu, memory, then extended resources
    by name); empty when the pod fits. The kubelet reports the first."""
    others = list(others)
    return fit_failures(pod_requests(pod), pods_usage(others), len(others), node)
