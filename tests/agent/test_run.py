"""RunSession: admission through a real Node, release, ownership of shared state entries."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

import pytest

from cpumanager.adapters.memory_store import InMemoryStore
from cpumanager.agent.owners import (
    is_run_uid,
    parse_run_uid,
    placeholder_pods,
    run_owner_alive,
    run_pod_uid,
)
from cpumanager.agent.run import RunSession, exit_code_of, pod_for_this_process, run_pod
from cpumanager.core.containermap import ContainerMap
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.ids import ContainerName, PodUID
from cpumanager.core.state import StateSnapshot
from cpumanager.core.workload import Pod, QoSClass, qos_class
from cpumanager.errors import AllocationError, InputError, StoreError, WorkloadError
from cpumanager.formats.kubelet_config import KubeletConfig
from cpumanager.manager.node import Node
from cpumanager.presets import synthetic

MAIN = ContainerName("main")


class Harness:
    def __init__(self, policy: str = "best-effort") -> None:
        self.store = InMemoryStore()
        self.live: set[str] = set()
        self.locks = 0
        self.lock_fails = False
        kubelet = KubeletConfig.from_mapping(
            {"cpuManagerPolicy": "static", "kubeReserved": {"cpu": "1"},
             "topologyManagerPolicy": policy}
        )  # fmt: skip
        topology = synthetic(sockets=2, cores_per_numa=2, threads=2)  # 8 CPUs, 2 NUMA nodes
        self.session = RunSession(
            node_factory=lambda: Node(topology=topology, kubelet=kubelet, store=self.store),
            lock=self.lock,
            run_owner_alive=lambda uid: uid in self.live,
        )

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        if self.lock_fails:
            raise StoreError("state directory 'x' is in use by pid 1")
        self.locks += 1
        yield

    def snapshot(self) -> StateSnapshot:
        loaded = self.store.load("static", ContainerMap())
        assert loaded is not None
        return loaded


def pod(pid: int, cpus: int = 2) -> Pod:
    return pod_for_this_process(cpus=cpus, memory="1Gi", pid=pid, started=1000.0 + pid)


def test_admission_persists_exclusive_cpus_on_one_numa_node() -> None:
    h = Harness()
    me = pod(10)
    h.live.add(me.uid)
    admission = h.session.admit(me)
    assert len(admission.cpus) == 2
    assert len(admission.numa_nodes) == 1
    assert h.locks == 1
    assert h.snapshot().assignments[me.uid][MAIN] == admission.cpus
    assert admission.to_json()["uid"] == me.uid


def test_two_runs_get_disjoint_cpus_and_release_returns_them() -> None:
    h = Harness()
    first, second = pod(10), pod(11)
    h.live |= {first.uid, second.uid}
    a = h.session.admit(first).cpus
    b = h.session.admit(second).cpus
    assert not a & b
    assert h.session.release(first) is None
    state = h.snapshot()
    assert first.uid not in state.assignments
    assert state.assignments[second.uid][MAIN] == b
    assert a <= state.default_cpuset


def test_a_run_whose_owner_died_is_reclaimed_by_the_next_run() -> None:
    h = Harness()
    dead, me = pod(10, cpus=3), pod(11, cpus=3)
    h.live.add(me.uid)
    h.session.admit(dead)  # its owner is not in h.live: gone
    h.session.admit(me)
    assert set(h.snapshot().assignments) == {me.uid}


def test_agent_entries_are_kept_by_runs() -> None:
    h = Harness()
    agent_state = StateSnapshot(
        "static", CPUSet.parse("0,3-7"), {PodUID("agent-pod"): {MAIN: CPUSet.parse("1-2")}}
    )
    h.store.save(agent_state)
    me = pod(10)
    h.live.add(me.uid)
    cpus = h.session.admit(me).cpus
    assert not cpus & CPUSet.parse("1-2")
    h.session.release(me)
    assert h.snapshot().assignments == {PodUID("agent-pod"): {MAIN: CPUSet.parse("1-2")}}


def test_rejection_carries_the_kubelet_reason_and_leaves_no_state() -> None:
    h = Harness(policy="single-numa-node")
    me = pod(10, cpus=5)  # more than one NUMA node holds
    with pytest.raises(AllocationError, match="pod rejected: TopologyAffinityError") as caught:
        h.session.admit(me)
    assert caught.value.reason == "TopologyAffinityError"
    assert caught.value.exit_code == 1
    assert h.snapshot().assignments == {}


def test_busy_state_dir_on_release_is_reported_not_raised() -> None:
    h = Harness()
    me = pod(10)
    h.session.admit(me)
    h.lock_fails = True
    assert "in use" in (h.session.release(me) or "")


def test_unlocked_admission_for_dry_runs() -> None:
    h = Harness()
    h.session.admit(pod(10), locked=False)
    assert h.locks == 0


def test_execute_pins_the_child_and_returns_its_code() -> None:
    h = Harness()
    code = h.session.execute(
        [sys.executable, "-c", "import os, sys; sys.exit(10 + min(os.sched_getaffinity(0)))"],
        CPUSet([0]),
    )
    assert code == 10


@pytest.mark.parametrize(
    ("command", "message"), [((), "after '--'"), (("/nonexistent/cmd",), "not found")]
)
def test_execute_bad_commands(command: tuple[str, ...], message: str) -> None:
    with pytest.raises(InputError, match=message):
        Harness().session.execute(command, CPUSet([0]))


def test_run_pod_is_guaranteed() -> None:
    p = run_pod(uid=PodUID("u"), name="n", cpus=3, memory="512Mi")
    assert qos_class(p) is QoSClass.GUARANTEED
    with pytest.raises(InputError, match="at least 1"):
        run_pod(uid=PodUID("u"), name="n", cpus=0, memory="1Gi")
    with pytest.raises(WorkloadError):
        run_pod(uid=PodUID("u"), name="n", cpus=1, memory="lots")


@pytest.mark.parametrize(("returncode", "code"), [(0, 0), (3, 3), (-15, 143), (-9, 137)])
def test_exit_codes(returncode: int, code: int) -> None:
    assert exit_code_of(returncode) == code


# --- owners ----------------------------------------------------------------------------------


def test_run_uids_round_trip_and_liveness() -> None:
    uid = run_pod_uid(42, 1234.567)
    assert is_run_uid(uid)
    assert parse_run_uid(uid) == (42, 123457)
    assert run_owner_alive(uid, lambda pid: 1234.567 if pid == 42 else None)
    assert not run_owner_alive(uid, lambda pid: 999.0)  # pid reused by a younger process
    assert not run_owner_alive(uid, lambda pid: None)
    for other in ("pod-1", "cpumanager-run.", "cpumanager-run.x.1", "cpumanager-run.1"):
        assert not is_run_uid(other)
        assert not run_owner_alive(other, lambda pid: 1.0)


def test_placeholder_pods_hold_the_entry_names() -> None:
    state = StateSnapshot(
        "static",
        CPUSet.parse("0"),
        {PodUID("a"): {MAIN: CPUSet.parse("1"), ContainerName("side"): CPUSet.parse("2")},
         PodUID("b"): {MAIN: CPUSet.parse("3")}},
    )  # fmt: skip
    pods = placeholder_pods(state, lambda uid: uid == "a")
    assert [(p.uid, sorted(c.name for c in p.containers)) for p in pods] == [
        ("a", ["main", "side"])
    ]
