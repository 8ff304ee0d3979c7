"""Manager events: what happened, as data.

The manager reports every decision through an Observer port; the simulator keeps the events
in its report, the agent logs them, and the metrics adapter turns them into the kubelet's
Prometheus series. Nothing here does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cpumanager.core.cpuset import CPUSet
from cpumanager.core.ids import ContainerName, PodUID

__all__ = [
    "Admitted",
    "Allocated",
    "ManagerEvent",
    "PinningFailed",
    "Reconciled",
    "Rejected",
    "Released",
    "Started",
    "StateRepaired",
]


@dataclass(frozen=True, slots=True)
class Started:
    """The manager restored (or created) its state."""

    policy_name: str
    default_cpuset: CPUSet
    allocatable: CPUSet
    reserved: CPUSet
    exclusive: CPUSet
    source: str  # "new", "checkpoint-v2", "checkpoint-v1-migrated", "memory"


@dataclass(frozen=True, slots=True)
class Allocated:
    """A container received exclusive CPUs (``reused`` when it already had them)."""

    pod_uid: PodUID
    container_name: ContainerName
    cpus: CPUSet
    newly_exclusive: CPUSet
    reused: bool = False
    trace: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PinningFailed:
    """An exclusive allocation failed (counts as a pinning error)."""

    pod_uid: PodUID
    container_name: ContainerName
    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class Released:
    """A container's exclusive CPUs went back to the shared pool.

    ``reason`` is "removed" (the kubelet removed the container) or "stale" (its pod is no
    longer active: deleted, or exited while the manager was down).
    """

    pod_uid: PodUID
    container_name: ContainerName
    cpus: CPUSet
    returned: CPUSet
    reason: str


@dataclass(frozen=True, slots=True)
class StateRepaired:
    """Recovery mode changed the restored state instead of refusing to start."""

    description: str
    pod_uid: PodUID | None = None
    container_name: ContainerName | None = None
    cpus: CPUSet = field(default_factory=CPUSet)


@dataclass(frozen=True, slots=True)
class Admitted:
    """The topology manager admitted a pod."""

    pod_uid: PodUID
    pod_name: str
    duration_s: float = 0.0


@dataclass(frozen=True, slots=True)
class Rejected:
    """The topology manager (or an allocation) rejected a pod."""

    pod_uid: PodUID
    pod_name: str
    reason: str
    message: str
    duration_s: float = 0.0


@dataclass(frozen=True, slots=True)
class Reconciled:
    """One reconcile pass: containers updated, already up to date, and failures."""

    updated: tuple[tuple[PodUID, ContainerName, CPUSet], ...]
    unchanged: tuple[tuple[PodUID, ContainerName], ...]
    failed: tuple[tuple[PodUID, ContainerName, str], ...]


ManagerEvent = (
    Started
    | Allocated
    | PinningFailed
    | Released
    | StateRepaired
    | Admitted
    | Rejected
    | Reconciled
)
