"""Hint providers for the topology manager: CPUs, devices, memory.

Each provider answers hints for a container (or a pod, in pod scope) and allocates with the
hint the topology manager stored. Device and memory state are pure immutable values kept
here; every change replaces the value. Past ``IMPLICIT_AFTER`` NUMA nodes
(``core/hints/limits.py``) the CPU, device and memory providers answer with hint *rules*
instead of lists, which the fast merge searches without enumerating 2^N masks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from cpumanager.core.cpuset import CPUSet
from cpumanager.core.devices import (
    DeviceState,
    allocate_devices,
    container_device_requests,
    device_capacity,
    device_hints,
    pod_device_requests,
    release_pod_devices,
)
from cpumanager.core.hints.hint import TopologyHint
from cpumanager.core.hints.source import is_hint_source
from cpumanager.core.ids import ContainerKey, ContainerName, PodUID
from cpumanager.core.memory import (
    MemoryState,
    allocate_memory,
    memory_hints,
    release_started_init_containers,
    remove_container_memory,
)
from cpumanager.core.merge.exact import AnyProviderHints
from cpumanager.core.workload import Container, Pod
from cpumanager.manager.cpu_manager import CPUManager

__all__ = ["CPUProvider", "DeviceProvider", "MemoryProvider"]

Affinity = Callable[[PodUID, ContainerName], TopologyHint]


def _rules(hints: AnyProviderHints) -> dict[str, object]:
    """Only the capacity rules of a provider's answer (explicit lists carry no numbers)."""
    if not hints:
        return {}
    return {name: value for name, value in hints.items() if is_hint_source(value)}


class CPUProvider:
    """The CPU manager as a hint provider."""

    provider_name = "cpu"

    def __init__(self, manager: CPUManager, *, implicit: bool = False) -> None:
        self.manager = manager
        self.implicit = implicit

    def topology_hints(self, pod: Pod, container: Container) -> AnyProviderHints:
        if self.implicit:
            return self.manager.topology_hint_sources(pod, container)
        return self.manager.topology_hints(pod, container)

    def pod_topology_hints(self, pod: Pod) -> AnyProviderHints:
        if self.implicit:
            return self.manager.pod_topology_hint_sources(pod)
        return self.manager.pod_topology_hints(pod)

    def allocate(self, pod: Pod, container: Container) -> CPUSet:
        return self.manager.allocate(pod, container)

    def hint_details(self, pod: Pod, container: Container) -> Mapping[str, object]:
        """The CPU hints as a capacity rule, for numbers in explanations only."""
        return _rules(self.manager.topology_hint_sources(pod, container))

    def pod_hint_details(self, pod: Pod) -> Mapping[str, object]:
        return _rules(self.manager.pod_topology_hint_sources(pod))

    def retain(self, active: Iterable[PodUID]) -> None:
        """CPUs are released by the CPU manager's own stale-state removal."""


class DeviceProvider:
    """Devices with NUMA affinity, as the kubelet's device manager hands them out."""

    provider_name = "devices"

    def __init__(self, state: DeviceState, affinity: Affinity, *, implicit: bool = False) -> None:
        self.state = state
        self._affinity = affinity
        self.implicit = implicit

    def topology_hints(self, pod: Pod, container: Container) -> AnyProviderHints:
        return device_hints(self.state, pod, container, implicit=self.implicit)

    def pod_topology_hints(self, pod: Pod) -> AnyProviderHints:
        return device_hints(self.state, pod, None, implicit=self.implicit)

    def hint_details(self, pod: Pod, container: Container) -> Mapping[str, object]:
        """Need and free devices per node for each requested resource (explanations only)."""
        return {
            resource: device_capacity(self.state, resource, requested)
            for resource, requested in container_device_requests(self.state, container).items()
            if self.state.has_topology(resource)
        }

    def pod_hint_details(self, pod: Pod) -> Mapping[str, object]:
        return {
            resource: device_capacity(self.state, resource, requested)
            for resource, requested in pod_device_requests(self.state, pod).items()
            if self.state.has_topology(resource)
        }

    def allocate(self, pod: Pod, container: Container) -> Mapping[str, tuple[str, ...]]:
        result = allocate_devices(
            self.state, pod, container, self._affinity(pod.uid, container.name)
        )
        self.state = result.state
        return result.devices

    def held(self, pod: Pod, container: Container) -> dict[str, tuple[str, ...]]:
        key = pod.key(container.name)
        return {
            resource: tuple(sorted(self.state.container_devices(key, resource)))
            for resource in self.state.devices
            if self.state.container_devices(key, resource)
        }

    def retain(self, active: Iterable[PodUID]) -> None:
        """Free devices of pods that are no longer active (kubelet: UpdateAllocatedDevices)."""
        keep = set(active)
        for pod_uid in {key.pod_uid for key in self.state.allocations}:
            if pod_uid not in keep:
                self.state = release_pod_devices(self.state, pod_uid)


class MemoryProvider:
    """Memory and hugepages per NUMA node, as the kubelet's static memory manager."""

    provider_name = "memory"

    def __init__(
        self,
        state: MemoryState,
        affinity: Affinity,
        *,
        implicit: bool = False,
        pod_level_resources: bool = True,
        active: Callable[[], Iterable[PodUID]] | None = None,
    ) -> None:
        self.state = state
        self._affinity = affinity
        self.implicit = implicit
        self.pod_level_resources = pod_level_resources  # the PodLevelResources gate
        self.active = active

    def _remove_stale_state(self) -> None:
        """The kubelet memory manager's ``removeStaleState``, which its GetTopologyHints,
        GetPodTopologyHints and Allocate run first (so not at all when an earlier provider
        fails the pod before the memory manager is asked)."""
        if self.active is not None:
            self.retain(self.active())

    def topology_hints(self, pod: Pod, container: Container) -> AnyProviderHints:
        self._remove_stale_state()
        gate = self.pod_level_resources
        return memory_hints(
            self.state, pod, container, implicit=self.implicit, pod_level_resources=gate
        )

    def pod_topology_hints(self, pod: Pod) -> AnyProviderHints:
        self._remove_stale_state()
        gate = self.pod_level_resources
        return memory_hints(self.state, pod, None, implicit=self.implicit, pod_level_resources=gate)

    def hint_details(self, pod: Pod, container: Container) -> Mapping[str, object]:
        """Nothing to add: memory explanations come from the hints themselves."""
        return {}

    def pod_hint_details(self, pod: Pod) -> Mapping[str, object]:
        return {}

    def allocate(self, pod: Pod, container: Container) -> object:
        self._remove_stale_state()
        result = allocate_memory(
            self.state,
            pod,
            container,
            self._affinity(pod.uid, container.name),
            pod_level_resources=self.pod_level_resources,
        )
        self.state = result.state
        return result.blocks

    def held_nodes(self, pod: Pod, container: Container) -> tuple[int, ...]:
        blocks = self.state.blocks.get(pod.key(container.name), ())
        return tuple(sorted({node for block in blocks for node in block.numa_affinity}))

    def container_started(self, pod: Pod, container: Container) -> None:
        """The regular init containers before ``container`` have finished: free their memory
        (the kubelet memory manager's ``AddContainer``)."""
        self.state = release_started_init_containers(self.state, pod, container)

    def remove_container(self, key: ContainerKey) -> None:
        """The kubelet memory manager's ``RemoveContainer``: the container's memory is free."""
        self.state = remove_container_memory(self.state, key)

    def retain(self, active: Iterable[PodUID]) -> None:
        """Release memory of containers whose pods are no longer active."""
        keep = set(active)
        for key in list(self.state.blocks):
            if key.pod_uid not in keep:
                self.state = remove_container_memory(self.state, key)
