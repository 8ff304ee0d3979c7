"""Node: the CPU manager, the topology manager and the other hint providers, wired as the
kubelet's container manager wires them, from a KubeletConfiguration.

Construction validates the configuration in the kubelet's order (CPU manager policy and
options, reservation, topology manager policy / scope / options and NUMA limit, memory
manager) and fails with the kubelet's error meaning. Providers are registered in the
kubelet's order: CPU manager, memory manager, device manager.

The PodLevelResources gate (beta, on by default in 1.34) reaches the static CPU policy and
the memory provider as a flag; with it off, a pod with pod-level resources is refused after
the resource managers have admitted it (the kubelet's pod-features admit handler comes after
the resource-allocation one), with reason ``PodLevelResourcesNotSupported``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from cpumanager.core.allocation.options import StaticPolicyOptions
from cpumanager.core.hints.device_hints import Device, DeviceState
from cpumanager.core.hints.memory_hints import MemoryState
from cpumanager.core.ids import ContainerID, ContainerName, PodUID
from cpumanager.core.merge.options import build_topology_manager_config
from cpumanager.core.policy.base import Policy
from cpumanager.core.policy.none import NonePolicy
from cpumanager.core.policy.static import StaticPolicy
from cpumanager.core.topology import CPUTopology
from cpumanager.core.workload import Container, Pod, pod_level_resources_set
from cpumanager.errors import ConfigError
from cpumanager.formats.kubelet_config import KubeletConfig, reserved_memory_per_node
from cpumanager.manager.cpu_manager import CPUManager
from cpumanager.manager.providers import (
    IMPLICIT_AFTER,
    CPUProvider,
    DeviceProvider,
    MemoryProvider,
)
from cpumanager.manager.topology_manager import AdmissionResult, HintProvider, TopologyManager
from cpumanager.ports import NULL_OBSERVER, Observer, StateStore

__all__ = ["Node", "NodeResources", "build_cpu_policy", "pod_features_check"]

# The kubelet's PodLevelResourcesNotAdmittedReason and its message (pkg/kubelet/lifecycle).
POD_LEVEL_RESOURCES_REASON = "PodLevelResourcesNotSupported"
POD_LEVEL_RESOURCES_MESSAGE = "PodLevelResources feature gate is disabled"


@dataclass(frozen=True, slots=True)
class NodeResources:
    """Devices per resource and the memory manager's machine state (both optional)."""

    devices: dict[str, tuple[Device, ...]] = field(default_factory=dict)
    hugepages: dict[int, dict[str, int]] = field(default_factory=dict)
    memory: dict[int, int] | None = None  # bytes per NUMA node; default: the machine's


def build_cpu_policy(topology: CPUTopology, kubelet: KubeletConfig) -> Policy:
    """The CPU manager policy the kubelet would build from this configuration."""
    if kubelet.cpu_manager_policy == "none":
        if kubelet.cpu_manager_policy_options:
            msg = "None policy: received unsupported options; remove cpuManagerPolicyOptions"
            raise ConfigError(msg)
        return NonePolicy(topology)
    if kubelet.cpu_manager_policy != "static":
        msg = f'unknown policy: "{kubelet.cpu_manager_policy}"; use "none" or "static"'
        raise ConfigError(msg)
    kubelet.check_reserved_cpus_on(topology.all_cpus)
    options = StaticPolicyOptions.parse(
        kubelet.cpu_manager_policy_options,
        alpha_enabled=kubelet.feature_gate("CPUManagerPolicyAlphaOptions", default=False),
        beta_enabled=kubelet.feature_gate("CPUManagerPolicyBetaOptions", default=True),
    )
    return StaticPolicy(
        topology,
        options=options,
        num_reserved_cpus=kubelet.num_reserved_cpus,
        reserved_cpus=kubelet.reserved_cpus,
        topology_manager_policy=kubelet.topology_manager_policy,
        pod_level_resources=kubelet.feature_gate("PodLevelResources", default=True),
    )


def pod_features_check(kubelet: KubeletConfig) -> Callable[[Pod], tuple[str, str] | None]:
    """The kubelet's pod-features admit handler: pod-level resources need the gate."""
    enabled = kubelet.feature_gate("PodLevelResources", default=True)

    def check(pod: Pod) -> tuple[str, str] | None:
        if not enabled and pod_level_resources_set(pod):
            return POD_LEVEL_RESOURCES_REASON, POD_LEVEL_RESOURCES_MESSAGE
        return None

    return check


class Node:
    """One node's resource managers, admitting pods the kubelet's way."""

    def __init__(
        self,
        *,
        topology: CPUTopology,
        kubelet: KubeletConfig,
        store: StateStore,
        resources: NodeResources | None = None,
        observer: Observer = NULL_OBSERVER,
        clock: Callable[[], float] | None = None,
        device_state: DeviceState | None = None,
        memory_state: MemoryState | None = None,
    ) -> None:
        resources = resources or NodeResources()
        self.topology = topology
        self.kubelet = kubelet
        policy = build_cpu_policy(topology, kubelet)
        numa_ids = topology.numa_ids()
        distances = {node.id: dict(node.distances) for node in topology.numa_nodes}
        have_distances = topology.has_distances()
        config = build_topology_manager_config(
            policy=kubelet.topology_manager_policy,
            scope=kubelet.topology_manager_scope,
            options=kubelet.topology_manager_policy_options,
            numa_nodes=numa_ids,
            distances=distances if have_distances else None,
            feature_gates=kubelet.feature_gates,
        )
        implicit = len(topology.cpu_numa_ids()) > IMPLICIT_AFTER
        self.topology_manager = TopologyManager(
            config=config,
            numa_ids=numa_ids,
            distances=distances if have_distances else None,
            observer=observer,
            clock=clock,
            later_checks=(pod_features_check(kubelet),),
        )
        self.cpu_manager = CPUManager(
            policy=policy,
            store=store,
            all_cpus=topology.all_cpus,
            observer=observer,
            affinity=self.topology_manager.affinity_mask,
        )
        self.cpu_provider = CPUProvider(self.cpu_manager, implicit=implicit)
        self.memory_provider: MemoryProvider | None = None
        self.device_provider: DeviceProvider | None = None
        providers: list[HintProvider] = [self.cpu_provider]
        if kubelet.memory_manager_policy == "Static":
            if memory_state is None:
                reserved = reserved_memory_per_node(kubelet, numa_ids)
                if resources.memory is not None:
                    memory_state = MemoryState.create(
                        resources.memory, hugepages=resources.hugepages, system_reserved=reserved
                    )
                else:
                    memory_state = MemoryState.from_topology(
                        topology, hugepages=resources.hugepages, system_reserved=reserved
                    )
            self.memory_provider = MemoryProvider(
                memory_state,
                self.topology_manager.get_affinity,
                implicit=len(memory_state.nodes) > IMPLICIT_AFTER,
                pod_level_resources=kubelet.feature_gate("PodLevelResources", default=True),
            )
            providers.append(self.memory_provider)
        if resources.devices or device_state is not None:
            if device_state is None:
                device_state = DeviceState.create(numa_ids, resources.devices)
            # Device hints range over every NUMA node (CPU-less ones included), so the
            # switch to rules depends on all nodes, not only those with CPUs.
            self.device_provider = DeviceProvider(
                device_state,
                self.topology_manager.get_affinity,
                implicit=len(numa_ids) > IMPLICIT_AFTER,
            )
            providers.append(self.device_provider)
        for provider in providers:
            self.topology_manager.add_provider(provider)
        self._providers = providers

    def start(
        self,
        *,
        active_pods: Callable[[], Sequence[Pod]],
        running_containers: Iterable[tuple[ContainerID, PodUID, ContainerName]] = (),
        recover: bool = False,
    ) -> None:
        self._active_pods = active_pods
        self.cpu_manager.start(
            active_pods=active_pods,
            sources_ready=lambda: True,
            running_containers=running_containers,
            recover=recover,
        )
        self.retain_active()

    def container_started(self, pod: Pod, container: Container, container_id: ContainerID) -> None:
        """The kubelet's PreStartContainer: record the container id; finished init containers
        give their memory back."""
        self.cpu_manager.add_container(pod, container, container_id)
        if self.memory_provider is not None:
            self.memory_provider.container_started(pod, container)

    def retain_active(self) -> None:
        """Free device and memory holdings of pods that are no longer active."""
        active = [pod.uid for pod in self._active_pods()]
        if self.device_provider is not None:
            self.device_provider.retain(active)
        if self.memory_provider is not None:
            self.memory_provider.retain(active)

    def admit(self, pod: Pod) -> AdmissionResult:
        """The kubelet's admission of one pod (hints, merge, allocation by every provider)."""
        self.retain_active()
        return self.topology_manager.admit(pod)
