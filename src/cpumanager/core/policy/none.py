"""The none policy: no exclusive CPUs, no hints; every container runs on every CPU.

The kubelet's none policy keeps an empty state and answers "no preference" to the topology
manager. Its state validation checks nothing.
"""

from __future__ import annotations

from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.hints.hint import ProviderHints
from cpumanager.core.ids import ContainerName, PodUID
from cpumanager.core.policy.base import Allocation, Removal, ReusableCPUs
from cpumanager.core.state import StateSnapshot
from cpumanager.core.topology import CPUTopology
from cpumanager.core.workload import Container, Pod, guaranteed_cpus

__all__ = ["NonePolicy"]


class NonePolicy:
    """Decides nothing: containers share every CPU of the machine."""

    __slots__ = ("topology",)

    def __init__(self, topology: CPUTopology) -> None:
        self.topology = topology

    @property
    def name(self) -> str:
        return "none"

    @property
    def reserved_cpus(self) -> CPUSet:
        return CPUSet()

    @property
    def strict_reservation(self) -> bool:
        return False

    def guaranteed_cpus(self, pod: Pod, container: Container) -> int:
        """What the static policy would pin; counted only to report failed pinning."""
        return guaranteed_cpus(pod, container)

    def allocatable_cpus(self) -> CPUSet:
        """Nothing is allocatable exclusively (the kubelet's none policy answers empty)."""
        return CPUSet()

    def start(self, snapshot: StateSnapshot) -> StateSnapshot:
        return snapshot

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
        return Allocation(
            cpus=self.topology.all_cpus,
            snapshot=snapshot,
            reuse=reuse,
            trace=("none policy: every container shares all CPUs",),
        )

    def remove(
        self, snapshot: StateSnapshot, pod_uid: PodUID, container_name: ContainerName
    ) -> Removal:
        return Removal(snapshot=snapshot, released=CPUSet(), returned_to_default=CPUSet())

    def container_hints(
        self, snapshot: StateSnapshot, reuse: ReusableCPUs, pod: Pod, container: Container
    ) -> ProviderHints:
        return {}

    def pod_hints(self, snapshot: StateSnapshot, reuse: ReusableCPUs, pod: Pod) -> ProviderHints:
        return {}

    def container_hint_sources(
        self, snapshot: StateSnapshot, reuse: ReusableCPUs, pod: Pod, container: Container
    ) -> ProviderHints:
        return {}

    def pod_hint_sources(
        self, snapshot: StateSnapshot, reuse: ReusableCPUs, pod: Pod
    ) -> ProviderHints:
        return {}
