"""A snapshot's node, restored as a restarting kubelet restores its managers (pure).

The kubelet's container manager starts its managers in this order, each refusing to start
on a checkpoint it cannot use: the CPU manager (decode, policy name, ``validateState``;
V1 files migrate through the container map built from the runtime's containers), the
memory manager (policy name, then the Static policy's machine-state check) and the device
manager (an unreadable file is logged and ignored). Then stale-state removal releases what
pods that are no longer active still hold (we run it at once: docs/architecture.md §3).

:func:`restore_node` does the same on a snapshot's bytes, with in-memory stores, and says in
sentences what the restore did. ``kubelet`` replaces the node's configuration (preflight);
``recover`` repairs instead of refusing (``cpumanager state recover``'s rule). The rules are
the node's kubelet release's (``release``, else the snapshot's ``kubeletVersion``): one that
would not start on the node refuses, and the managers read that release's gate defaults.

:class:`RestoredState` freezes a restored node after its start (immutable values only) so
that answering many questions about one node restores it once: :meth:`RestoredState.start`
restarts a copy from those values (the kubelet's restart with unchanged checkpoints), which
needs no decoding, no validation of the files and no stale-state removal beyond the first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from cpumanager.adapters.memory_store import InMemoryStore
from cpumanager.checkpoint.cpu import codec
from cpumanager.checkpoint.device.codec import attempt_device
from cpumanager.checkpoint.device.restore import restore_device_state
from cpumanager.checkpoint.memory.codec import MemoryManagerCheckpoint
from cpumanager.checkpoint.memory.restore import (
    default_machine_state,
    restore_memory_state,
    validate_memory_state,
)
from cpumanager.core import versions
from cpumanager.core.containermap import ContainerMap
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.devices import Device, DeviceState
from cpumanager.core.events import ManagerEvent, Released, StateRepaired
from cpumanager.core.ids import ContainerKey, ContainerName, PodUID
from cpumanager.core.memory import MemoryState
from cpumanager.core.memory.state import MemoryBlock, MemoryTable, NodeMemory
from cpumanager.core.state import StateSnapshot
from cpumanager.core.topology import CPUTopology
from cpumanager.core.workload import Pod
from cpumanager.errors import StateValidationError
from cpumanager.formats.kubelet_config import KubeletConfig, reserved_memory_per_node
from cpumanager.manager.node import Node, NodeResources, NodeState
from cpumanager.nodeanswers.fit import pods_usage
from cpumanager.nodeview.snapshot import NodeSnapshot
from cpumanager.nodeview.version_preflight import recorded_release, startup_refusal
from cpumanager.ports import NULL_OBSERVER

__all__ = [
    "HeldStore",
    "Restored",
    "RestoredState",
    "checkpoint_path",
    "restore_memory",
    "restore_node",
]

CPU_FILE = "cpu_manager_state"
MEMORY_FILE = "memory_manager_state"
DEVICE_FILE = "kubelet_internal_checkpoint"


class _Events:
    """Observer that keeps the managers' events (releases, repairs) for the report."""

    def __init__(self) -> None:
        self.events: list[ManagerEvent] = []

    def notify(self, event: ManagerEvent) -> None:
        self.events.append(event)

    def drain(self) -> list[ManagerEvent]:
        found, self.events = self.events, []
        return found


class HeldStore:
    """A StateStore holding the CPU manager's state as a value: a restart of a node whose
    checkpoint was already decoded and validated reads it back as is. ``data`` encodes the
    held state only when asked (the bytes a kubelet would have written)."""

    def __init__(self, snapshot: StateSnapshot) -> None:
        self._held = snapshot

    def load(self, policy_name: str, container_map: ContainerMap) -> StateSnapshot | None:
        return self._held

    def save(self, snapshot: StateSnapshot) -> None:
        self._held = snapshot

    @property
    def data(self) -> bytes:
        return codec.encode_v2(self._held)


@dataclass(slots=True)
class Restored:
    """The restarted node, its active pods (admission adds to them) and what start did."""

    node: Node
    topology: CPUTopology
    kubelet: KubeletConfig
    store: InMemoryStore | HeldStore
    active: list[Pod]
    notes: list[str]
    events: _Events
    # The summed requests of the first N active pods, taken when a copy started (their
    # sum does not change while they stay in place at the head of ``active``).
    counted: tuple[int, Mapping[str, int]] = (0, MappingProxyType({}))

    def active_pods(self) -> list[Pod]:
        return list(self.active)

    def usage(self) -> dict[str, int]:
        """The active pods' summed requests (what the fit predicate counts as used)."""
        count, base = self.counted
        used = dict(base)
        if count == len(self.active):
            return used
        for name, value in pods_usage(self.active[count:]).items():
            used[name] = used.get(name, 0) + value
        return used

    def fork(self, *, explained: bool = True) -> Restored:
        """A trial copy of this started node (``Node.fork``): the same state, its own store,
        active pods and events; admissions on it leave this node untouched. Without
        ``explained`` no events are kept (the caller reads only verdicts)."""
        events = _Events()
        store = HeldStore(self.node.cpu_state)
        twin = Restored(
            self.node,
            self.topology,
            self.kubelet,
            store,
            list(self.active),
            [],
            events,
            self.counted,
        )
        observer = events if explained else NULL_OBSERVER
        twin.node = self.node.fork(store=store, active_pods=twin.active_pods, observer=observer)
        return twin

    def replace_active(self, index: int, pod: Pod) -> None:
        """Put ``pod`` in place of an active pod (a resize), forgetting the head's sum."""
        self.active[index] = pod
        self.counted = (0, MappingProxyType({}))

    def freeze(self, hugepages: Mapping[int, Mapping[str, int]]) -> RestoredState:
        """This node's state now, as values a copy restarts from (see the module docstring)."""
        return RestoredState(
            self.topology,
            self.kubelet,
            self.node.snapshot(),
            tuple(self.active),
            MappingProxyType({n: MappingProxyType(dict(p)) for n, p in hugepages.items()}),
            tuple(self.notes),
            MappingProxyType(pods_usage(self.active)),
        )


@dataclass(frozen=True, slots=True)
class RestoredState:
    """A restored node after its start, as immutable values (see the module docstring).

    Everything its admissions read is here: after the start every CPU, memory and device
    entry belongs to an active pod, the container map only serves releases of active pods
    (which admission never does) and the topology manager holds no hints yet, so a copy
    started from these values admits exactly as the node restored from its files.
    """

    topology: CPUTopology
    kubelet: KubeletConfig
    state: NodeState
    active: tuple[Pod, ...]
    hugepages: Mapping[int, Mapping[str, int]]
    notes: tuple[str, ...]
    usage: Mapping[str, int]  # the active pods' summed requests

    def start(self) -> Restored:
        """A running copy of the node, as restarted with its checkpoints unchanged."""
        events = _Events()
        store = HeldStore(self.state.cpu)
        node = Node(
            topology=self.topology,
            kubelet=self.kubelet,
            store=store,
            resources=NodeResources(hugepages={n: dict(p) for n, p in self.hugepages.items()}),
            observer=events,
            state=self.state,
        )
        counted = (len(self.active), self.usage)
        restored = Restored(
            node, self.topology, self.kubelet, store, list(self.active), [], events, counted
        )
        node.start(active_pods=restored.active_pods)
        events.drain()
        return restored


_DEFAULT_PATHS = {
    CPU_FILE: "/var/lib/kubelet/cpu_manager_state",
    MEMORY_FILE: "/var/lib/kubelet/memory_manager_state",
    DEVICE_FILE: "/var/lib/kubelet/device-plugins/kubelet_internal_checkpoint",
}


def checkpoint_path(snapshot: NodeSnapshot, kind: str) -> str:
    """Where the node keeps a checkpoint (as recorded in the snapshot)."""
    entry = snapshot.checkpoints.get(kind)
    return entry.path if entry is not None and entry.path else _DEFAULT_PATHS[kind]


def _memory_bytes(topology: CPUTopology) -> dict[int, int]:
    return {n.id: n.memory_bytes or 0 for n in topology.numa_nodes}


def _memory_state(
    checkpoint: MemoryManagerCheckpoint,
    topology: CPUTopology,
    hugepages: Mapping[int, Mapping[str, int]],
) -> MemoryState:
    """The memory manager's restored state as the core's immutable MemoryState."""
    nodes: dict[int, NodeMemory] = {}
    for node_id, node in sorted((checkpoint.machine_state or {}).items()):
        if node is None:
            continue
        tables = {
            name: MemoryTable(t.total, t.system_reserved, t.allocatable, t.reserved, t.free)
            for name, t in sorted((node.memory_map or {}).items())
            if t is not None
        }
        nodes[node_id] = NodeMemory(
            MappingProxyType(tables), node.number_of_assignments, tuple(node.cells or (node_id,))
        )
    if not nodes:
        return MemoryState.create(_memory_bytes(topology), hugepages=hugepages)
    blocks: dict[ContainerKey, tuple[MemoryBlock, ...]] = {}
    for pod, containers in sorted((checkpoint.entries or {}).items()):
        for name, held in sorted((containers or {}).items()):
            key = ContainerKey(PodUID(pod), ContainerName(name))
            blocks[key] = tuple(
                MemoryBlock(tuple(b.numa_affinity or ()), b.size, b.type) for b in held or ()
            )
    return MemoryState(nodes=MappingProxyType(nodes), blocks=MappingProxyType(blocks))


def restore_memory(
    snapshot: NodeSnapshot, topology: CPUTopology, kubelet: KubeletConfig, notes: list[str]
) -> MemoryState | None:
    """The memory manager's start: its refusals are the kubelet's (StateValidationError)."""
    data = snapshot.checkpoint_bytes(MEMORY_FILE)
    source = checkpoint_path(snapshot, MEMORY_FILE)
    policy = kubelet.memory_manager_policy
    checkpoint = restore_memory_state(data, source=source, configured_policy=policy)
    if policy != "Static":
        return None
    hugepages = {n: dict(p) for n, p in snapshot.hugepages.items()}
    if checkpoint is None:
        notes.append("The memory manager has no checkpoint: it starts with all memory free.")
        return None
    capacity = sum(_memory_bytes(topology).values())
    reserved = reserved_memory_per_node(
        kubelet, topology.numa_ids(), memory_capacity_bytes=capacity
    )
    default = default_machine_state(
        _memory_bytes(topology), hugepages=hugepages, system_reserved=reserved
    )
    refusals = validate_memory_state(checkpoint, default)
    if refusals:
        message = (
            f"could not restore state from checkpoint: {refusals[0]}, please drain this node "
            f'and delete the memory manager checkpoint file "{source}" before restarting Kubelet'
        )
        raise StateValidationError(message, reasons=refusals)
    notes.append("The memory manager restored its checkpoint and it matches this machine.")
    return _memory_state(checkpoint, topology, hugepages)


def _inventory(snapshot: NodeSnapshot, topology: CPUTopology) -> dict[str, dict[str, Device]]:
    """Devices per resource with their NUMA nodes: from GetAllocatableResources when the
    snapshot has it, else the checkpoint's registered devices (NUMA from its entries)."""
    numa = set(topology.numa_ids())
    found: dict[str, dict[str, Device]] = {}
    answers = snapshot.pod_resources
    if answers is not None and answers.allocatable is not None:
        for alloc in answers.allocatable.devices:
            nodes = tuple(n for n in alloc.numa_nodes or () if n in numa)
            for device_id in alloc.device_ids:
                found.setdefault(alloc.resource_name, {})[device_id] = Device(device_id, nodes)
    return found


def _registered(data: bytes | None) -> dict[str, tuple[str, ...]]:
    """The device checkpoint's registered devices (ids per resource), when it decodes."""
    if data is None:
        return {}
    result = attempt_device(data)
    if result.checkpoint is None:
        return {}
    listed = result.checkpoint.data.registered_devices or {}
    return {name: tuple(ids or ()) for name, ids in sorted(listed.items())}


def _restore_devices(
    snapshot: NodeSnapshot, topology: CPUTopology, notes: list[str]
) -> DeviceState | None:
    data = snapshot.checkpoint_bytes(DEVICE_FILE)
    restored = restore_device_state(data)
    inventory = _inventory(snapshot, topology)
    numa = set(topology.numa_ids())
    if not restored.read:
        notes.append(f"The device manager ignores its checkpoint: {restored.log}.")
    allocations: dict[ContainerKey, dict[str, frozenset[str]]] = {}
    for entry in restored.entries:
        key = ContainerKey(PodUID(entry.pod_uid), ContainerName(entry.container_name))
        ids: set[str] = set()
        for node, listed in (entry.device_ids or {}).items():
            for device_id in listed or ():
                ids.add(device_id)
                known = inventory.setdefault(entry.resource_name, {})
                if device_id not in known:
                    known[device_id] = Device(device_id, (node,) if node in numa else ())
        per = allocations.setdefault(key, {})
        per[entry.resource_name] = per.get(entry.resource_name, frozenset()) | frozenset(ids)
    registered = _registered(data)
    for resource, listed_ids in registered.items():
        known = inventory.setdefault(resource, {})
        unplaced = [i for i in listed_ids if i not in known]
        for device_id in unplaced:
            known[device_id] = Device(device_id, ())
        if unplaced and snapshot.pod_resources is None:
            notes.append(
                f"The NUMA node of {resource} devices {', '.join(unplaced)} is unknown (no "
                "PodResources answer in the snapshot): they count as without NUMA affinity."
            )
    if not inventory and not allocations:
        return None
    state = DeviceState.create(
        topology.numa_ids(), {r: tuple(d.values()) for r, d in inventory.items()}
    )
    frozen = MappingProxyType(
        {k: MappingProxyType(dict(v)) for k, v in sorted(allocations.items())}
    )
    return DeviceState(numa_node_ids=state.numa_node_ids, devices=state.devices, allocations=frozen)


def restore_node(
    snapshot: NodeSnapshot,
    *,
    kubelet: KubeletConfig | None = None,
    recover: bool = False,
    release: versions.Release | None = None,
) -> Restored:
    """Restart the snapshot's node as kubelet ``release`` (default: the snapshot's recorded
    one, else the newest) does; the kubelet's refusal is raised (StateValidationError,
    CheckpointCorruptError, ...; recovered from with ``recover``). A release that would not
    start on the node's configuration or files refuses first (ConfigError, from
    ``nodeview.version_preflight``), and the managers then see the release's gate values."""
    topology = snapshot.topology()
    config = kubelet if kubelet is not None else snapshot.kubelet_config()
    release = release if release is not None else recorded_release(snapshot)
    refusal = startup_refusal(snapshot, release, config, files=False)
    if refusal is not None:
        raise refusal
    config = config.with_gate_values(versions.gate_values(release, config.feature_gates))
    notes: list[str] = []
    memory = restore_memory(snapshot, topology, config, notes)
    devices = _restore_devices(snapshot, topology, notes)
    data = snapshot.checkpoint_bytes(CPU_FILE)
    source = checkpoint_path(snapshot, CPU_FILE)
    store = InMemoryStore(data, source=source)
    events = _Events()
    node = Node(
        topology=topology,
        kubelet=config,
        store=store,
        resources=NodeResources(hugepages={n: dict(p) for n, p in snapshot.hugepages.items()}),
        observer=events,
        state=NodeState(
            cpu=StateSnapshot(config.cpu_manager_policy), memory=memory, devices=devices
        ),
    )
    active = snapshot.active_pods()
    restored = Restored(node, topology, config, store, active, notes, events)
    if data is None:
        notes.append("The CPU manager has no checkpoint: it writes a fresh one and starts empty.")
    node.start(
        active_pods=restored.active_pods,
        running_containers=snapshot.running_containers(),
        recover=recover,
    )
    names = {p.uid: p.display_name for p in (n.pod for n in snapshot.pods or ())}
    for event in events.drain():
        if isinstance(event, Released):
            who = names.get(event.pod_uid, str(event.pod_uid))
            notes.append(
                f"Stale-state removal released CPUs {event.cpus} of {who} container "
                f"{event.container_name}: the pod is not active on this node."
            )
        elif isinstance(event, StateRepaired):
            notes.append(f"Recovery: {event.description}.")
    return restored


def held_cpus(snapshot: StateSnapshot) -> CPUSet:
    """Every CPU some container holds exclusively."""
    return snapshot.assigned_cpus()
