"""The policy contract the manager drives (none and static implement it).

Policies are pure: every call takes the current StateSnapshot (and the init-container reuse
value) and returns new values; the manager persists and publishes them. This replaces the
kubelet's in-place ``State`` mutation and its hidden ``cpusToReuse`` map.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.hints.hint import ProviderHints
from cpumanager.core.ids import ContainerName, PodUID
from cpumanager.core.state import StateSnapshot
from cpumanager.core.workload import Container, Pod

__all__ = ["Allocation", "Policy", "Removal", "ReusableCPUs"]


@dataclass(frozen=True, slots=True)
class ReusableCPUs:
    """The kubelet's ``cpusToReuse``: CPUs of a pod's finished init containers.

    Only one pod is tracked at a time: touching another pod drops the previous one.
    """

    pod_uid: PodUID | None = None
    cpus: CPUSet = field(default_factory=CPUSet)

    def for_pod(self, pod_uid: PodUID) -> CPUSet:
        return self.cpus if self.pod_uid == pod_uid else CPUSet()


@dataclass(frozen=True, slots=True)
class Allocation:
    """The outcome of one allocate call: the container's CPUs and the values to commit."""

    cpus: CPUSet
    snapshot: StateSnapshot
    reuse: ReusableCPUs
    trace: tuple[str, ...] = ()
    newly_exclusive: CPUSet = field(default_factory=CPUSet)
    reused_existing: bool = False


@dataclass(frozen=True, slots=True)
class Removal:
    """The outcome of one remove call: the new snapshot and the CPUs given back."""

    snapshot: StateSnapshot
    released: CPUSet
    returned_to_default: CPUSet


class Policy(Protocol):
    """What the CPU manager needs from a policy."""

    @property
    def name(self) -> str: ...

    @property
    def reserved_cpus(self) -> CPUSet: ...

    def allocatable_cpus(self) -> CPUSet: ...

    def start(self, snapshot: StateSnapshot) -> StateSnapshot:
        """Validate a restored snapshot, or initialise a fresh one; raise on mismatch."""
        ...

    def allocate(
        self,
        snapshot: StateSnapshot,
        reuse: ReusableCPUs,
        pod: Pod,
        container: Container,
        hint: NUMAMask | None,
    ) -> Allocation: ...

    def remove(
        self, snapshot: StateSnapshot, pod_uid: PodUID, container_name: ContainerName
    ) -> Removal: ...

    def container_hints(
        self, snapshot: StateSnapshot, reuse: ReusableCPUs, pod: Pod, container: Container
    ) -> ProviderHints: ...

    def pod_hints(
        self, snapshot: StateSnapshot, reuse: ReusableCPUs, pod: Pod
    ) -> ProviderHints: ...
