"""Node as the one facade: admit, container started, placement, remove, reconcile, snapshot,
stop and restart with CPUs, memory and devices.

Machine: two sockets, one NUMA node each, four cores of two threads; NUMA 0 holds CPUs
0-3,8-11 and NUMA 1 holds 4-7,12-15. CPU 0 is reserved. Two GPUs sit on NUMA node 1; the
static memory manager is on.
"""

from __future__ import annotations

import dataclasses
from dataclasses import replace
from typing import Any

import pytest

from cpumanager.adapters.memory_store import InMemoryStore
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.devices import Device
from cpumanager.core.hints.hint import TopologyHint
from cpumanager.core.ids import ContainerID
from cpumanager.core.reconcile import ContainerPhase, ContainerStatus
from cpumanager.core.workload import Pod
from cpumanager.formats.kubelet_config import KubeletConfig
from cpumanager.manager.node import Node, NodeResources, NodeState
from cpumanager.presets import synthetic
from tests.builders import container, pod

MACHINE = synthetic(sockets=2, cores_per_numa=4, threads=2)
NUMA1 = MACHINE.cpus_in_numa_nodes([1])
GPUS = {"gpu": (Device("g0", (1,)), Device("g1", (1,)))}
KUBELET: dict[str, Any] = {
    "cpuManagerPolicy": "static",
    "reservedSystemCPUs": "0",
    "topologyManagerPolicy": "single-numa-node",
    "memoryManagerPolicy": "Static",
    "kubeReserved": {"memory": "512Mi"},
    "reservedMemory": [{"numaNode": 0, "limits": {"memory": "612Mi"}}],
}
ZERO = TopologyHint(None, False)


class Host:
    """A node, its store and the pods the API server says should run."""

    def __init__(self) -> None:
        self.store = InMemoryStore()
        self.pods: list[Pod] = []
        self.node = self.boot(None)

    def boot(self, state: NodeState | None) -> Node:
        node = Node(
            topology=MACHINE,
            kubelet=KubeletConfig.from_mapping(KUBELET),
            store=self.store,
            resources=NodeResources(devices=GPUS),
            state=state,
        )
        node.start(active_pods=lambda: list(self.pods))
        self.node = node
        return node

    def admit(self, p: Pod) -> bool:
        self.pods.append(p)
        admitted = self.node.admit(p).admitted
        if not admitted:
            self.pods.remove(p)
        return admitted


def gpu_pod(uid: str, gpus: int = 1) -> Pod:
    return pod(uid, container("app", "2", gpu=gpus, memory="2Gi"))


def test_placement_names_cpus_hint_memory_and_devices() -> None:
    h = Host()
    p = gpu_pod("p")
    assert h.admit(p)
    placed = h.node.placement(p, p.containers[0])
    assert placed.exclusive
    assert len(placed.cpus) == 2
    assert placed.cpus <= NUMA1
    assert placed.hint.mask is not None
    assert placed.hint.mask.ids() == (1,)
    assert placed.memory_numa == (1,)
    assert placed.devices == {"gpu": ("g0",)}


def test_a_shared_container_is_placed_on_the_shared_pool() -> None:
    h = Host()
    p = pod("p", container("app", "500m"))
    assert h.admit(p)
    placed = h.node.placement(p, p.containers[0])
    assert not placed.exclusive
    assert placed.cpus == h.node.snapshot().cpu.default_cpuset
    assert placed.devices == {}


def test_stop_hands_over_the_whole_state_and_a_restart_takes_it_back() -> None:
    h = Host()
    p = gpu_pod("p")
    assert h.admit(p)
    before = h.node.placement(p, p.containers[0])
    state = h.node.stop()
    assert state.cpu.cpuset_of(p.uid, p.containers[0].name) == before.cpus
    assert state.memory is not None
    assert state.memory.blocks
    assert state.devices is not None
    assert state.devices.allocations
    restarted = h.boot(state)
    # all of it but the reusable init memory, which the kubelet keeps only in its process
    assert restarted.snapshot() == replace(state, memory=state.memory.without_reuse())
    assert restarted.admit(p).admitted  # the kubelet re-admits running pods
    again = restarted.placement(p, p.containers[0])
    assert (again.cpus, again.memory_numa, again.devices) == (
        before.cpus,
        before.memory_numa,
        before.devices,
    )
    # g0 is still held by p: a pod that wants both GPUs does not fit.
    assert not h.admit(gpu_pod("q", gpus=2))


def test_a_restart_without_the_state_forgets_memory_and_devices() -> None:
    h = Host()
    assert h.admit(gpu_pod("p"))
    h.node.stop()
    devices = h.boot(None).snapshot().devices
    assert devices is not None
    assert not devices.allocations
    assert h.admit(gpu_pod("q", gpus=2))  # both GPUs look free


def test_a_stopped_node_refuses_further_use() -> None:
    h = Host()
    h.node.stop()
    with pytest.raises(RuntimeError, match="stopped"):
        h.node.admit(gpu_pod("p"))
    with pytest.raises(RuntimeError, match="stopped"):
        h.node.remove_stale_state()


def test_snapshots_are_immutable_values() -> None:
    h = Host()
    empty = h.node.snapshot()
    assert h.admit(gpu_pod("p"))
    assert h.node.snapshot() != empty
    assert not empty.cpu.assignments
    with pytest.raises(dataclasses.FrozenInstanceError):
        empty.cpu = h.node.snapshot().cpu  # type: ignore[misc]


def test_remove_pod_releases_cpus_memory_devices_and_hints() -> None:
    h = Host()
    p = gpu_pod("p")
    assert h.admit(p)
    h.pods.remove(p)
    h.node.remove_pod(p.uid)
    state = h.node.snapshot()
    assert not state.cpu.assignments
    assert state.memory is not None
    assert not state.memory.blocks
    assert state.devices is not None
    assert not state.devices.allocations
    assert h.node.placement(p, p.containers[0]).hint == ZERO


def test_without_reclaim_only_the_hints_go_until_stale_state_removal() -> None:
    h = Host()
    p = gpu_pod("p")
    assert h.admit(p)
    h.pods.remove(p)
    h.node.remove_pod(p.uid, reclaim=False)  # the containers stopped, nobody was told
    placed = h.node.placement(p, p.containers[0])
    assert placed.hint == ZERO
    assert placed.exclusive
    assert placed.devices == {"gpu": ("g0",)}
    h.node.remove_stale_state()
    placed = h.node.placement(p, p.containers[0])
    assert (placed.exclusive, placed.devices, placed.memory_numa) == (False, {}, ())


def test_remove_pod_by_container_id_releases_cpus_of_an_active_pod() -> None:
    h = Host()
    p = gpu_pod("p")
    assert h.admit(p)
    h.node.remove_pod(p.uid, container_ids=[ContainerID("unknown")])  # ignored
    assert h.node.placement(p, p.containers[0]).exclusive
    h.node.container_started(p, p.containers[0], ContainerID("cid-p"))
    h.node.remove_pod(p.uid, container_ids=[ContainerID("cid-p")], reclaim=False)
    assert not h.node.placement(p, p.containers[0]).exclusive


class Recorder:
    def __init__(self) -> None:
        self.applied: dict[ContainerID, CPUSet] = {}

    def apply(self, container_id: ContainerID, cpus: CPUSet) -> None:
        self.applied[container_id] = cpus


def test_reconcile_pushes_each_containers_cpuset() -> None:
    h = Host()
    p = gpu_pod("p")
    assert h.admit(p)
    app = p.containers[0]
    h.node.container_started(p, app, ContainerID("cid-p"))
    runtime = Recorder()
    status = ContainerStatus(p.key(app.name), ContainerID("cid-p"), ContainerPhase.RUNNING)
    report = h.node.reconcile(runtime, [status])
    cpus = h.node.placement(p, app).cpus
    # Seeded at container start with its exclusive set: already right, nothing pushed.
    assert report.unchanged == (p.key(app.name),)
    assert runtime.applied == {}
    h.node.remove_pod(p.uid, container_ids=[ContainerID("cid-p")], reclaim=False)
    h.node.container_started(p, app, ContainerID("cid-p"))  # restarted on the shared pool
    report = h.node.reconcile(runtime, [status])
    shared = h.node.snapshot().cpu.default_cpuset
    assert report.updated == ((p.key(app.name), shared),)
    assert runtime.applied == {ContainerID("cid-p"): shared}
    assert cpus <= shared  # its exclusive CPUs went back to the pool
