"""AgentLoop through a real Node, the in-memory store and a recording runtime (no host I/O)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import pytest

from cpumanager.adapters.memory_store import InMemoryStore
from cpumanager.adapters.workloads import Workload, WorkloadScan
from cpumanager.agent.loop import AgentLoop, EventBuffer, FanOut
from cpumanager.agent.owners import run_pod_uid
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.ids import ContainerID, ContainerName, PodUID
from cpumanager.core.state import StateSnapshot
from cpumanager.core.workload import Pod
from cpumanager.errors import InputError, RuntimeApplyError
from cpumanager.formats.kubelet_config import KubeletConfig
from cpumanager.manager.node import Node
from cpumanager.presets import synthetic
from tests.builders import container, pod

KUBELET = {
    "cpuManagerPolicy": "static",
    "kubeReserved": {"cpu": "1"},
    "topologyManagerPolicy": "best-effort",
}
ALL = CPUSet.parse("0-7")  # 1 socket, 4 cores, 2 threads: siblings c and c+4; CPU 0 reserved


@dataclass
class FakeRuntime:
    """Records applies, knows which targets exist, restores what it changed."""

    alive_ids: set[str] = field(default_factory=set)
    fail_for: set[str] = field(default_factory=set)
    calls: list[tuple[str, CPUSet]] = field(default_factory=list)
    current: dict[str, CPUSet] = field(default_factory=dict)
    originals: dict[str, CPUSet] = field(default_factory=dict)
    restored: list[str] = field(default_factory=list)

    def apply(self, container_id: ContainerID, cpus: CPUSet) -> None:
        self.calls.append((container_id, cpus))
        if container_id in self.fail_for:
            msg = f"cannot pin {container_id}: injected"
            raise RuntimeApplyError(msg)
        self.originals.setdefault(container_id, ALL)
        self.current[container_id] = cpus

    def alive(self, container_id: ContainerID) -> bool:
        return container_id in self.alive_ids

    def restore(self, container_id: ContainerID | None = None) -> None:
        for key in [container_id] if container_id is not None else sorted(self.originals):
            if key in self.originals:
                self.current[key] = self.originals.pop(key)
                self.restored.append(key)


@dataclass
class Setup:
    loop: AgentLoop
    store: InMemoryStore
    runtime: FakeRuntime
    listed: list[Workload]
    live_runs: set[str] = field(default_factory=set)

    def snapshot(self) -> StateSnapshot:
        return self.loop.node.snapshot().cpu


def workload(name: str, cpu: str | None, target: str) -> Workload:
    return Workload(pod(name, container("main", cpu)), ContainerID(target), f"{name}.yaml")


def make(
    *workloads: Workload,
    store: InMemoryStore | None = None,
    alive: Iterable[str] | None = None,
    kubelet: Mapping[str, object] | None = None,
) -> Setup:
    listed = list(workloads)
    store = store or InMemoryStore()
    runtime = FakeRuntime(set(alive if alive is not None else (w.container_id for w in listed)))
    events = EventBuffer()
    node = Node(
        topology=synthetic(cores_per_numa=4, threads=2),
        kubelet=KubeletConfig.from_mapping(kubelet or KUBELET),
        store=store,
        observer=FanOut([events]),
    )
    live_runs: set[str] = set()
    loop = AgentLoop(
        node=node,
        events=events,
        workloads=lambda: WorkloadScan(tuple(listed)),
        runtime=runtime,
        run_owner_alive=lambda uid: uid in live_runs,
    )
    return Setup(loop, store, runtime, listed, live_runs)


def assigned(setup: Setup, uid: str) -> CPUSet | None:
    return setup.snapshot().cpuset_of(PodUID(uid), ContainerName("main"))


# --- admission and pinning -------------------------------------------------------------------


def test_first_tick_admits_pins_and_persists() -> None:
    s = make(workload("a", "2", "pid://10"), workload("b", "500m", "pid://11"))
    report = s.loop.tick()
    a = assigned(s, "a")
    assert a is not None
    assert len(a) == 2
    assert 0 not in a
    assert assigned(s, "b") is None  # Burstable: shared pool
    shared = ALL - a
    assert report.applied == {"pid://10": str(a), "pid://11": str(shared)}
    assert s.runtime.current == {"pid://10": a, "pid://11": shared}
    assert [entry["pod"] for entry in report.admitted] == ["default/a", "default/b"]
    assert report.default_cpuset == str(shared)
    assert s.store.data is not None
    assert b'"a":{"main":' in s.store.data


def test_second_tick_changes_nothing() -> None:
    s = make(workload("a", "2", "pid://10"), workload("b", "500m", "pid://11"))
    s.loop.tick()
    calls = len(s.runtime.calls)
    report = s.loop.tick()
    assert report.admitted == []
    assert report.applied == {}
    assert report.released == []
    assert sorted(report.unchanged) == ["pid://10", "pid://11"]
    assert len(s.runtime.calls) == calls


def test_new_exclusive_workload_shrinks_the_shared_pool_of_others() -> None:
    s = make(workload("b", "500m", "pid://11"))
    s.loop.tick()
    assert s.runtime.current["pid://11"] == ALL
    s.listed.append(workload("a", "2", "pid://10"))
    s.runtime.alive_ids.add("pid://10")
    report = s.loop.tick()
    a = assigned(s, "a")
    assert a is not None
    assert report.applied == {"pid://10": str(a), "pid://11": str(ALL - a)}


def test_workload_whose_process_is_gone_is_reclaimed_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    s = make(workload("a", "2", "pid://10"), workload("b", "500m", "pid://11"))
    s.loop.tick()
    a = assigned(s, "a")
    s.runtime.alive_ids.discard("pid://10")
    with caplog.at_level("INFO", logger="cpumanager.agent"):
        report = s.loop.tick()
    assert assigned(s, "a") is None
    assert report.waiting == ["default/a"]
    assert [(e["uid"], e["cpus"]) for e in report.released] == [("a", str(a))]
    assert report.applied == {"pid://11": str(ALL)}
    assert any(f"released CPUs {a} of a/main" in r.getMessage() for r in caplog.records)


def test_unlisted_workload_gets_its_original_cpus_back() -> None:
    s = make(workload("a", "2", "pid://10"))
    s.loop.tick()
    s.listed.clear()
    report = s.loop.tick()
    assert assigned(s, "a") is None
    assert s.runtime.restored == ["pid://10"]
    assert s.runtime.current["pid://10"] == ALL
    assert report.released
    assert "original CPUs back" in report.notes[0]


def test_new_process_under_the_same_pod_is_pinned_again() -> None:
    s = make(workload("b", "500m", "pid://11"))
    s.loop.tick()
    s.listed[0] = workload("b", "500m", "pid://12")
    s.runtime.alive_ids = {"pid://12"}
    report = s.loop.tick()
    assert report.applied == {"pid://12": str(ALL)}


def test_rejection_is_reported_retried_and_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    single = {**KUBELET, "topologyManagerPolicy": "single-numa-node"}
    s = make(workload("big", "8", "pid://10"), kubelet=single)
    with caplog.at_level("WARNING", logger="cpumanager.agent"):
        first = s.loop.tick()
        second = s.loop.tick()
    assert [r["reason"] for r in first.rejected] == [second.rejected[0]["reason"]]
    assert s.snapshot().assignments == {}
    assert sum("rejected default/big" in r.getMessage() for r in caplog.records) == 1
    assert s.runtime.calls == []


def test_apply_failure_is_reported_and_retried_next_tick() -> None:
    s = make(workload("a", "2", "pid://10"))
    s.runtime.fail_for.add("pid://10")
    first = s.loop.tick()
    assert "injected" in first.failed["pid://10"]
    s.runtime.fail_for.clear()
    second = s.loop.tick()
    assert second.failed == {}
    assert second.applied == {"pid://10": str(assigned(s, "a"))}


def test_unreadable_workloads_change_nothing() -> None:
    s = make(workload("a", "2", "pid://10"))
    s.loop.tick()
    before = s.snapshot()

    def broken() -> WorkloadScan:
        raise InputError("cannot list workloads directory 'x': gone")

    s.loop._workloads = broken
    report = s.loop.tick()
    assert report.errors == ["cannot list workloads directory 'x': gone"]
    assert s.snapshot() == before


# --- restarts and the shared state directory ------------------------------------------------


def test_restart_keeps_the_cpus_of_live_workloads() -> None:
    s = make(workload("a", "2", "pid://10"), workload("c", "2", "pid://13"))
    s.loop.tick()
    a, c = assigned(s, "a"), assigned(s, "c")
    again = make(*s.listed, store=InMemoryStore(s.store.data))
    report = again.loop.tick()
    assert report.released == []
    assert (assigned(again, "a"), assigned(again, "c")) == (a, c)


def test_restart_reclaims_workloads_that_died_while_down() -> None:
    s = make(workload("a", "2", "pid://10"), workload("c", "2", "pid://13"))
    s.loop.tick()
    c = assigned(s, "c")
    again = make(*s.listed, store=InMemoryStore(s.store.data), alive=["pid://10"])
    report = again.loop.tick()
    assert [(e["uid"], e["reason"]) for e in report.released] == [("c", "stale")]
    assert c is not None
    assert c <= again.snapshot().default_cpuset


def test_live_run_pods_are_kept_and_dead_ones_reclaimed() -> None:
    live, dead = run_pod_uid(100, 5.0), run_pod_uid(200, 6.0)
    state = StateSnapshot(
        "static",
        CPUSet.parse("0,3-7"),
        {
            live: {ContainerName("main"): CPUSet.parse("1")},
            dead: {ContainerName("main"): CPUSet.parse("2")},
        },
    )
    store = InMemoryStore()
    store.save(state)
    s = make(workload("b", "500m", "pid://11"), store=store)
    s.live_runs.add(live)
    report = s.loop.tick()
    assert [e["uid"] for e in report.released] == [dead]
    assert s.snapshot().cpuset_of(live, ContainerName("main")) == CPUSet.parse("1")
    assert report.applied == {"pid://11": "0,2-7"}
    assert report.failed == {}  # the run pod is pinned by its own process


def test_active_pods_are_admitted_workloads_and_live_runs() -> None:
    s = make(workload("a", "1", "pid://10"))
    s.loop.tick()
    assert [p.uid for p in s.loop.active_pods()] == ["a"]
    assert all(isinstance(p, Pod) for p in s.loop.active_pods())
