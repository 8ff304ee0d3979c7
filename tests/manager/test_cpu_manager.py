"""CPUManager lifecycle: restart, V1 migration, stale state, writes, reconcile, recovery.

Each test drives a real CPUManager through its ports (InMemoryStore keeps the exact bytes a
kubelet would have on disk; RecordingRuntime records every cpuset push). The literal file
contents come from the kubelet's checkpoint vectors (tests/data/checkpoints.json).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from cpumanager.adapters.memory_store import InMemoryStore
from cpumanager.adapters.runtimes.recording import RecordingRuntime
from cpumanager.checkpoint.cpu import codec
from cpumanager.checkpoint.cpu.model import CheckpointV2
from cpumanager.core.allocation.options import StaticPolicyOptions
from cpumanager.core.containermap import ContainerMap
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.events import Allocated, Reconciled, Released, Started, StateRepaired
from cpumanager.core.ids import ContainerID, ContainerName, PodUID
from cpumanager.core.reconcile import ContainerPhase, ContainerStatus
from cpumanager.core.restore import validation_problems
from cpumanager.core.state import StateSnapshot
from cpumanager.core.topology import CPUInfo, CPUTopology
from cpumanager.core.workload import ContainerKind, Pod
from cpumanager.errors import (
    CheckpointCorruptError,
    CheckpointError,
    NotEnoughCPUsError,
    StateValidationError,
    StoreError,
)
from cpumanager.presets import get_preset, synthetic
from tests.builders import container, cpus, guaranteed, pod, snapshot
from tests.checkpoint.vectors import ALL
from tests.manager.harness import Kubelet, container_id

VECTORS = {v.name: v.content for v in ALL}


def vector(name: str) -> bytes:
    content = VECTORS[name]
    assert content is not None
    return content


def flat_machine(n: int) -> CPUTopology:
    """``n`` CPUs, one core each, one socket, one NUMA node."""
    return CPUTopology(CPUInfo(cpu=i, core=i, socket=0, numa=0, l3=0) for i in range(n))


def shared(uid: str, name: str = "app") -> Pod:
    return pod(uid, container(name, "500m"))


def agrees(k: Kubelet) -> bool:
    """Memory and disk hold the same state."""
    return k.store.load(k.policy_name, ContainerMap()) == k.m.snapshot


# --- first start and the kubelet's file contents ------------------------------------------


def test_first_start_writes_the_kubelets_two_files() -> None:
    k = Kubelet(topology=synthetic(sockets=2, cores_per_numa=16, threads=2))
    k.start()
    assert k.store.history == [
        vector("derived/kubelet-initial-static-before-policy-start"),
        vector("derived/blog-static-0-63"),
    ]
    assert k.m.snapshot.default_cpuset == cpus("0-63")
    started = k.log.of(Started)
    assert len(started) == 1
    assert started[0].source == "new"


def test_first_start_with_strict_reservation_keeps_reserved_out_of_the_file() -> None:
    k = Kubelet(
        topology=synthetic(sockets=2, cores_per_numa=16, threads=2),
        reserved="0-1,16,32-33,48",
        options=StaticPolicyOptions.parse({"strict-cpu-reservation": "true"}),
    )
    k.start()
    assert k.store.history[-1] == vector("derived/blog-static-strict")
    assert k.m.allocatable_cpus() == cpus("2-15,17-31,34-47,49-63")


def test_first_start_of_the_none_policy_writes_one_file() -> None:
    k = Kubelet(policy_name="none")
    k.start()
    assert k.store.history == [vector("derived/kubelet-initial-none")]


# --- restart with running containers ------------------------------------------------------


def restarted_kubelet() -> Kubelet:
    k = Kubelet()
    k.start()
    k.admit(guaranteed("p1", app="2"))
    k.admit(guaranteed("p2", web="1", db="2"))
    k.admit(shared("p3"))
    return k


def test_restart_restores_the_state_and_writes_nothing() -> None:
    k = restarted_kubelet()
    before = k.m.snapshot
    writes = len(k.store.history)
    k.start()
    assert k.m.snapshot == before
    assert len(k.store.history) == writes
    assert k.log.of(Started)[-1].source == "checkpoint"


def test_restart_builds_the_container_map_from_running_containers() -> None:
    k = restarted_kubelet()
    k.start()
    for key, cid in k.running.items():
        assert k.m.container_map.container_ref(cid) == key
    held = k.m.exclusive_cpus(PodUID("p1"), ContainerName("app"))
    returned = k.m.remove_container(container_id("p1", "app"))
    assert returned == held
    assert held <= k.m.snapshot.default_cpuset


def test_restart_without_running_containers_cannot_remove_by_id() -> None:
    k = restarted_kubelet()
    k.start(running=[])
    before = k.m.snapshot
    assert k.m.remove_container(container_id("p1", "app")) == CPUSet()
    assert k.m.snapshot == before


def test_readmission_after_restart_keeps_the_cpus_without_writing() -> None:
    k = restarted_kubelet()
    held = k.m.exclusive_cpus(PodUID("p1"), ContainerName("app"))
    k.start()
    writes = len(k.store.history)
    again = k.admit(k.pods[PodUID("p1")])
    assert again == {"app": held}
    assert len(k.store.history) == writes
    last = k.log.of(Allocated)[-1]
    assert last.reused


def test_restart_seeds_nothing_so_every_running_container_is_pushed_once() -> None:
    k = restarted_kubelet()
    k.start()
    runtime = RecordingRuntime()
    report = k.m.reconcile(runtime, k.statuses())
    assert sorted(cid for cid, _ in runtime.calls) == sorted(k.running.values())
    assert len(report.updated) == len(k.running)
    runtime.clear()
    k.m.reconcile(runtime, k.statuses())
    assert runtime.calls == []


# --- V1 checkpoints -----------------------------------------------------------------------

V1_RUNNING = [
    (ContainerID("cid-app"), PodUID("pod-uid-1"), ContainerName("app")),
    (ContainerID("cid-sidecar"), PodUID("pod-uid-1"), ContainerName("sidecar")),
]
V1_POD = pod("pod-uid-1", container("app", "2"), container("sidecar", "1"))


def v1_kubelet() -> Kubelet:
    k = Kubelet(topology=flat_machine(9), store=InMemoryStore(vector("derived/v1-canonical")))
    k.pods[V1_POD.uid] = V1_POD
    return k


def test_v1_file_is_migrated_at_start_through_the_running_containers() -> None:
    k = v1_kubelet()
    k.start(running=V1_RUNNING)
    assert k.m.snapshot == snapshot("0,3-7", **{"pod-uid-1": {"app": "1-2", "sidecar": "8"}})
    assert k.store.history == []  # no write on restore: the file stays V1
    assert k.store.data == vector("derived/v1-canonical")


def test_v1_file_is_rewritten_as_v2_on_the_first_change() -> None:
    k = v1_kubelet()
    k.start(running=V1_RUNNING)
    k.admit(guaranteed("p2", app="1"))
    assert len(k.store.history) == 1
    decoded = codec.decode(k.store.history[0], source="test")
    assert isinstance(decoded, CheckpointV2)
    assert decoded.plain_entries() == {
        "p2": {"app": "0"},
        "pod-uid-1": {"app": "1-2", "sidecar": "8"},
    }
    # Release p2 again: the file is exactly the kubelet's V2 rendering of the V1 state.
    k.m.remove_container(container_id("p2", "app"))
    assert k.store.data == vector("derived/one-pod-two-containers")


def test_v1_file_with_an_unknown_container_refuses_to_start_and_writes_nothing() -> None:
    k = v1_kubelet()
    with pytest.raises(StateValidationError, match="cid-sidecar"):
        k.start(running=V1_RUNNING[:1])
    assert k.store.history == []
    assert k.store.data == vector("derived/v1-canonical")


def test_v1_file_of_a_running_pod_is_kept_when_a_stale_pod_is_released() -> None:
    k = v1_kubelet()
    k.pods.clear()  # pod-uid-1 exited while the kubelet was down
    k.start(running=V1_RUNNING)
    assert k.m.snapshot == snapshot("0-8")
    assert len(k.store.history) == 2  # one write per released container, in V2
    assert isinstance(codec.decode(k.store.data or b"", source="t"), CheckpointV2)


# --- stale state --------------------------------------------------------------------------


def test_pod_that_exited_while_down_is_reclaimed_at_start_with_no_active_pod() -> None:
    k = restarted_kubelet()
    k.pods.clear()
    k.running.clear()
    k.start(running=[])
    assert k.m.snapshot == snapshot("0-7")
    assert agrees(k)
    stale = [e for e in k.log.of(Released) if e.reason == "stale"]
    assert {(e.pod_uid, e.container_name) for e in stale} == {
        ("p1", "app"),
        ("p2", "web"),
        ("p2", "db"),
    }


def test_nothing_is_reclaimed_at_start_while_sources_are_not_ready() -> None:
    k = restarted_kubelet()
    before = k.m.snapshot
    writes = len(k.store.history)
    k.pods.clear()
    k.ready = False
    k.start()
    assert k.m.snapshot == before
    assert len(k.store.history) == writes
    assert k.m.remove_stale_state() == ()
    k.ready = True
    assert len(k.m.remove_stale_state()) == 4  # three assignments, one mapped shared one
    assert k.m.snapshot == snapshot("0-7")


def test_only_the_pods_that_are_gone_are_reclaimed() -> None:
    k = restarted_kubelet()
    p1_cpus = k.m.exclusive_cpus(PodUID("p1"), ContainerName("app"))
    del k.pods[PodUID("p2")]
    k.start()
    assert k.m.snapshot.cpuset_of(PodUID("p1"), ContainerName("app")) == p1_cpus
    assert PodUID("p2") not in k.m.snapshot.assignments


def test_stale_state_is_gone_before_hints_are_generated() -> None:
    k = Kubelet()
    k.start()
    k.admit(guaranteed("big", app="4"))  # a whole NUMA node
    held = k.m.exclusive_cpus(PodUID("big"), ContainerName("app"))
    k.delete("big")
    wanted = guaranteed("next", app="4")
    hints = k.m.topology_hints(wanted, wanted.containers[0])
    preferred = [h for h in hints["cpu"] if h.preferred]  # type: ignore[union-attr]
    assert len(preferred) == 2  # both NUMA nodes can hold 4 CPUs again
    assert held <= k.m.snapshot.default_cpuset


def test_stale_state_is_gone_before_pod_hints_are_generated() -> None:
    k = Kubelet()
    k.start()
    k.admit(guaranteed("big", app="4"))
    k.delete("big")
    wanted = guaranteed("next", app="4")
    hints = k.m.pod_topology_hints(wanted)
    assert len([h for h in hints["cpu"] if h.preferred]) == 2  # type: ignore[union-attr]


def test_stale_state_is_gone_before_the_next_allocation() -> None:
    k = Kubelet()
    k.start()
    k.admit(guaranteed("all", app="8"))
    with pytest.raises(NotEnoughCPUsError):
        k.admit(guaranteed("more", app="1"))
    k.delete("more")
    k.delete("all")
    assert k.admit(guaranteed("again", app="8")) == {"app": cpus("0-7")}


def test_a_rejected_pod_keeps_its_cpus_until_the_next_stale_removal() -> None:
    k = Kubelet()
    k.start()
    with pytest.raises(NotEnoughCPUsError):
        k.admit(guaranteed("greedy", a="6", b="6"))
    assert k.m.snapshot.cpuset_of(PodUID("greedy"), ContainerName("a")) is not None
    del k.pods[PodUID("greedy")]  # the kubelet marks the rejected pod failed
    assert k.admit(guaranteed("fits", app="8")) == {"app": cpus("0-7")}


def test_container_map_entries_of_gone_pods_are_dropped() -> None:
    k = Kubelet()
    k.start()
    k.admit(shared("web"))
    assert ContainerID("cid-web-app") in k.m.container_map
    k.delete("web")
    k.m.remove_stale_state()
    assert len(k.m.container_map) == 0


def test_every_container_id_of_a_gone_container_is_dropped_in_one_pass() -> None:
    k = Kubelet()
    k.start()
    p = guaranteed("p1", app="1")
    k.admit(p)
    k.m.add_container(p, p.containers[0], ContainerID("restarted"))  # a second ID
    k.delete("p1")
    k.m.remove_stale_state()
    assert len(k.m.container_map) == 0


# --- writes -------------------------------------------------------------------------------


def test_allocation_writes_once_with_the_kubelets_final_contents() -> None:
    k = Kubelet()
    k.start()
    writes = len(k.store.history)
    k.admit(guaranteed("p1", app="2"))
    assert len(k.store.history) == writes + 1
    # The kubelet writes default-minus-new, then the assignment; we persist the final file
    # in one atomic write (no crash window with an invalid file).
    assert k.store.history[-1] == (
        b'{"policyName":"static","defaultCpuSet":"1-3,5-7",'
        b'"entries":{"p1":{"app":"0,4"}},"checksum":' + checksum_of(k) + b"}"
    )


def checksum_of(k: Kubelet) -> bytes:
    decoded = codec.decode(k.store.history[-1], source="t")
    return str(decoded.checksum).encode()


def test_release_writes_once_with_the_kubelets_final_contents() -> None:
    k = Kubelet()
    k.start()
    k.admit(guaranteed("p1", app="2"))
    k.admit(guaranteed("p2", app="2"))
    writes = len(k.store.history)
    k.m.remove_container(container_id("p1", "app"))
    assert len(k.store.history) == writes + 1
    decoded = codec.decode(k.store.history[-1], source="t")
    assert isinstance(decoded, CheckpointV2)
    assert decoded.default_cpu_set == "0,2-4,6-7"
    assert decoded.plain_entries() == {"p2": {"app": "1,5"}}


def test_shared_containers_and_readmissions_write_nothing() -> None:
    k = Kubelet()
    k.start()
    p = guaranteed("p1", app="2")
    k.admit(p)
    writes = len(k.store.history)
    k.admit(shared("s1"))
    k.m.allocate(p, p.containers[0])
    k.m.remove_container(ContainerID("unknown"))
    k.m.remove_container(container_id("s1", "app"))
    assert len(k.store.history) == writes


def test_every_write_is_a_valid_kubelet_checkpoint() -> None:
    k = restarted_kubelet()
    k.delete("p2")
    k.admit(guaranteed("p4", a="3"))
    for data in k.store.history:
        decoded = codec.decode(data, source="t")
        assert isinstance(decoded, CheckpointV2)
        assert codec.encode_checkpoint(decoded) == data


# --- add_container and reconcile ----------------------------------------------------------


def test_add_container_seeds_the_last_applied_cache() -> None:
    k = Kubelet()
    k.start()
    k.admit(guaranteed("p1", app="2"))
    k.admit(shared("s1"))
    key = guaranteed("p1", app="2").key("app")
    assert k.m.last_applied() == {key: k.m.exclusive_cpus(key.pod_uid, key.container_name)}
    runtime = RecordingRuntime()
    report = k.m.reconcile(runtime, k.statuses())
    # The exclusive container was given its set at creation: not pushed again.
    assert runtime.calls == [(container_id("s1", "app"), k.m.snapshot.default_cpuset)]
    assert report.unchanged == (key,)


def test_shared_containers_are_pushed_again_only_when_the_default_set_changes() -> None:
    k = Kubelet()
    k.start()
    k.admit(shared("s1"))
    runtime = RecordingRuntime()
    sid = container_id("s1", "app")
    k.m.reconcile(runtime, k.statuses())
    k.m.reconcile(runtime, k.statuses())
    assert runtime.calls_for(sid) == [cpus("0-7")]
    k.admit(guaranteed("p1", app="2"))
    k.m.reconcile(runtime, k.statuses())
    k.m.reconcile(runtime, k.statuses())
    assert runtime.calls_for(sid) == [cpus("0-7"), cpus("1-3,5-7")]
    k.delete("p1")
    k.m.reconcile(runtime, k.statuses())
    assert runtime.calls_for(sid) == [cpus("0-7"), cpus("1-3,5-7"), cpus("0-7")]


def test_terminated_containers_are_skipped_without_release() -> None:
    k = Kubelet()
    k.start()
    p = guaranteed("p1", app="2")
    k.admit(p)
    held = k.m.snapshot
    statuses = [ContainerStatus(p.key("app"), container_id("p1", "app"), ContainerPhase.TERMINATED)]
    runtime = RecordingRuntime()
    report = k.m.reconcile(runtime, statuses)
    assert report == type(report)((), (), ())
    assert runtime.calls == []
    assert k.m.snapshot == held


def test_waiting_and_unknown_containers_are_failures() -> None:
    k = Kubelet()
    k.start()
    k.admit(guaranteed("p1", app="2"), run=False)
    k.admit(shared("s1"), run=False)
    waiting = ContainerStatus(
        guaranteed("p1", app="2").key("app"), ContainerID("c1"), ContainerPhase.WAITING
    )
    report = k.m.reconcile(RecordingRuntime(), [waiting])
    assert [key.pod_uid for key, _ in report.failed] == ["p1", "s1"]
    assert report.updated == ()


def test_failed_applies_are_retried_on_the_next_pass() -> None:
    k = Kubelet()
    k.start()
    k.admit(shared("s1"))
    k.admit(shared("s2"))
    sid = container_id("s1", "app")
    runtime = RecordingRuntime(fail_for=[sid])
    report = k.m.reconcile(runtime, k.statuses())
    assert [key.pod_uid for key, _ in report.failed] == ["s1"]
    assert "injected failure" in report.failed[0][1]
    assert [key.pod_uid for key, _ in report.updated] == ["s2"]
    runtime.fail_for.clear()
    report = k.m.reconcile(runtime, k.statuses())
    assert [key.pod_uid for key, _ in report.updated] == ["s1"]
    assert runtime.calls_for(sid) == [cpus("0-7"), cpus("0-7")]
    assert runtime.verify(sid) == cpus("0-7")


def test_reconcile_repairs_the_container_map_after_a_restart() -> None:
    k = restarted_kubelet()
    k.start(running=[])
    assert len(k.m.container_map) == 0
    k.m.reconcile(RecordingRuntime(), k.statuses())
    assert k.m.container_map.container_ref(container_id("p1", "app")) == guaranteed(
        "p1", app="2"
    ).key("app")


def test_reconcile_removes_stale_state_first() -> None:
    k = restarted_kubelet()
    k.delete("p1")
    runtime = RecordingRuntime()
    k.m.reconcile(runtime, k.statuses())
    assert PodUID("p1") not in k.m.snapshot.assignments
    # p3's shared container already sees the CPUs p1 gave back.
    assert runtime.calls_for(container_id("p3", "app")) == [k.m.snapshot.default_cpuset]
    assert k.log.of(Reconciled)


def test_reconcile_under_the_none_policy_does_nothing() -> None:
    k = Kubelet(policy_name="none")
    k.start()
    k.admit(shared("s1"))
    runtime = RecordingRuntime()
    report = k.m.reconcile(runtime, k.statuses())
    assert runtime.calls == []
    assert report.failed == ()


# --- remove_container, init containers ----------------------------------------------------


def test_remove_container_by_unknown_id_is_a_no_op() -> None:
    k = restarted_kubelet()
    before, events, writes = k.m.snapshot, len(k.log.events), len(k.store.history)
    assert k.m.remove_container(ContainerID("nobody")) == CPUSet()
    assert (k.m.snapshot, len(k.log.events), len(k.store.history)) == (before, events, writes)


def init_pod() -> Pod:
    return pod(
        "p1",
        container("app", "4"),
        init=(container("init", "2", kind=ContainerKind.INIT),),
    )


def test_app_container_reuses_the_init_containers_cpus() -> None:
    k = Kubelet(topology=get_preset("single-socket-ht"))
    k.start()
    given = k.admit(init_pod())
    assert given == {"init": cpus("0,4"), "app": cpus("0-1,4-5")}
    assert k.m.snapshot.default_cpuset == cpus("2-3,6-7")
    assert k.m.snapshot.invariant_violations(k.topology.all_cpus) == ()


def test_releasing_the_init_container_keeps_cpus_its_sibling_still_holds() -> None:
    k = Kubelet(topology=get_preset("single-socket-ht"))
    k.start()
    k.admit(init_pod())
    assert k.m.remove_container(container_id("p1", "init")) == CPUSet()
    assert k.m.snapshot.default_cpuset == cpus("2-3,6-7")
    assert k.m.remove_container(container_id("p1", "app")) == cpus("0-1,4-5")
    assert k.m.snapshot == snapshot("0-7")


def test_overlapping_init_and_app_sets_survive_a_restart() -> None:
    k = Kubelet(topology=get_preset("single-socket-ht"))
    k.start()
    k.admit(init_pod())
    before = k.m.snapshot
    k.start()
    assert k.m.snapshot == before


def test_stale_release_of_a_pod_with_reused_cpus_returns_everything() -> None:
    k = Kubelet(topology=get_preset("single-socket-ht"))
    k.start()
    k.admit(init_pod())
    k.delete("p1")
    k.m.remove_stale_state()
    assert k.m.snapshot == snapshot("0-7")
    assert k.m.snapshot.invariant_violations(k.topology.all_cpus) == ()


# --- refusal (the kubelet's default) versus recovery --------------------------------------


def assigned_kubelet(reserved: str = "0") -> Kubelet:
    """p1 on core 1 ({1,5}), p2 on core 2 ({2,6}); CPU 0 reserved."""
    k = Kubelet(reserved=reserved)
    k.start()
    k.admit(guaranteed("p1", app="2"))
    k.admit(guaranteed("p2", app="2"))
    assert k.m.exclusive_cpus(PodUID("p1"), ContainerName("app")) == cpus("1,5")
    assert k.m.exclusive_cpus(PodUID("p2"), ContainerName("app")) == cpus("2,6")
    return k


def change_policy(k: Kubelet) -> None:
    k.policy_name = "none"


def widen_reservation(k: Kubelet) -> None:
    k.reserved = "0-1"  # CPU 1 is p1's


def unplug_cpu_6(k: Kubelet) -> None:
    k.topology = k.topology.restricted_to(k.topology.all_cpus - cpus("6"))  # p2's


def plug_cpu_8(k: Kubelet) -> None:
    k.topology = synthetic(sockets=3, cores_per_numa=2, threads=2).restricted_to(cpus("0-8"))


def corrupt(k: Kubelet) -> None:
    assert k.store.data is not None
    k.store.data = k.store.data.replace(b'"checksum":', b'"checksum":1')


def crash_between_writes(k: Kubelet) -> None:
    """The kubelet's first write of an allocation (default shrunk, no assignment yet)."""
    k.store.data = codec.encode_v2(snapshot("0,3-4,7", p1={"app": "1,5"}))


REFUSALS = [
    pytest.param(change_policy, StateValidationError, "differs from state checkpoint", id="policy"),
    pytest.param(widen_reservation, StateValidationError, "not all reserved", id="reservation"),
    pytest.param(unplug_cpu_6, StateValidationError, "doesn't match", id="cpu-unplugged"),
    pytest.param(plug_cpu_8, StateValidationError, "doesn't match", id="cpu-plugged"),
    pytest.param(corrupt, CheckpointCorruptError, "corrupt", id="corrupt"),
    pytest.param(crash_between_writes, StateValidationError, "doesn't match", id="torn-write"),
]


@pytest.mark.parametrize(("change", "error", "text"), REFUSALS)
def test_by_default_a_misfit_state_refuses_to_start_and_writes_nothing(
    change: Callable[[Kubelet], None], error: type[CheckpointError], text: str
) -> None:
    k = assigned_kubelet()
    change(k)
    data, writes = k.store.data, len(k.store.history)
    with pytest.raises(error, match=text):
        k.start()
    assert k.store.data == data
    assert len(k.store.history) == writes


@pytest.mark.parametrize(("change", "error", "text"), REFUSALS)
def test_recovery_repairs_the_state_and_reports_every_change(
    change: Callable[[Kubelet], None], error: type[CheckpointError], text: str
) -> None:
    k = assigned_kubelet()
    change(k)
    k.log.events.clear()
    k.start(recover=True)
    repaired = k.log.of(StateRepaired)
    assert repaired, "recovery must report what it changed"
    policy = k.m.policy
    strict = bool(getattr(policy, "strict_reservation", False))
    assert (
        k.m.snapshot.policy_name == "none"
        or validation_problems(
            k.m.snapshot,
            all_cpus=k.topology.all_cpus,
            reserved=policy.reserved_cpus,
            strict_reservation=strict,
        )
        == ()
    )
    assert agrees(k)
    # The repaired file starts cleanly next time, without recovery and without a write.
    writes = len(k.store.history)
    k.start()
    assert len(k.store.history) == writes


@pytest.mark.parametrize(
    ("change", "kept", "dropped"),
    [
        (widen_reservation, "p2", "p1"),
        (unplug_cpu_6, "p1", "p2"),
        (plug_cpu_8, "p1", None),
        (crash_between_writes, "p1", None),
    ],
    ids=["reservation", "cpu-unplugged", "cpu-plugged", "torn-write"],
)
def test_recovery_keeps_every_assignment_that_is_still_valid(
    change: Callable[[Kubelet], None], kept: str, dropped: str | None
) -> None:
    k = assigned_kubelet()
    before = k.m.snapshot
    change(k)
    k.log.events.clear()
    k.start(recover=True)
    app = ContainerName("app")
    assert k.m.snapshot.cpuset_of(PodUID(kept), app) == before.cpuset_of(PodUID(kept), app)
    if dropped is not None:
        assert k.m.snapshot.cpuset_of(PodUID(dropped), app) is None
        events = [e for e in k.log.of(StateRepaired) if e.pod_uid == dropped]
        assert [e.cpus for e in events] == [before.cpuset_of(PodUID(dropped), app)]
    assert (
        k.m.snapshot.invariant_violations(k.topology.all_cpus, reserved=k.m.policy.reserved_cpus)
        == ()
    )


def test_recovery_from_a_policy_change_starts_the_new_policy_afresh() -> None:
    k = assigned_kubelet()
    change_policy(k)
    k.start(recover=True)
    assert k.store.data == vector("derived/kubelet-initial-none")
    assert "differs from state checkpoint policy" in k.log.of(StateRepaired)[0].description


def test_recovery_of_a_sound_state_changes_nothing() -> None:
    k = assigned_kubelet()
    before, writes = k.m.snapshot, len(k.store.history)
    k.log.events.clear()
    k.start(recover=True)
    assert k.m.snapshot == before
    assert len(k.store.history) == writes
    assert k.log.of(StateRepaired) == []


# --- failure injection: a failed write leaves memory and disk in agreement ----------------


def failing(k: Kubelet) -> tuple[object, bytes | None, int]:
    k.store.fail_saves = True
    return k.m.snapshot, k.store.data, len(k.store.history)


def unchanged(k: Kubelet, before: tuple[object, bytes | None, int]) -> None:
    snap, data, writes = before
    assert k.m.snapshot == snap
    assert (k.store.data, len(k.store.history)) == (data, writes)
    assert agrees(k)


def test_failed_write_on_allocate_keeps_the_old_state() -> None:
    k = assigned_kubelet()
    before = failing(k)
    events = len(k.log.events)
    p = guaranteed("p3", app="2")
    with pytest.raises(StoreError, match="injected"):
        k.admit(p)
    unchanged(k, before)
    assert not [e for e in k.log.events[events:] if isinstance(e, Allocated)]
    # The same admission succeeds once the disk is back, with the same CPUs.
    k.store.fail_saves = False
    assert k.admit(p) == {"app": cpus("3,7")}
    assert agrees(k)


def test_failed_write_on_remove_keeps_the_assignment_and_the_container_id() -> None:
    k = assigned_kubelet()
    before = failing(k)
    cid = container_id("p1", "app")
    with pytest.raises(StoreError):
        k.m.remove_container(cid)
    unchanged(k, before)
    assert cid in k.m.container_map
    assert guaranteed("p1", app="2").key("app") in k.m.last_applied()
    k.store.fail_saves = False
    assert k.m.remove_container(cid) == cpus("1,5")
    assert agrees(k)


def test_failed_write_during_stale_removal_keeps_memory_and_disk_together() -> None:
    k = assigned_kubelet()
    k.pods.clear()
    before = failing(k)
    with pytest.raises(StoreError):
        k.m.remove_stale_state()
    unchanged(k, before)
    with pytest.raises(StoreError):
        k.m.topology_hints(guaranteed("p9", app="1"), guaranteed("p9", app="1").containers[0])
    unchanged(k, before)
    k.store.fail_saves = False
    k.m.remove_stale_state()
    assert k.m.snapshot == snapshot("0-7")
    assert agrees(k)


def test_failed_second_stale_release_keeps_the_first() -> None:
    k = assigned_kubelet()
    k.pods.clear()
    k.store.fail_saves = False
    saves = 0
    original = k.store.save

    def save_once(snap: StateSnapshot) -> None:
        nonlocal saves
        saves += 1
        if saves > 1:
            msg = "disk full"
            raise StoreError(msg)
        original(snap)

    k.store.save = save_once  # type: ignore[method-assign]
    with pytest.raises(StoreError):
        k.m.remove_stale_state()
    assert list(k.m.snapshot.assignments) == ["p2"]
    assert agrees(k)


def test_failed_write_at_first_start_leaves_no_state_and_no_started_manager() -> None:
    k = Kubelet()
    k.store.fail_saves = True
    with pytest.raises(StoreError):
        k.start()
    assert k.store.data is None
    assert k.store.history == []
    assert k.log.of(Started) == []


def test_failed_write_at_a_recovering_start_keeps_the_file() -> None:
    k = assigned_kubelet()
    widen_reservation(k)
    data = k.store.data
    k.store.fail_saves = True
    with pytest.raises(StoreError):
        k.start(recover=True)
    assert k.store.data == data


class LaxStore(InMemoryStore):
    """A store that hands over another policy's state (ours check the name themselves)."""

    def load(self, policy_name: str, container_map: ContainerMap) -> StateSnapshot | None:
        return super().load("static", container_map)


def test_a_store_that_skips_the_policy_check_is_still_refused() -> None:
    k = assigned_kubelet()
    lax = LaxStore(k.store.data)
    k2 = Kubelet(policy_name="none", store=lax)
    with pytest.raises(StateValidationError, match="differs from state checkpoint policy"):
        k2.start()
    assert lax.history == []
    k2.start(recover=True)
    assert k2.m.snapshot.policy_name == "none"
    assert "replaced by 'none'" in k2.log.of(StateRepaired)[0].description


# --- strict reservation: an empty default set ----------------------------------------------


def full_strict_kubelet() -> Kubelet:
    """Strict reservation of CPUs 0 and 4; one pod holds every other CPU."""
    k = Kubelet(
        topology=get_preset("single-socket-ht"),
        reserved="0,4",
        options=StaticPolicyOptions.parse({"strict-cpu-reservation": "true"}),
    )
    k.start()
    k.admit(guaranteed("all", app="6"))
    assert k.m.snapshot.default_cpuset == CPUSet()
    return k


def test_a_node_whose_allocatable_cpus_are_all_exclusive_cannot_restart_like_the_kubelet() -> None:
    k = full_strict_kubelet()
    writes = len(k.store.history)
    with pytest.raises(StateValidationError, match="default cpuset cannot be empty"):
        k.start()
    assert len(k.store.history) == writes


def test_recovery_keeps_a_sound_state_with_an_empty_default_set() -> None:
    k = full_strict_kubelet()
    before, writes = k.m.snapshot, len(k.store.history)
    k.log.events.clear()
    k.start(recover=True)
    assert k.m.snapshot == before
    assert len(k.store.history) == writes
    [event] = k.log.of(StateRepaired)
    assert "empty default CPU set" in event.description
    # Releasing the pod makes the state acceptable to the kubelet again.
    k.delete("all")
    k.m.remove_stale_state()
    k.start()
    assert k.m.snapshot.default_cpuset == cpus("1-3,5-7")


def test_the_none_policy_has_nothing_allocatable_and_shares_every_cpu() -> None:
    k = Kubelet(policy_name="none")
    k.start()
    assert k.m.allocatable_cpus() == CPUSet()
    p = guaranteed("p1", app="2")
    assert k.admit(p) == {"app": cpus("0-7")}
    assert k.m.exclusive_cpus(p.uid, ContainerName("app")) == CPUSet()
    assert len(k.store.history) == 1


def test_the_pod_being_admitted_counts_as_active_even_if_not_listed_yet() -> None:
    k = Kubelet()
    k.start()
    p = guaranteed("p1", a="2", b="2")
    got = {c.name: k.m.allocate(p, c) for c in p.containers}  # p1 is not in k.pods
    assert k.m.snapshot.cpuset_of(p.uid, ContainerName("a")) == got["a"]
    assert k.m.snapshot.cpuset_of(p.uid, ContainerName("b")) == got["b"]
    k.m.remove_stale_state()  # once the admission is over, an unlisted pod is stale
    assert k.m.snapshot == snapshot("0-7")
