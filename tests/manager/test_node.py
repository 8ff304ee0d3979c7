"""Node: the CPU, memory and device managers behind the topology manager, wired from a
KubeletConfiguration, admitting pods the kubelet's way.

Machine: two sockets, one NUMA node each, four cores of two threads; NUMA 0 holds CPUs
0-3,8-11 and NUMA 1 holds 4-7,12-15. CPU 0 is reserved. Two GPUs sit on NUMA node 1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import pytest

from cpumanager.adapters.memory_store import InMemoryStore
from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.devices import Device
from cpumanager.core.hints.source import HintSource
from cpumanager.core.ids import ContainerID, ContainerKey, ContainerName, PodUID
from cpumanager.core.topology import CPUTopology
from cpumanager.core.workload import Container, ContainerKind, Pod
from cpumanager.errors import ConfigError, StateValidationError
from cpumanager.formats.kubelet_config import KubeletConfig
from cpumanager.manager.node import Node, NodeResources
from cpumanager.presets import synthetic
from tests.builders import container, cpus, guaranteed, pod

MACHINE = synthetic(sockets=2, cores_per_numa=4, threads=2)
NUMA0, NUMA1 = MACHINE.cpus_in_numa_nodes([0]), MACHINE.cpus_in_numa_nodes([1])
GPUS = {"gpu": (Device("g0", (1,)), Device("g1", (1,)))}
MEMORY: dict[str, Any] = {
    "memoryManagerPolicy": "Static",
    "kubeReserved": {"memory": "512Mi"},
    "reservedMemory": [{"numaNode": 0, "limits": {"memory": "612Mi"}}],  # + 100Mi eviction
}


class Cluster:
    """A node and the pods the API server says should run on it."""

    def __init__(
        self,
        policy: str = "single-numa-node",
        *,
        scope: str = "container",
        topology: CPUTopology = MACHINE,
        store: InMemoryStore | None = None,
        **fields: Any,
    ) -> None:
        self.config = KubeletConfig.from_mapping(
            {
                "cpuManagerPolicy": "static",
                "reservedSystemCPUs": "0",
                "topologyManagerPolicy": policy,
                "topologyManagerScope": scope,
                **fields,
            }
        )
        self.topology = topology
        self.store = store or InMemoryStore()
        self.pods: list[Pod] = []
        self.node = self.boot()

    def boot(self, running: Sequence[tuple[ContainerID, PodUID, ContainerName]] = ()) -> Node:
        node = Node(
            topology=self.topology,
            kubelet=self.config,
            store=self.store,
            resources=NodeResources(devices=GPUS),
        )
        node.start(active_pods=lambda: list(self.pods), running_containers=running)
        self.node = node
        return node

    def admit(self, p: Pod) -> Any:
        self.pods.append(p)
        result = self.node.admit(p)
        if not result.admitted:
            self.pods.remove(p)
        return result


def memory_blocks(node: Node) -> Mapping[ContainerKey, object]:
    memory = node.snapshot().memory
    assert memory is not None
    return memory.blocks


def cpus_of(result: Any, name: str = "app") -> CPUSet:
    found = result.allocated[f"cpu/{name}"]
    assert isinstance(found, CPUSet)
    return found


# --- the stored affinity drives the allocation -------------------------------------------


def test_the_merged_hint_is_stored_and_used_by_the_cpu_manager() -> None:
    c = Cluster("single-numa-node")
    assert cpus_of(c.admit(guaranteed("a", app="6"))) <= NUMA0
    b = c.admit(guaranteed("b", app="5"))  # only NUMA 1 still has 5 free CPUs
    assert b.admitted
    assert cpus_of(b) <= NUMA1
    p = c.pods[-1]
    assert c.node.placement(p, p.containers[0]).hint.mask == NUMAMask.of(1)


def test_the_none_policy_allocates_unaligned() -> None:
    c = Cluster("none")
    c.admit(guaranteed("a", app="6"))
    b = c.admit(guaranteed("b", app="5"))
    assert b.admitted
    assert cpus_of(b) & NUMA0
    assert cpus_of(b) & NUMA1
    assert b.decisions == ()
    p = c.pods[-1]
    assert c.node.placement(p, p.containers[0]).hint.mask is None


@pytest.mark.parametrize(
    ("policy", "expected"), [("single-numa-node", NUMA1), ("none", NUMA0)], ids=str
)
def test_cpus_follow_the_device_under_alignment(policy: str, expected: CPUSet) -> None:
    c = Cluster(policy)
    result = c.admit(pod("p", container("app", "2", gpu=1)))
    assert result.admitted
    assert cpus_of(result) <= expected
    assert result.allocated["devices/app"] == {"gpu": ("g0",)}


def test_cpus_memory_and_devices_land_on_one_numa_node() -> None:
    c = Cluster("single-numa-node", **MEMORY)
    p = pod("p", container("app", "2", gpu=1, memory="2Gi"))
    result = c.admit(p)
    assert result.admitted
    assert cpus_of(result) <= NUMA1
    placed = c.node.placement(p, p.containers[0])
    assert placed.memory_numa == (1,)
    assert placed.devices == {"gpu": ("g0",)}
    assert placed.cpus == cpus_of(result)
    assert placed.exclusive


@pytest.mark.parametrize(
    ("scope", "a", "b"),
    [("pod", NUMA1, NUMA1), ("container", NUMA0, NUMA1)],
    ids=["pod-scope-keeps-the-pod-together", "container-scope-aligns-each-container"],
)
def test_scopes(scope: str, a: CPUSet, b: CPUSet) -> None:
    # NUMA 0 has 7 free CPUs (CPU 0 is reserved), NUMA 1 has 8: the whole pod fits only there.
    c = Cluster("single-numa-node", scope=scope)
    result = c.admit(guaranteed("p", a="4", b="4"))
    assert result.admitted
    assert cpus_of(result, "a") <= a
    assert cpus_of(result, "b") <= b


# --- rejection reasons -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("policy", "fields", "p", "reason", "message"),
    [
        (
            "single-numa-node",
            {},
            guaranteed("p", app="10"),
            "TopologyAffinityError",
            "Resources cannot be allocated with Topology locality",
        ),
        (
            "none",
            {"cpuManagerPolicyOptions": {"full-pcpus-only": "true"}},
            guaranteed("p", app="3"),
            "SMTAlignmentError",
            "SMT Alignment Error: requested 3 cpus not multiple cpus per core = 2",
        ),
        (
            "none",
            {},
            guaranteed("p", app="16"),
            "UnexpectedAdmissionError",
            "Allocate failed due to not enough cpus available to satisfy request: "
            "requested=16, available=15, which is unexpected",
        ),
        (
            "best-effort",
            {},
            pod("p", container("app", "2", gpu=3)),
            "UnexpectedAdmissionError",
            "Allocate failed due to requested number of devices unavailable for gpu. "
            "Requested: 3, Available: 2, which is unexpected",
        ),
    ],
    ids=["no-single-node", "smt-alignment", "not-enough-cpus", "not-enough-devices"],
)
def test_rejections(policy: str, fields: dict[str, Any], p: Pod, reason: str, message: str) -> None:
    c = Cluster(policy, **fields)
    result = c.admit(p)
    assert (result.admitted, result.reason, result.message) == (False, reason, message)


def test_restricted_admits_what_needs_two_nodes_at_least() -> None:
    result = Cluster("restricted").admit(guaranteed("p", app="10"))
    assert result.admitted
    assert cpus_of(result) & NUMA0
    assert cpus_of(result) & NUMA1


def test_a_rejected_pods_cpus_are_returned_before_the_next_admission() -> None:
    c = Cluster("none")
    bad = c.admit(guaranteed("p", a="8", b="8"))  # "a" is allocated, "b" fails
    assert bad.reason == "UnexpectedAdmissionError"
    assert c.node.snapshot().cpu.cpuset_of(PodUID("p"), ContainerName("a"))
    assert c.admit(guaranteed("q", app="15")).admitted


# --- devices and memory of gone pods, restart ---------------------------------------------


def test_devices_of_pods_that_are_gone_are_freed_at_the_next_admission() -> None:
    c = Cluster("single-numa-node")
    assert c.admit(pod("p", container("app", "1", gpu=1))).admitted
    assert not c.admit(pod("q", container("app", "1", gpu=2))).admitted
    c.pods.clear()
    assert c.admit(pod("q", container("app", "1", gpu=2))).admitted


def test_memory_of_pods_that_are_gone_is_freed_at_start() -> None:
    c = Cluster("single-numa-node", **MEMORY)
    p = pod("p", container("app", "1", memory="2Gi"))
    c.admit(p)
    assert memory_blocks(c.node)
    c.pods.clear()
    c.node.start(active_pods=lambda: list(c.pods))
    assert not memory_blocks(c.node)


def test_a_restarted_node_keeps_the_cpus_of_running_pods() -> None:
    c = Cluster("single-numa-node")
    first = cpus_of(c.admit(guaranteed("a", app="4")))
    c.boot()
    again = c.node.admit(c.pods[0])
    assert again.admitted
    assert cpus_of(again) == first
    assert c.admit(guaranteed("b", app="4")).admitted


def test_a_restart_with_a_changed_reservation_refuses_or_recovers() -> None:
    c = Cluster("none")
    c.admit(guaranteed("a", app="2"))  # takes core 1: CPUs 1 and 9
    c.config = KubeletConfig.from_mapping(
        {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0-1"}
    )
    with pytest.raises(StateValidationError, match="not all reserved cpus"):
        c.boot()
    node = Node(topology=MACHINE, kubelet=c.config, store=c.store)
    node.start(active_pods=lambda: list(c.pods), recover=True)
    assert node.snapshot().cpu.cpuset_of(PodUID("a"), ContainerName("app")) is None
    assert node.snapshot().cpu.default_cpuset == cpus("0-15")


# --- wiring -------------------------------------------------------------------------------


def test_past_eight_numa_nodes_the_providers_answer_with_hint_rules() -> None:
    big = synthetic(sockets=1, numa_per_socket=9, cores_per_numa=1, threads=2)
    c = Cluster(
        "best-effort",
        topology=big,
        topologyManagerPolicyOptions={"max-allowable-numa-nodes": "16"},
    )
    result = c.admit(guaranteed("p", app="2"))
    assert result.admitted
    (decision,) = result.decisions
    answer = dict(decision.provider_hints)["cpu"]
    assert answer is not None
    assert isinstance(answer["cpu"], HintSource)
    p = c.pods[-1]
    mask = c.node.placement(p, p.containers[0]).hint.mask
    assert mask is not None
    assert cpus_of(result) <= big.cpus_in_numa_nodes(mask.ids())


def test_providers_are_registered_in_the_kubelets_order() -> None:
    c = Cluster("best-effort", **MEMORY)
    result = c.admit(pod("p", container("app", "1", gpu=1)))
    assert list(result.allocated) == ["cpu/app", "memory/app", "devices/app"]


@pytest.mark.parametrize(
    ("fields", "text"),
    [
        (
            {"cpuManagerPolicy": "none", "cpuManagerPolicyOptions": {"full-pcpus-only": "true"}},
            "None policy: received unsupported options",
        ),
        ({"reservedSystemCPUs": "0,99"}, "not a subset of online-cpus"),
        ({"reservedSystemCPUs": "", "kubeReserved": {"cpu": "20"}}, "unable to reserve"),
    ],
    ids=["none-with-options", "reserved-offline", "reservation-too-big"],
)
def test_invalid_configurations_are_refused(fields: dict[str, Any], text: str) -> None:
    base: dict[str, Any] = {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0"}
    config = KubeletConfig.from_mapping({**base, **fields})
    with pytest.raises(ConfigError, match=text):
        Node(topology=MACHINE, kubelet=config, store=InMemoryStore())


def test_finished_init_containers_give_their_memory_back_when_the_next_one_starts() -> None:
    c = Cluster("single-numa-node", **MEMORY)
    init = container("init", "1", memory="6Gi", kind=ContainerKind.INIT)
    sidecar = container("side", "1", memory="1Gi", kind=ContainerKind.SIDECAR)
    app = container("app", "1", memory="2Gi")
    p = pod("p", app, init=(init, sidecar))
    assert c.admit(p).admitted
    keys = {name: p.key(ContainerName(name)) for name in ("init", "side", "app")}
    assert set(memory_blocks(c.node)) == set(keys.values())
    for started in (init, sidecar, app):
        c.node.container_started(p, started, ContainerID(f"id-{started.name}"))
    blocks = memory_blocks(c.node)
    assert keys["init"] not in blocks  # finished before the sidecar started
    assert keys["side"] in blocks  # restartable init containers keep running
    assert keys["app"] in blocks
    node = c.node.placement(p, app).memory_numa[0]
    memory = c.node.snapshot().memory
    assert memory is not None
    table = memory.nodes[node].tables["memory"]
    assert table.reserved == 3 * 2**30  # sidecar 1Gi + app 2Gi; the init's 6Gi is free again
    # The id was recorded: removing the container by id gives its CPUs back.
    assert c.node.placement(p, app).exclusive
    c.node.remove_pod(p.uid, container_ids=[ContainerID("id-app")], reclaim=False)
    assert not c.node.placement(p, app).exclusive


def test_a_percentage_eviction_threshold_is_taken_from_the_machines_memory() -> None:
    # Found by bench/diff_kubelet_memory.py: the kubelet computes 5% of the machine's
    # 128Gi as 6871947776 bytes (float32 arithmetic) and starts with reservedMemory adding
    # up to that plus kubeReserved; we refused to start ("is a percentage").
    fields = {
        "memoryManagerPolicy": "Static",
        "kubeReserved": {"memory": "512Mi"},
        "evictionHard": {"memory.available": "5%"},
        "reservedMemory": [{"numaNode": 1, "limits": {"memory": "7408818688"}}],
    }
    c = Cluster("single-numa-node", **fields)
    memory = c.node.snapshot().memory
    assert memory is not None
    assert memory.nodes[1].tables["memory"].system_reserved == 6871947776 + 512 * 2**20
    assert c.admit(pod("p", container("app", "1", memory="2Gi"))).admitted


def test_memory_of_a_gone_pod_stays_until_the_memory_manager_is_asked() -> None:
    # Found by bench/diff_kubelet_memory.py (none policy): the kubelet's memory manager
    # removes stale state when it gives hints or allocates; a pod that the CPU manager
    # refuses first never reaches it, so the gone pod's memory is still held after that.
    c = Cluster("none", **MEMORY)
    gone = pod("gone", container("app", "1", memory="2Gi"))
    assert c.admit(gone).admitted
    c.pods.remove(gone)
    refused = c.admit(pod("big", container("app", "20", memory="1Gi")))
    assert not refused.admitted
    assert "not enough cpus" in refused.message
    assert gone.key(ContainerName("app")) in memory_blocks(c.node)
    assert c.admit(pod("small", container("app", "1", memory="1Gi"))).admitted
    assert gone.key(ContainerName("app")) not in memory_blocks(c.node)


def test_removing_a_started_container_by_id_frees_its_memory_at_once() -> None:
    # The memory manager's RemoveContainer, as the CPU manager's: by the id AddContainer
    # recorded, without waiting for stale-state removal.
    c = Cluster("single-numa-node", **MEMORY)
    p = pod("p", container("app", "1", memory="2Gi"))
    assert c.admit(p).admitted
    c.node.container_started(p, p.containers[0], ContainerID("id-app"))
    c.pods.remove(p)
    c.node.remove_pod(p.uid, container_ids=[ContainerID("id-app")], reclaim=False)
    assert not memory_blocks(c.node)


def test_a_restarted_node_forgets_the_reusable_init_memory() -> None:
    # Found by bench/diff_kubelet_memory.py: the kubelet keeps the memory an init container
    # leaves for later containers in its process, not in memory_manager_state; after a
    # restart, admitting the pod again charges the finished init container's 768Mi in full
    # (reserved 1280Mi on its node, as the kubelet's checkpoint says), not 512Mi.
    c = Cluster("best-effort", **MEMORY)
    init = container("init", "1", memory="768Mi", kind=ContainerKind.INIT)
    app = container("app", "1", memory="512Mi")
    p = pod("p", app, init=(init,))
    assert c.admit(p).admitted
    for started in (init, app):
        c.node.container_started(p, started, ContainerID(f"id-{started.name}"))
    node = Node(
        topology=c.topology,
        kubelet=c.config,
        store=c.store,
        resources=NodeResources(devices=GPUS),
        state=c.node.stop(),
    )
    node.start(active_pods=lambda: list(c.pods))
    assert node.admit(p).admitted
    memory = node.snapshot().memory
    assert memory is not None
    where = node.placement(p, app).memory_numa[0]
    assert memory.nodes[where].tables["memory"].reserved == (768 + 512) * 2**20


def test_past_eight_nodes_a_wrapped_node_gets_the_kubelets_listed_hints() -> None:
    # Found by bench/diff_kubelet_memory.py, answer measured with the kubelet (v1.32): nine
    # NUMA nodes, node 0 reserving 64Mi more than it has outside its hugepages. The
    # kubelet's sum over {0, 1} wraps to less than 5Gi, so {1, 2} is the first two-node
    # mask; the hint rule (no wrap) offered {0, 1}.
    machine = synthetic(sockets=1, numa_per_socket=9, cores_per_numa=1, threads=2)
    over = str(1792 * 2**20 - 30 * 2**20 + 64 * 2**20)
    config = KubeletConfig.from_mapping(
        {
            "cpuManagerPolicy": "static",
            "reservedSystemCPUs": "0",
            "topologyManagerPolicy": "best-effort",
            "topologyManagerScope": "pod",
            "topologyManagerPolicyOptions": {"max-allowable-numa-nodes": "9"},
            "memoryManagerPolicy": "Static",
            "kubeReserved": {"memory": over},
            "evictionHard": {"memory.available": "0%"},
            "reservedMemory": [{"numaNode": 0, "limits": {"memory": over}}],
        }
    )
    resources = NodeResources(
        memory={0: 1792 * 2**20, **dict.fromkeys(range(1, 9), 4 * 2**30)},
        hugepages={0: {"hugepages-2Mi": 30 * 2**20}}
        | {n: {"hugepages-2Mi": 158 * 2**20} for n in range(1, 9)},
    )
    active: list[Pod] = []
    node = Node(topology=machine, kubelet=config, store=InMemoryStore(), resources=resources)
    node.start(active_pods=lambda: list(active))
    amounts = {"cpu": Fraction(1, 4), "memory": Fraction(5 * 2**30)}
    amounts["hugepages-2Mi"] = Fraction(98 * 2**20)
    app = Container(ContainerName("app"), amounts, amounts)
    p = pod("p", app)
    active.append(p)
    assert node.admit(p).admitted
    assert node.placement(p, app).memory_numa == (1, 2)
