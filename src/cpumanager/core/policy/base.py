"""The policy contract the manager drives (none and static implement it).

Policies are pure: every call takes the current StateSnapshot (and the init-container reuse
value) and returns new values; the manager persists and publishes them. This replaces the
kubelet's in-place ``State`` mutation and its hidden ``cpusToReuse`` map.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.hints.hint import ProviderHints
from cpumanager.core.ids import ContainerName, PodUID
from cpumanager.core.merge.exact import AnyResourceHints
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
        return self.cpus if self.pod_uid == pod_uid else _NONE


_NONE = CPUSet()  # CPUSets are immutable: one empty set serves every pod without reuse


@dataclass(frozen=True, slots=True)
class Allocation:
    """The outcome of one allocate call: the container's CPUs and the values to commit."""

    cpus: CPUSet
    snapshot: StateSnapshot
    reuse: ReusableCPUs
    trace: tuple[str, ...] = ()  # empty when the caller asked for no explanation
    newly_exclusive: CPUSet = field(default_factory=CPUSet)
    reused_existing: bool = False


@dataclass(frozen=True, slots=True)
class Removal:
    """The outcome of one remove call: the new snapshot and the CPUs given back."""

    snapshot: StateSnapshot
    released: CPUSet
    returned_to_default: CPUSet


@runtime_checkable
class Policy(Protocol):
    """Everything the CPU manager asks of a policy; every policy implements all of it."""

    @property
    def name(self) -> str: ...

    @property
    def reserved_cpus(self) -> CPUSet: ...

    @property
    def strict_reservation(self) -> bool:
        """strict-cpu-reservation is on: reserved CPUs leave the shared pool too (repair
        needs to know, since the default set may then be empty)."""
        ...

    def guaranteed_cpus(self, pod: Pod, container: Container) -> int:
        """The exclusive CPUs this policy would give ``container`` (0: shared pool)."""
        ...

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
        *,
        explain: bool = True,
    ) -> Allocation:
        """Decide ``container``'s CPUs; ``explain=False`` leaves the trace empty (nobody
        will read it), the decision is the same."""
        ...

    def remove(
        self, snapshot: StateSnapshot, pod_uid: PodUID, container_name: ContainerName
    ) -> Removal: ...

    def container_hints(
        self, snapshot: StateSnapshot, reuse: ReusableCPUs, pod: Pod, container: Container
    ) -> ProviderHints: ...

    def pod_hints(
        self, snapshot: StateSnapshot, reuse: ReusableCPUs, pod: Pod
    ) -> ProviderHints: ...

    def container_hint_sources(
        self, snapshot: StateSnapshot, reuse: ReusableCPUs, pod: Pod, container: Container
    ) -> Mapping[str, AnyResourceHints]:
        """The same hints as :meth:`container_hints`, possibly as rules the fast merge
        searches (past a handful of NUMA nodes, listing every mask is out of reach)."""
        ...

    def pod_hint_sources(
        self, snapshot: StateSnapshot, reuse: ReusableCPUs, pod: Pod
    ) -> Mapping[str, AnyResourceHints]:
        """The same hints as :meth:`pod_hints`, possibly as rules."""
        ...
