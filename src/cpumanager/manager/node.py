"""Node: the one surface drivers use (simulator, agent, ``run``), over the CPU manager, the
topology manager and the other hint providers, wired as the kubelet's container manager
wires them, from a KubeletConfiguration.

What a driver does with a node is what the kubelet does with its managers: ``start``
(restore and clean up), ``admit`` (the topology manager's admit handler),
``container_started`` (PreStartContainer), ``remove_pod`` (PostStopContainer and stale-state
removal, over CPUs, memory, devices and stored hints), ``remove_stale_state``, ``reconcile``
(one pass of the CPU manager's loop). ``placement`` says where a container runs;
``snapshot`` is the node's whole state as one immutable :class:`NodeState`, which ``stop``
hands over and a new ``Node(state=...)`` (a restart) takes back.

Construction validates the configuration in the kubelet's order (reserved CPUs online,
topology manager policy / scope / options and NUMA limit, CPU manager policy, options and
reservation, memory manager) and fails with the kubelet's error text (the static policy's
errors behind the kubelet's ``new static policy error: ``). Providers are registered in the
kubelet's order: CPU manager, memory manager, device manager. ``release`` (default: the
newest) selects one kubelet release's static policy option levels and allocation rules
(``core.versions``, keys ``option.*`` and ``alloc.*``).

The PodLevelResources gate (beta, on by default in 1.34) reaches the static CPU policy and
the memory provider as a flag; with it off, a pod with pod-level resources is refused after
the resource managers have admitted it (the kubelet's pod-features admit handler comes after
the resource-allocation one), with reason ``PodLevelResourcesNotSupported``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from cpumanager.core import versions
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.devices import Device, DeviceState
from cpumanager.core.hints.hint import TopologyHint
from cpumanager.core.hints.limits import IMPLICIT_AFTER
from cpumanager.core.ids import ContainerID, ContainerName, PodUID
from cpumanager.core.memory import MemoryState
from cpumanager.core.merge.options import build_topology_manager_config
from cpumanager.core.reconcile import ContainerStatus
from cpumanager.core.state import StateSnapshot
from cpumanager.core.topology import CPUTopology
from cpumanager.core.workload import Container, Pod, pod_level_resources_set
from cpumanager.formats.kubelet_config import KubeletConfig, reserved_memory_per_node
from cpumanager.manager.cpu_manager import CPUManager, ReconcileReport
from cpumanager.manager.policies import build_cpu_policy, topology_levels
from cpumanager.manager.providers import CPUProvider, DeviceProvider, MemoryProvider
from cpumanager.manager.topology_manager import AdmissionResult, TopologyManager
from cpumanager.ports import NULL_OBSERVER, HintProvider, Observer, Runtime, StateStore

__all__ = [
    "Node",
    "NodeResources",
    "NodeState",
    "Placement",
    "build_cpu_policy",
    "pod_features_check",
]

# The kubelet's PodLevelResourcesNotAdmittedReason and its message (pkg/kubelet/lifecycle).
POD_LEVEL_RESOURCES_REASON = "PodLevelResourcesNotSupported"
POD_LEVEL_RESOURCES_MESSAGE = "PodLevelResources feature gate is disabled"


@dataclass(frozen=True, slots=True)
class NodeResources:
    """Devices per resource and the memory manager's machine state (both optional)."""

    devices: dict[str, tuple[Device, ...]] = field(default_factory=dict)
    hugepages: dict[int, dict[str, int]] = field(default_factory=dict)
    memory: dict[int, int] | None = None  # bytes per NUMA node; default: the machine's


@dataclass(frozen=True, slots=True)
class NodeState:
    """A node's whole state, as immutable values: what ``stop`` returns, a restart takes.

    ``cpu`` is the CPU manager's state; a restarted node reads it back from its StateStore
    (the kubelet's cpu_manager_state), so a restart does not take it from here. ``memory``
    and ``devices`` (None when the node has no memory manager or no devices) survive a
    restart through this value: they stand for the memory and device managers' own
    checkpoints.
    """

    cpu: StateSnapshot
    memory: MemoryState | None = None
    devices: DeviceState | None = None


@dataclass(frozen=True, slots=True)
class Placement:
    """Where one container runs and what it holds."""

    cpus: CPUSet  # its exclusive CPUs, or the shared pool
    exclusive: bool
    hint: TopologyHint  # the affinity the topology manager stored (zero hint: none)
    memory_numa: tuple[int, ...] = ()  # NUMA nodes of its pinned memory
    devices: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # ids by resource


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
        state: NodeState | None = None,
        release: versions.Release | None = None,
    ) -> None:
        resources = resources or NodeResources()
        self.topology = topology
        self.kubelet = kubelet
        if kubelet.cpu_manager_policy == "static":
            kubelet.check_reserved_cpus_on(topology.all_cpus)  # the kubelet's server, first
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
            **topology_levels(kubelet, release),
        )
        # the kubelet builds the topology manager before the CPU manager
        policy = build_cpu_policy(topology, kubelet, release=release)
        implicit = len(topology.cpu_numa_ids()) > IMPLICIT_AFTER
        self._topology_manager = TopologyManager(
            config=config,
            numa_ids=numa_ids,
            distances=distances if have_distances else None,
            observer=observer,
            clock=clock,
            later_checks=(pod_features_check(kubelet),),
        )
        self._cpu_manager = CPUManager(
            policy=policy,
            store=store,
            all_cpus=topology.all_cpus,
            observer=observer,
            affinity=self._topology_manager.affinity_mask,
        )
        self._cpu_provider = CPUProvider(self._cpu_manager, implicit=implicit)
        providers: list[HintProvider] = [self._cpu_provider]
        self._memory: MemoryProvider | None = None
        self._devices: DeviceProvider | None = None
        memory_state = state.memory if state is not None else None
        if memory_state is not None:
            # a restarted kubelet's memory policy starts with no reusable init memory (it
            # lives in the process, not in memory_manager_state)
            memory_state = memory_state.without_reuse()
        device_state = state.devices if state is not None else None
        if kubelet.memory_manager_policy == "Static":
            if memory_state is None:
                sizes = resources.memory or {n.id: n.memory_bytes or 0 for n in topology.numa_nodes}
                reserved = reserved_memory_per_node(
                    kubelet, numa_ids, memory_capacity_bytes=sum(sizes.values())
                )
                if resources.memory is not None:
                    memory_state = MemoryState.create(
                        resources.memory, hugepages=resources.hugepages, system_reserved=reserved
                    )
                else:
                    memory_state = MemoryState.from_topology(
                        topology, hugepages=resources.hugepages, system_reserved=reserved
                    )
            self._memory = MemoryProvider(
                memory_state,
                self._topology_manager.get_affinity,
                # the listed hints past the limit too when a table wrapped (their sums wrap)
                implicit=len(memory_state.nodes) > IMPLICIT_AFTER and not memory_state.wraps(),
                pod_level_resources=kubelet.feature_gate("PodLevelResources", default=True),
                active=self._active_uids,
            )
            providers.append(self._memory)
        if resources.devices or device_state is not None:
            if device_state is None:
                device_state = DeviceState.create(numa_ids, resources.devices)
            # Device hints range over every NUMA node (CPU-less ones included), so the
            # switch to rules depends on all nodes, not only those with CPUs.
            self._devices = DeviceProvider(
                device_state,
                self._topology_manager.get_affinity,
                implicit=len(numa_ids) > IMPLICIT_AFTER,
            )
            providers.append(self._devices)
        for provider in providers:
            self._topology_manager.add_provider(provider)
        self._active_pods: Callable[[], Sequence[Pod]] = tuple
        self._stopped = False

    # --- lifecycle ----------------------------------------------------------------------

    def start(
        self,
        *,
        active_pods: Callable[[], Sequence[Pod]],
        running_containers: Iterable[tuple[ContainerID, PodUID, ContainerName]] = (),
        recover: bool = False,
    ) -> None:
        """Restore the CPU state from the store (see ``CPUManager.start``), then release
        everything held by pods that are not active."""
        self._check_running()
        self._active_pods = active_pods
        self._cpu_manager.start(
            active_pods=active_pods,
            sources_ready=lambda: True,
            running_containers=running_containers,
            recover=recover,
        )
        self._retain_active()

    def fork(
        self,
        *,
        store: StateStore,
        active_pods: Callable[[], Sequence[Pod]],
        observer: Observer = NULL_OBSERVER,
        clock: Callable[[], float] | None = None,
    ) -> Node:
        """A started copy of this node, for trying admissions without touching it.

        ``store`` must already hold this node's CPU state (e.g. a copy of its checkpoint
        bytes): nothing is loaded, validated or saved until the copy changes, because the
        state comes from a node that was built and started. The configuration, policy and
        merge are shared, the immutable states (CPU, memory, devices) too (memory without the
        reusable init memory, as a restart); the stored hints and container map are copied.
        This is what a restart with the same state would give (``Node(state=...)`` then
        ``start``) without its cost, except that stored hints survive (a restart forgets
        them, as the kubelet's does).
        """
        self._check_running()
        twin = Node.__new__(Node)
        twin.topology = self.topology
        twin.kubelet = self.kubelet
        twin._topology_manager = self._topology_manager.fork(observer=observer, clock=clock)
        twin._cpu_manager = self._cpu_manager.fork(
            store=store,
            active_pods=active_pods,
            observer=observer,
            affinity=twin._topology_manager.affinity_mask,
        )
        implicit = self._cpu_provider.implicit
        twin._cpu_provider = CPUProvider(twin._cpu_manager, implicit=implicit)
        providers: list[HintProvider] = [twin._cpu_provider]
        twin._memory = None
        twin._devices = None
        if self._memory is not None:
            twin._memory = MemoryProvider(
                self._memory.state.without_reuse(),  # as a restart has it
                twin._topology_manager.get_affinity,
                implicit=self._memory.implicit,
                pod_level_resources=self._memory.pod_level_resources,
                active=twin._active_uids,
            )
            providers.append(twin._memory)
        if self._devices is not None:
            twin._devices = DeviceProvider(
                self._devices.state,
                twin._topology_manager.get_affinity,
                implicit=self._devices.implicit,
            )
            providers.append(twin._devices)
        for provider in providers:
            twin._topology_manager.add_provider(provider)
        twin._active_pods = active_pods
        twin._stopped = False
        return twin

    def snapshot(self) -> NodeState:
        """The node's whole state now (CPU assignments, memory blocks, devices)."""
        return NodeState(
            cpu=self._cpu_manager.snapshot,
            memory=self._memory.state if self._memory is not None else None,
            devices=self._devices.state if self._devices is not None else None,
        )

    @property
    def cpu_state(self) -> StateSnapshot:
        """The CPU manager's state now: ``snapshot().cpu``, for callers reading only it."""
        return self._cpu_manager.snapshot

    def stop(self) -> NodeState:
        """Stop this node and hand over its state for ``Node(state=...)``; every later call
        on this node raises, so two nodes never share one store."""
        state = self.snapshot()
        self._stopped = True
        return state

    def _check_running(self) -> None:
        if self._stopped:
            msg = "this Node was stopped; build a new Node(state=node.stop()) to restart"
            raise RuntimeError(msg)

    # --- the kubelet's hooks ------------------------------------------------------------

    def admit(self, pod: Pod, *, explain: bool = True) -> AdmissionResult:
        """The kubelet's admission of one pod (hints, merge, allocation by every provider).

        ``explain=False`` skips the merge explanations (``ContainerDecision.explanation`` is
        None) for callers that read only the verdict: decisions, state and events are the
        same.
        """
        self._check_running()
        self._retain_active(memory=False)  # the memory provider removes its own, when asked
        return self._topology_manager.admit(pod, explain=explain)

    def container_started(self, pod: Pod, container: Container, container_id: ContainerID) -> None:
        """The kubelet's PreStartContainer: record the container id; finished init containers
        give their memory back."""
        self._check_running()
        self._cpu_manager.add_container(pod, container, container_id)
        if self._memory is not None:
            self._memory.container_started(pod, container)

    def remove_pod(
        self,
        pod_uid: PodUID,
        *,
        container_ids: Iterable[ContainerID] = (),
        reclaim: bool = True,
    ) -> None:
        """The pod's containers stopped and it is no longer active: the one removal sequence.

        1. CPUs and memory of the containers named in ``container_ids`` are released (the
           kubelet's RemoveContainer on the CPU and memory managers; unknown ids are
           ignored);
        2. with ``reclaim``, stale-state removal runs at once: CPUs, memory and devices of
           every pod that is not active go back (without it, they go at the next admission,
           reconcile or start, as when the managers are not told);
        3. the pod's stored topology hints are dropped (the kubelet's PostStopContainer).
        """
        self._check_running()
        for container_id in container_ids:
            key = self._cpu_manager.container_map.container_ref(container_id)
            self._cpu_manager.remove_container(container_id)
            if key is not None and self._memory is not None:
                self._memory.remove_container(key)
        if reclaim:
            self.remove_stale_state()
        self._topology_manager.remove_pod(pod_uid)

    def remove_stale_state(self) -> None:
        """Release the CPUs, memory and devices of pods that are no longer active."""
        self._check_running()
        self._cpu_manager.remove_stale_state()
        self._retain_active()

    def reconcile(self, runtime: Runtime, statuses: Iterable[ContainerStatus]) -> ReconcileReport:
        """One pass of the CPU manager's reconcile loop against ``runtime``."""
        self._check_running()
        return self._cpu_manager.reconcile(runtime, statuses)

    def _active_uids(self) -> list[PodUID]:
        return [pod.uid for pod in self._active_pods()]

    def _retain_active(self, *, memory: bool = True) -> None:
        """Free device (and, with ``memory``, memory) holdings of pods no longer active."""
        if self._devices is None and (self._memory is None or not memory):
            return
        active = self._active_uids()
        if self._devices is not None:
            self._devices.retain(active)
        if self._memory is not None and memory:
            self._memory.retain(active)

    # --- queries ------------------------------------------------------------------------

    def placement(self, pod: Pod, container: Container) -> Placement:
        """Where ``container`` runs: CPUs, stored affinity, memory NUMA nodes, devices."""
        snapshot = self._cpu_manager.snapshot
        exclusive = snapshot.cpuset_of(pod.uid, container.name)
        return Placement(
            cpus=snapshot.default_cpuset if exclusive is None else exclusive,
            exclusive=exclusive is not None,
            hint=self._topology_manager.get_affinity(pod.uid, container.name),
            memory_numa=(
                self._memory.held_nodes(pod, container) if self._memory is not None else ()
            ),
            devices=self._devices.held(pod, container) if self._devices is not None else {},
        )
