"""`node whatif` on the fixture nodes, checked against the kubelet's admission rules.

The kubeadm fixture: 16 CPUs, NUMA 0 = 0-3,8-11, NUMA 1 = 4-7,12-15, 64 GiB each; static
policy with reservedSystemCPUs 0,8 and the single-numa-node topology policy. Its checkpoint
gives postgres 1-2,9-10 and redis 3,11, so NUMA 0 has no allocatable CPU left (0 and 8 are
reserved) and NUMA 1 has all 8 free.
"""

from __future__ import annotations

import json
from dataclasses import replace
from fractions import Fraction

import pytest

from cpumanager.core.cpuset import CPUSet
from cpumanager.errors import CheckpointError
from cpumanager.nodeanswers.fit import node_allocatable, pod_requests
from cpumanager.nodeanswers.whatif import what_if
from tests.nodeanswers.snapshots import fixture_snapshot, pod
from tests.nodeview.fixture_nodes import NODES_DIR, fixture_answers

GiB = 2**30
MiB = 2**20


def test_the_machine_is_what_the_expectations_assume() -> None:
    topology = fixture_snapshot("kubeadm").topology()
    assert topology.cpus_in_numa_nodes([1]) == CPUSet.parse("4-7,12-15")
    assert topology.cpus_in_numa_nodes([0]) == CPUSet.parse("0-3,8-11")


def test_admission_then_topology_affinity_error() -> None:
    # 4 CPUs: only NUMA 1 has free allocatable CPUs, so the only preferred hint is {1} and
    # the static policy packs whole cores there. Then 6 CPUs: 4 are left, all on NUMA 1;
    # no single NUMA node can hold 6, and single-numa-node refuses a non-preferred merge
    # with the kubelet's TopologyAffinityError.
    answer = what_if(fixture_snapshot("kubeadm"), [pod("big", "4"), pod("huge", "6")])
    big, huge = answer.verdicts
    assert big.admitted
    placed = answer.report["events"][1]["containers"]["app"]
    assert placed["exclusive"]
    assert placed["numa"] == [1]
    assert CPUSet.parse(placed["cpus"]) <= CPUSet.parse("4-7,12-15")
    assert not huge.admitted
    assert huge.reason == "TopologyAffinityError"
    assert huge.message == "Resources cannot be allocated with Topology locality"
    assert any("single-numa-node" in line for line in huge.why)


def test_six_cpus_alone_fit_on_numa_1() -> None:
    # Without the first pod, NUMA 1's 8 free CPUs hold 6.
    answer = what_if(fixture_snapshot("kubeadm"), [pod("huge", "6")])
    assert answer.verdicts[0].admitted


def test_resource_fit_out_of_cpu_with_the_kubelets_message() -> None:
    # A Burstable pod gets no exclusive CPUs, so the managers admit it; the predicate then
    # counts the active pods' requests: 250m + 100m + 100m + 4 + 2 + 500m = 6950m (the
    # Succeeded report pod is not active), against 14 CPUs of allocatable: --reserved-cpus
    # 0,8 replaces systemReserved/kubeReserved cpu (the kubelet's server.go), 16 - 2.
    answer = what_if(fixture_snapshot("kubeadm"), [pod("wide", "10", limits=False)])
    verdict = answer.verdicts[0]
    assert verdict.reason == "OutOfcpu"
    assert verdict.message == (
        "Node didn't have enough resource: cpu, requested: 10000, used: 6950, capacity: 14000"
    )


def test_out_of_memory_keeps_the_handed_out_cpus_until_stale_state_removal() -> None:
    # The CPU manager hands out 2 CPUs before the predicate refuses the memory: allocatable
    # memory is 128 GiB minus the 100Mi memory.available hard eviction threshold.
    snapshot = fixture_snapshot("kubeadm")
    answer = what_if(snapshot, [pod("greedy", "2", "200Gi"), pod("small", "100m", limits=False)])
    greedy, small = answer.verdicts
    assert greedy.reason == "OutOfmemory"
    used = (256 + 100 + 70 + 64) * MiB + 10 * GiB
    assert greedy.message == (
        f"Node didn't have enough resource: memory, requested: {200 * GiB}, used: {used}, "
        f"capacity: {128 * GiB - 100 * MiB}"
    )
    held = CPUSet.parse(answer.report["events"][1]["containers"]["app"]["cpus"])
    assert len(held) == 2
    default_after_greedy = CPUSet.parse(answer.report["events"][1]["defaultCpuSet"])
    assert not held & default_after_greedy
    # The next admission's stale-state removal returns them (the pod never became active).
    assert small.admitted
    assert held <= CPUSet.parse(answer.report["events"][2]["defaultCpuSet"])


def test_out_of_pods_counts_active_pods() -> None:
    snapshot = fixture_snapshot("kubeadm")
    config = snapshot.kubelet_config()
    tight = replace(config, max_pods=6)  # six active pods already
    answer = what_if(snapshot, [pod("one", "100m", limits=False)], kubelet=tight)
    assert answer.verdicts[0].reason == "OutOfpods"
    assert answer.verdicts[0].message == (
        "Node didn't have enough resource: pods, requested: 1, used: 6, capacity: 6"
    )


def test_report_has_the_simulate_shape() -> None:
    answer = what_if(fixture_snapshot("kubeadm"), [pod("big", "4")], explain=True)
    report = json.loads(json.dumps(answer.report))
    assert [e["event"] for e in report["events"]] == ["start", "admit"]
    assert set(report) == {"scenario", "events", "final", "checkpoint", "metrics"}
    assert report["events"][0]["defaultCpuSet"] == "0,4-8,12-15"
    assert report["events"][1]["explain"][0]["container"] == "app"
    assert "uid-big" in report["final"]["entries"]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("corrupt-checkpoint", "corrupt"),
        ("policy-switched", 'configured policy "none" differs from state checkpoint policy'),
    ],
)
def test_a_node_the_kubelet_would_not_start_is_refused(name: str, expected: str) -> None:
    with pytest.raises(CheckpointError, match=expected):
        what_if(fixture_snapshot(name), [pod("big", "4")])


def test_gpu_devices_are_restored_from_the_device_checkpoint() -> None:
    # Four GPUs, two per NUMA node (from GetAllocatableResources); the device checkpoint
    # gives trainer-a GPU-0,1 (NUMA 0) and trainer-b GPU-2 (NUMA 1), so GPU-3 is left.
    snapshot = replace(fixture_snapshot("gpu"), pod_resources=fixture_answers(NODES_DIR / "gpu"))
    answer = what_if(snapshot, [pod("g1", "1", extra={"nvidia.com/gpu": 1})])
    assert answer.verdicts[0].admitted, answer.verdicts[0].why
    devices = answer.report["events"][1]["containers"]["app"]["devices"]["nvidia.com/gpu"]
    assert devices == ["GPU-3"]
    answer = what_if(snapshot, [pod("g2", "1", extra={"nvidia.com/gpu": 2})])
    assert not answer.verdicts[0].admitted


def test_allocatable_and_requests() -> None:
    snapshot = fixture_snapshot("kubeadm")
    alloc = node_allocatable(
        snapshot.topology(), snapshot.kubelet_config(), hugepages={}, devices=None
    )
    assert alloc.allocatable["cpu"] == 14000  # --reserved-cpus 0,8 counts as systemReserved
    assert alloc.allocatable["pods"] == 110
    assert pod_requests(pod("x", "250m")) == {"cpu": 250, "memory": GiB}


def test_resize_of_a_guaranteed_pod_follows_the_release() -> None:
    from fractions import Fraction

    from cpumanager.core.resize import CPU_INFEASIBLE
    from cpumanager.nodeanswers.whatif import ResizeRequest

    node = fixture_snapshot("kubeadm")
    grow = ResizeRequest("prod/db-0", "postgres", {"cpu": Fraction(6)})
    newest = what_if(node, [], resizes=[grow])
    assert [(r.admitted, r.reason, r.message) for r in newest.resizes] == [
        (False, "Infeasible", CPU_INFEASIBLE)
    ]
    # 1.34+ refuses only a changed CPU request: the same CPUs with more memory pass.
    memory = ResizeRequest("db-0", "postgres", {"memory": Fraction(16 * 2**30)})
    (applied,) = what_if(node, [], resizes=[memory]).resizes
    assert applied.admitted
    assert applied.pod.container("postgres").requests["memory"] == 16 * 2**30
    # 1.33 refuses every resize of a Guaranteed pod on a static node.
    (old,) = what_if(node, [], resizes=[memory], release=(1, 33)).resizes
    assert (old.admitted, old.reason) == (False, "Infeasible")


def test_resize_of_an_unknown_pod_or_container_is_an_input_error() -> None:
    from fractions import Fraction

    from cpumanager.errors import InputError
    from cpumanager.nodeanswers.whatif import ResizeRequest

    node = fixture_snapshot("kubeadm")
    with pytest.raises(InputError, match="no pod 'nope'"):
        what_if(node, [], resizes=[ResizeRequest("nope", "x", {"cpu": Fraction(1)})])
    with pytest.raises(InputError, match="no container 'x'"):
        what_if(node, [], resizes=[ResizeRequest("prod/db-0", "x", {"cpu": Fraction(1)})])


def test_pod_overhead_counts_in_the_fit_predicate() -> None:
    # PodRequests adds spec.overhead (from the RuntimeClass) after the containers: 7000m of
    # containers fit the 7050m left (14000 - 6950), 7000m + 100m of overhead does not.
    fits = pod("vm", "7", limits=False)
    assert what_if(fixture_snapshot("kubeadm"), [fits]).verdicts[0].admitted
    heavy = replace(fits, overhead={"cpu": Fraction(1, 10), "memory": Fraction(120 * MiB)})
    assert pod_requests(heavy) == {"cpu": 7100, "memory": GiB + 120 * MiB}
    verdict = what_if(fixture_snapshot("kubeadm"), [heavy]).verdicts[0]
    assert verdict.reason == "OutOfcpu"
    assert verdict.message == (
        "Node didn't have enough resource: cpu, requested: 7100, used: 6950, capacity: 14000"
    )


def test_overhead_alone_is_a_request() -> None:
    # A pod whose containers request nothing is still checked for its overhead.
    empty = replace(pod("bare", "0", limits=False), overhead={"cpu": Fraction(8)})
    assert pod_requests(empty)["cpu"] == 8000
    assert what_if(fixture_snapshot("kubeadm"), [empty]).verdicts[0].reason == "OutOfcpu"
