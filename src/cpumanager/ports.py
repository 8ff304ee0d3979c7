"""Ports: the whole effect surface of the manager, as Protocols.

Each port has one to three methods and at least one in-memory implementation, so the
manager, the simulator and the tests run the same code with no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

from cpumanager.core.containermap import ContainerMap
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.events import ManagerEvent
from cpumanager.core.ids import ContainerID
from cpumanager.core.merge.exact import AnyProviderHints
from cpumanager.core.reconcile import ContainerStatus
from cpumanager.core.state import StateSnapshot
from cpumanager.core.workload import Container, Pod

__all__ = [
    "NULL_OBSERVER",
    "Clock",
    "HintProvider",
    "Observer",
    "PodSource",
    "Runtime",
    "StateStore",
]


class StateStore(Protocol):
    """Where the manager's state lives between runs (kubelet: cpu_manager_state)."""

    def load(self, policy_name: str, container_map: ContainerMap) -> StateSnapshot | None:
        """The stored state (V1 migrated through ``container_map``), or None if there is none.

        Raises a CheckpointError when the stored state cannot be used; never deletes it.
        """
        ...

    def save(self, snapshot: StateSnapshot) -> None:
        """Persist atomically; raise StoreError on failure (the caller keeps the old state)."""
        ...


class Runtime(Protocol):
    """Applies cpusets to running containers."""

    def apply(self, container_id: ContainerID, cpus: CPUSet) -> None: ...


class PodSource(Protocol):
    """The pods the node should run and what the runtime says about their containers."""

    def active_pods(self) -> Sequence[Pod]: ...

    def statuses(self) -> Sequence[ContainerStatus]: ...

    def ready(self) -> bool:
        """All pod sources have been seen at least once (kubelet's sourcesReady)."""
        ...


@runtime_checkable
class HintProvider(Protocol):
    """A resource manager the topology manager consults (CPU, memory, devices).

    The kubelet's ``topologymanager.HintProvider``: hints for a container or for a whole
    pod, then allocation with the affinity the topology manager stored. The two
    ``*_hint_details`` methods are ours: capacity rules (need and free per NUMA node) behind
    an explicit hint list, asked only to explain a rejected or widened merge; they never
    change a decision, and a provider with nothing to add answers an empty mapping.
    """

    @property
    def provider_name(self) -> str: ...

    def topology_hints(self, pod: Pod, container: Container) -> AnyProviderHints:
        """The kubelet's GetTopologyHints (container scope)."""
        ...

    def pod_topology_hints(self, pod: Pod) -> AnyProviderHints:
        """The kubelet's GetPodTopologyHints (pod scope)."""
        ...

    def hint_details(self, pod: Pod, container: Container) -> Mapping[str, object]:
        """Capacity rules behind this container's hints, by resource (explanations only)."""
        ...

    def pod_hint_details(self, pod: Pod) -> Mapping[str, object]:
        """Capacity rules behind the pod's hints, by resource (explanations only)."""
        ...

    def allocate(self, pod: Pod, container: Container) -> object:
        """The kubelet's Allocate: take resources for ``container`` under its stored hint."""
        ...


class Clock(Protocol):
    def monotonic(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


class Observer(Protocol):
    def notify(self, event: ManagerEvent) -> None: ...


class _NullObserver:
    def notify(self, event: ManagerEvent) -> None:
        """Drop the event."""


NULL_OBSERVER: Observer = _NullObserver()
