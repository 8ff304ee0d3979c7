"""A tiny kubelet around CPUManager for lifecycle tests: pods, sources, restarts, events.

``Kubelet`` owns what survives a restart (the machine, the store, the pods the API server
knows) and builds a fresh CPUManager on every ``start`` / ``restart``, exactly as a
restarted kubelet process would: the only memory it carries over is the store's bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeVar

from cpumanager.adapters.memory_store import InMemoryStore
from cpumanager.core.allocation.options import StaticPolicyOptions
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.events import ManagerEvent
from cpumanager.core.ids import ContainerID, ContainerKey, ContainerName, PodUID
from cpumanager.core.policy.base import Policy
from cpumanager.core.policy.none import NonePolicy
from cpumanager.core.policy.static import StaticPolicy
from cpumanager.core.reconcile import ContainerPhase, ContainerStatus
from cpumanager.core.topology import CPUTopology
from cpumanager.core.workload import Pod
from cpumanager.manager.cpu_manager import CPUManager
from cpumanager.presets import synthetic

E = TypeVar("E")


class EventLog:
    """Observer that keeps every event, in order."""

    def __init__(self) -> None:
        self.events: list[ManagerEvent] = []

    def notify(self, event: ManagerEvent) -> None:
        self.events.append(event)

    def of(self, kind: type[E]) -> list[E]:
        """Events of one type, in order."""
        return [e for e in self.events if isinstance(e, kind)]


def machine(sockets: int = 2, cores: int = 2, threads: int = 2) -> CPUTopology:
    """``sockets`` x one NUMA node x ``cores`` x ``threads`` (Linux numbering)."""
    return synthetic(sockets=sockets, numa_per_socket=1, cores_per_numa=cores, threads=threads)


def container_id(pod_uid: str, name: str) -> ContainerID:
    return ContainerID(f"cid-{pod_uid}-{name}")


@dataclass
class Kubelet:
    """Pods, pod-source readiness and the store; a new CPUManager per (re)start."""

    topology: CPUTopology = field(default_factory=machine)
    policy_name: str = "static"
    reserved: str = ""
    options: StaticPolicyOptions | None = None
    store: InMemoryStore = field(default_factory=InMemoryStore)
    log: EventLog = field(default_factory=EventLog)
    pods: dict[PodUID, Pod] = field(default_factory=dict)
    ready: bool = True
    manager: CPUManager | None = None
    # Containers the runtime has started (what a restarted kubelet finds through CRI).
    running: dict[ContainerKey, ContainerID] = field(default_factory=dict)

    # --- wiring ---------------------------------------------------------------------------

    def policy(self) -> Policy:
        if self.policy_name == "none":
            return NonePolicy(self.topology)
        reserved = CPUSet.parse(self.reserved)
        return StaticPolicy(
            self.topology,
            options=self.options,
            num_reserved_cpus=len(reserved),
            reserved_cpus=reserved or None,
        )

    def new_manager(self) -> CPUManager:
        return CPUManager(
            policy=self.policy(),
            store=self.store,
            all_cpus=self.topology.all_cpus,
            observer=self.log,
        )

    def start(
        self,
        *,
        running: list[tuple[ContainerID, PodUID, ContainerName]] | None = None,
        recover: bool = False,
    ) -> CPUManager:
        """Start a fresh manager on the store (a kubelet start or restart)."""
        manager = self.new_manager()
        if running is None:
            running = [(cid, key.pod_uid, key.container_name) for key, cid in self.running.items()]
        manager.start(
            active_pods=lambda: list(self.pods.values()),
            sources_ready=lambda: self.ready,
            running_containers=running,
            recover=recover,
        )
        self.manager = manager
        return manager

    @property
    def m(self) -> CPUManager:
        assert self.manager is not None, "start the kubelet first"
        return self.manager

    # --- pod life -------------------------------------------------------------------------

    def admit(self, pod: Pod, *, run: bool = True) -> dict[str, CPUSet]:
        """Admit (allocate every container, init first) and, with ``run``, start them."""
        self.pods[pod.uid] = pod
        given: dict[str, CPUSet] = {}
        for c in pod.all_containers():
            given[c.name] = self.m.allocate(pod, c)
        if run:
            for c in pod.all_containers():
                cid = container_id(pod.uid, c.name)
                self.m.add_container(pod, c, cid)
                self.running[pod.key(c.name)] = cid
        return given

    def delete(self, uid: str) -> None:
        """The API server forgets the pod; its containers stop."""
        self.pods.pop(PodUID(uid), None)
        self.exit(uid)

    def exit(self, uid: str) -> None:
        """The pod's containers stop (the manager is not told)."""
        for key in [k for k in self.running if k.pod_uid == uid]:
            del self.running[key]

    def statuses(self) -> list[ContainerStatus]:
        """Running for started containers of active pods, waiting for the rest."""
        found: list[ContainerStatus] = []
        for pod in self.pods.values():
            for c in pod.all_containers():
                key = pod.key(c.name)
                cid = self.running.get(key)
                phase = ContainerPhase.RUNNING if cid else ContainerPhase.WAITING
                found.append(ContainerStatus(key, cid, phase))
        return found

    def file_snapshot(self) -> object:
        """What a fresh load of the store gives (None when nothing was written)."""
        from cpumanager.core.containermap import ContainerMap

        return self.store.load(self.policy_name, ContainerMap())
