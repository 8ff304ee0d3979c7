"""Ports: the whole effect surface of the manager, as Protocols.

Each port has one to three methods and at least one in-memory implementation, so the
manager, the simulator and the tests run the same code with no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from cpumanager.core.containermap import ContainerMap
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.events import ManagerEvent
from cpumanager.core.ids import ContainerID
from cpumanager.core.reconcile import ContainerStatus
from cpumanager.core.state import StateSnapshot
from cpumanager.core.workload import Pod

__all__ = ["Clock", "NULL_OBSERVER", "Observer", "PodSource", "Runtime", "StateStore"]


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


class Clock(Protocol):
    def monotonic(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


class Observer(Protocol):
    def notify(self, event: ManagerEvent) -> None: ...


class _NullObserver:
    def notify(self, event: ManagerEvent) -> None:
        """Drop the event."""


NULL_OBSERVER: Observer = _NullObserver()
