"""Pods and containers as the CPU manager sees them.

Resources are exact quantities (``Fraction``) keyed by resource name (``cpu``, ``memory``,
``nvidia.com/gpu``, ``hugepages-2Mi`` ...). The QoS class is computed as the kubelet does
(sums over init and app containers of non-zero cpu/memory requests and limits), and
``guaranteed_cpus`` is the kubelet's exclusive-CPU rule: a Guaranteed pod and an integral
CPU request.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from fractions import Fraction
from types import MappingProxyType

from cpumanager.core.ids import ContainerKey, ContainerName, PodUID
from cpumanager.core.quantity import milli_value, value

__all__ = [
    "Container",
    "ContainerKind",
    "Pod",
    "QoSClass",
    "guaranteed_cpus",
    "pod_guaranteed_cpus",
    "qos_class",
]

_QOS_RESOURCES = ("cpu", "memory")


class ContainerKind(Enum):
    INIT = "init"
    SIDECAR = "sidecar"  # restartable init container (restartPolicy: Always)
    APP = "app"


class QoSClass(Enum):
    GUARANTEED = "Guaranteed"
    BURSTABLE = "Burstable"
    BEST_EFFORT = "BestEffort"


def _frozen(mapping: Mapping[str, Fraction]) -> Mapping[str, Fraction]:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True, slots=True)
class Container:
    """One container: name, kind, resource requests and limits."""

    name: ContainerName
    requests: Mapping[str, Fraction] = field(default_factory=lambda: MappingProxyType({}))
    limits: Mapping[str, Fraction] = field(default_factory=lambda: MappingProxyType({}))
    kind: ContainerKind = ContainerKind.APP

    def __post_init__(self) -> None:
        object.__setattr__(self, "requests", _frozen(self.requests))
        object.__setattr__(self, "limits", _frozen(self.limits))

    @property
    def is_init(self) -> bool:
        return self.kind is not ContainerKind.APP

    def request(self, resource: str) -> Fraction:
        return self.requests.get(resource, Fraction(0))


@dataclass(frozen=True, slots=True)
class Pod:
    """A pod: identity plus init containers (in order) and app containers (in order)."""

    uid: PodUID
    name: str = ""
    namespace: str = "default"
    init_containers: tuple[Container, ...] = ()
    containers: tuple[Container, ...] = ()

    def all_containers(self) -> Iterator[Container]:
        """Init containers first, then app containers, in spec order (admission order)."""
        yield from self.init_containers
        yield from self.containers

    def container(self, name: str) -> Container:
        for container in self.all_containers():
            if container.name == name:
                return container
        msg = f"pod {self.display_name} has no container {name!r}"
        raise KeyError(msg)

    def key(self, container_name: str) -> ContainerKey:
        return ContainerKey(self.uid, ContainerName(container_name))

    @property
    def display_name(self) -> str:
        return f"{self.namespace}/{self.name}" if self.name else str(self.uid)


def qos_class(pod: Pod) -> QoSClass:
    """The kubelet's QoS class of a pod."""
    requests: dict[str, Fraction] = {}
    limits: dict[str, Fraction] = {}
    guaranteed = True
    for container in pod.all_containers():
        for name in _QOS_RESOURCES:
            amount = container.requests.get(name, Fraction(0))
            if amount > 0:
                requests[name] = requests.get(name, Fraction(0)) + amount
        found = set()
        for name in _QOS_RESOURCES:
            amount = container.limits.get(name, Fraction(0))
            if amount > 0:
                found.add(name)
                limits[name] = limits.get(name, Fraction(0)) + amount
        if len(found) != len(_QOS_RESOURCES):
            guaranteed = False
    if not requests and not limits:
        return QoSClass.BEST_EFFORT
    if guaranteed:
        for name, amount in requests.items():
            if limits.get(name) != amount:
                guaranteed = False
                break
    if guaranteed and len(requests) == len(limits):
        return QoSClass.GUARANTEED
    return QoSClass.BURSTABLE


def _integral_cpus(container: Container) -> int:
    cpu = container.request("cpu")
    whole = value(cpu)
    if whole * 1000 != milli_value(cpu):
        return 0
    return whole


def guaranteed_cpus(pod: Pod, container: Container) -> int:
    """Exclusive CPUs the static policy gives this container (0 = shared pool)."""
    if qos_class(pod) is not QoSClass.GUARANTEED:
        return 0
    return _integral_cpus(container)


def pod_guaranteed_cpus(pod: Pod) -> int:
    """CPUs the pod needs at its peak (pod-scope hints), sidecars counted throughout."""
    if qos_class(pod) is not QoSClass.GUARANTEED:
        return 0
    sidecars = 0
    init_peak = 0
    for container in pod.init_containers:
        if "cpu" not in container.requests:
            continue
        cpus = _integral_cpus(container)
        if container.kind is ContainerKind.SIDECAR:
            sidecars += cpus
        else:
            init_peak = max(init_peak, sidecars + cpus)
    apps = sum(_integral_cpus(c) for c in pod.containers if "cpu" in c.requests)
    return max(init_peak, apps + sidecars)
