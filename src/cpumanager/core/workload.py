"""Pods and containers as the CPU manager sees them.

Resources are exact quantities (``Fraction``) keyed by resource name (``cpu``, ``memory``,
``nvidia.com/gpu``, ``hugepages-2Mi`` ...). The QoS class is computed as the kubelet does
(sums over init and app containers of non-zero cpu/memory requests and limits), and
``guaranteed_cpus`` is the kubelet's exclusive-CPU rule: a Guaranteed pod and an integral
CPU request.

Pod-level resources (``spec.resources``, KEP-2837; the PodLevelResources gate, beta and on
by default in 1.34) are kept on the pod. With the gate on and ``spec.resources`` given, the
QoS class comes from the pod-level values alone (kubelet 1.34 ``ComputePodQOS``), and
:func:`pod_level_resources_set` is the kubelet's ``IsPodLevelResourcesSet``: a request or
limit for a supported pod-level resource (cpu, memory, ``hugepages-*``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from fractions import Fraction
from types import MappingProxyType
from typing import cast

from cpumanager.core.ids import ContainerKey, ContainerName, PodUID
from cpumanager.core.quantity import milli_value, value

__all__ = [
    "Container",
    "ContainerKind",
    "Pod",
    "QoSClass",
    "aggregate_container_limits",
    "aggregate_container_requests",
    "container_names",
    "guaranteed_cpus",
    "is_supported_pod_level_resource",
    "pod_guaranteed_cpus",
    "pod_level_resources_set",
    "qos_class",
]

_QOS_RESOURCES = ("cpu", "memory")
# Pod-level resources the 1.34 API accepts (component-helpers IsSupportedPodLevelResource).
_POD_LEVEL_RESOURCES = ("cpu", "memory")
_HUGEPAGES_PREFIX = "hugepages-"


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
    """A pod: identity, init containers and app containers (in order), and the pod-level
    ``spec.resources`` requests and limits.

    ``resources_given`` records that ``spec.resources`` is present at all: the kubelet's
    QoS reads pod-level values whenever the field is non-nil, even when it is empty. It is
    forced on when any pod-level request or limit is given. ``overhead`` is ``spec.overhead``
    (set from the RuntimeClass at admission): the fit predicate adds it to the pod's
    requests; QoS and the resource managers never read it.
    """

    uid: PodUID
    name: str = ""
    namespace: str = "default"
    init_containers: tuple[Container, ...] = ()
    containers: tuple[Container, ...] = ()
    requests: Mapping[str, Fraction] = field(default_factory=lambda: MappingProxyType({}))
    limits: Mapping[str, Fraction] = field(default_factory=lambda: MappingProxyType({}))
    resources_given: bool = False
    overhead: Mapping[str, Fraction] = field(default_factory=lambda: MappingProxyType({}))
    # Answers of the pure functions below (QoS class, exclusive CPUs, aggregated requests,
    # container names), computed once per pod: admission asks them several times per
    # container. The fields they read are frozen, so an answer never goes stale;
    # ``replace`` starts a new memo.
    _memo: dict[object, object] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "requests", _frozen(self.requests))
        object.__setattr__(self, "limits", _frozen(self.limits))
        object.__setattr__(self, "overhead", _frozen(self.overhead))
        if self.requests or self.limits:
            object.__setattr__(self, "resources_given", True)

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


def container_names(pod: Pod) -> frozenset[ContainerName]:
    """Names of the pod's init and app containers (the stale-state check's "active")."""
    found = pod._memo.get("names")
    if found is None:
        found = pod._memo["names"] = frozenset(c.name for c in pod.all_containers())
    return cast(frozenset[ContainerName], found)


def is_supported_pod_level_resource(resource: str) -> bool:
    """The kubelet's IsSupportedPodLevelResource (1.34): cpu, memory and hugepages."""
    return resource in _POD_LEVEL_RESOURCES or resource.startswith(_HUGEPAGES_PREFIX)


def pod_level_resources_set(pod: Pod) -> bool:
    """The kubelet's IsPodLevelResourcesSet: a supported pod-level request or limit."""
    if not pod.requests and not pod.limits:
        return False
    return any(is_supported_pod_level_resource(name) for name in (*pod.requests, *pod.limits))


def _qos_sums(amounts: Mapping[str, Fraction], into: dict[str, Fraction]) -> set[str]:
    """Add the positive cpu/memory amounts to ``into``; the names found come back."""
    found = set()
    for name in _QOS_RESOURCES:
        amount = amounts.get(name, Fraction(0))
        if amount > 0:
            found.add(name)
            into[name] = into.get(name, Fraction(0)) + amount
    return found


def qos_class(pod: Pod, *, pod_level_resources: bool = True) -> QoSClass:
    """The kubelet's QoS class of a pod (``ComputePodQOS``).

    With the PodLevelResources gate on (``pod_level_resources``) and ``spec.resources``
    given, only the pod-level values count; otherwise the sums over every container.
    """
    key = ("qos", pod_level_resources)
    found = pod._memo.get(key)
    if found is None:
        found = pod._memo[key] = _qos_class(pod, pod_level_resources=pod_level_resources)
    return cast(QoSClass, found)


def _qos_class(pod: Pod, *, pod_level_resources: bool) -> QoSClass:
    requests: dict[str, Fraction] = {}
    limits: dict[str, Fraction] = {}
    guaranteed = True
    if pod_level_resources and pod.resources_given:
        _qos_sums(pod.requests, requests)
        if pod.limits and len(_qos_sums(pod.limits, limits)) != len(_QOS_RESOURCES):
            guaranteed = False
    else:
        for container in pod.all_containers():
            _qos_sums(container.requests, requests)
            if len(_qos_sums(container.limits, limits)) != len(_QOS_RESOURCES):
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


def _aggregate(
    pod: Pod, pick: Callable[[Container], Mapping[str, Fraction]]
) -> dict[str, Fraction]:
    """The effective pod total of one resource list (component-helpers aggregation):
    app containers and sidecars summed, then per resource the larger of that and the peak
    of any regular init container running beside the sidecars started before it."""
    total: dict[str, Fraction] = {}
    sidecars: dict[str, Fraction] = {}
    init_peak: dict[str, Fraction] = {}
    for container in pod.containers:
        for name, amount in pick(container).items():
            total[name] = total.get(name, Fraction(0)) + amount
    for container in pod.init_containers:
        own = pick(container)
        if container.kind is ContainerKind.SIDECAR:
            for name, amount in own.items():
                total[name] = total.get(name, Fraction(0)) + amount
                sidecars[name] = sidecars.get(name, Fraction(0)) + amount
            running = dict(sidecars)
        else:
            running = dict(own)
            for name, amount in sidecars.items():
                running[name] = running.get(name, Fraction(0)) + amount
        for name, amount in running.items():
            if name not in init_peak or amount > init_peak[name]:
                init_peak[name] = amount
    for name, amount in init_peak.items():
        if name not in total or amount > total[name]:
            total[name] = amount
    return total


def aggregate_container_requests(pod: Pod) -> dict[str, Fraction]:
    """The kubelet's AggregateContainerRequests (no status, no overhead); a new dict."""
    found = pod._memo.get("requests")
    if found is None:
        found = pod._memo["requests"] = _aggregate(pod, lambda container: container.requests)
    return dict(cast(dict[str, Fraction], found))


def aggregate_container_limits(pod: Pod) -> dict[str, Fraction]:
    """The kubelet's AggregateContainerLimits (no status, no overhead)."""
    return _aggregate(pod, lambda container: container.limits)


def _integral_cpus(container: Container) -> int:
    cpu = container.request("cpu")
    whole = value(cpu)
    if whole * 1000 != milli_value(cpu):
        return 0
    return whole


def guaranteed_cpus(pod: Pod, container: Container, *, pod_level_resources: bool = True) -> int:
    """The kubelet's guaranteedCPUs: an integral CPU request of a Guaranteed pod (else 0).

    The static policy still skips pods with pod-level resources (gate on); see
    ``StaticPolicy``.
    """
    key = ("cpus", pod_level_resources, container.name)
    found = pod._memo.get(key)
    if isinstance(found, tuple) and found[0] is container:
        return int(found[1])
    cpus = 0
    if qos_class(pod, pod_level_resources=pod_level_resources) is QoSClass.GUARANTEED:
        cpus = _integral_cpus(container)
    pod._memo[key] = (container, cpus)  # for this very container object only
    return cpus


def pod_guaranteed_cpus(pod: Pod, *, pod_level_resources: bool = True) -> int:
    """CPUs the pod needs at its peak (pod-scope hints), sidecars counted throughout."""
    if qos_class(pod, pod_level_resources=pod_level_resources) is not QoSClass.GUARANTEED:
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
