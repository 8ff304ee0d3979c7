"""Random lifecycles keep every invariant: admit / delete / exit / restart / reconcile.

Each example draws a small machine (sockets, NUMA nodes, cores, threads), a reservation
(possibly strict), then a sequence of steps. After every step:

* the manager's snapshot has no invariant violation: no CPU in two pods' sets, none shared
  with the default set, default plus assignments exactly the machine (minus the reserved
  CPUs under strict reservation), reserved CPUs never exclusive;
* memory and disk agree (a fresh load of the store gives the manager's snapshot), also
  after an injected failed write;
* once stale state was removed (sources ready), only containers of active pods hold CPUs;
* a restart never loses or changes the assignment of a container that is still running.

The normal run is a bounded slice; CPUMANAGER_SLOW=1 runs the long one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from cpumanager.adapters.runtimes.recording import RecordingRuntime
from cpumanager.core.allocation.options import StaticPolicyOptions
from cpumanager.core.containermap import ContainerMap
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.ids import ContainerKey, PodUID
from cpumanager.core.workload import Container, ContainerKind, Pod
from cpumanager.errors import CpuManagerError, StateValidationError, StoreError
from cpumanager.presets import synthetic
from tests.builders import container, pod
from tests.manager.harness import Kubelet


@dataclass(frozen=True)
class Setup:
    kubelet: Kubelet
    strict: bool


@st.composite
def setups(draw: st.DrawFn) -> Setup:
    topology = synthetic(
        sockets=draw(st.integers(1, 2)),
        numa_per_socket=draw(st.integers(1, 2)),
        cores_per_numa=draw(st.integers(1, 3)),
        threads=draw(st.integers(1, 2)),
    )
    assume(len(topology.all_cpus) >= 2)
    cpus = sorted(topology.all_cpus)
    # The kubelet's static policy needs a reservation of at least one CPU.
    reserved = draw(st.sampled_from([cpus[:1], cpus[:2], cpus[-1:]]))
    if len(reserved) >= len(cpus):
        reserved = cpus[:1]
    strict = draw(st.booleans())
    options = StaticPolicyOptions.parse({"strict-cpu-reservation": "true"} if strict else {})
    kubelet = Kubelet(
        topology=topology,
        reserved=str(CPUSet(reserved)),
        options=options,
    )
    return Setup(kubelet, strict)


@st.composite
def pods(draw: st.DrawFn, uid: str) -> Pod:
    def one(name: str, kind: ContainerKind = ContainerKind.APP) -> Container:
        cpu = draw(st.sampled_from(["1", "2", "3", "500m", "1"]))
        return container(name, cpu, kind=kind)

    apps = [one(f"c{i}") for i in range(draw(st.integers(1, 2)))]
    init = (one("init", ContainerKind.INIT),) if draw(st.booleans()) else ()
    return pod(uid, *apps, init=init)


STEPS = ["admit", "admit", "admit", "delete", "exit", "restart", "reconcile", "hints", "fail"]


class Run:
    """Drives one lifecycle and checks the invariants after every step."""

    def __init__(self, setup: Setup) -> None:
        self.k = setup.kubelet
        self.strict = setup.strict
        self.reserved = CPUSet.parse(self.k.reserved)
        self.runtime = RecordingRuntime()
        self.cleaned = True  # stale state was removed since the last change of active pods
        self.counter = 0
        self.k.start()
        self.check()

    # --- invariants -----------------------------------------------------------------------

    def check(self) -> None:
        snap = self.k.m.snapshot
        problems = snap.invariant_violations(
            self.k.topology.all_cpus, reserved=self.reserved, strict_reservation=self.strict
        )
        assert problems == (), problems
        assert self.k.store.load("static", ContainerMap()) == snap, "memory and disk differ"
        if self.cleaned and self.k.ready:
            active = {p.key(c.name) for p in self.k.pods.values() for c in p.all_containers()}
            held = set(snap.container_keys())
            assert held <= active, held - active

    def running_assignments(self) -> dict[ContainerKey, CPUSet]:
        snap = self.k.m.snapshot
        found: dict[ContainerKey, CPUSet] = {}
        for key in self.k.running:
            cpus = snap.cpuset_of(key.pod_uid, key.container_name)
            if cpus is not None and key.pod_uid in self.k.pods:
                found[key] = cpus
        return found

    # --- steps ----------------------------------------------------------------------------

    def admit(self, data: st.DataObject) -> None:
        self.counter += 1
        p = data.draw(pods(f"p{self.counter}"))
        try:
            self.k.admit(p)
        except CpuManagerError:
            # A rejected pod is failed by the kubelet: it is no longer active.
            self.k.pods.pop(p.uid, None)
            self.k.exit(p.uid)
            self.cleaned = False
        else:
            self.cleaned = True  # allocate removed stale state first

    def pick(self, data: st.DataObject) -> PodUID | None:
        if not self.k.pods:
            return None
        return data.draw(st.sampled_from(sorted(self.k.pods)))

    def delete(self, data: st.DataObject) -> None:
        """The API server deletes the pod; the kubelet removes its containers by id."""
        uid = self.pick(data)
        if uid is None:
            return
        ids = [cid for key, cid in self.k.running.items() if key.pod_uid == uid]
        self.k.delete(uid)
        for cid in ids:
            self.k.m.remove_container(cid)
        self.cleaned = False

    def exit(self, data: st.DataObject) -> None:
        """The pod's containers stop; the manager is not told."""
        uid = self.pick(data)
        if uid is None:
            return
        self.k.pods.pop(uid)
        self.k.exit(uid)
        self.cleaned = False

    def restart(self, data: st.DataObject) -> None:
        before = self.running_assignments()
        self.k.ready = data.draw(st.booleans(), label="sources ready")
        recover = data.draw(st.booleans(), label="recover")
        refused = ""
        try:
            self.k.start(recover=recover)
        except StateValidationError as err:
            refused = err.message
        if refused:
            # The kubelet's one refusal of a sound state: under strict reservation every
            # allocatable CPU is exclusive, and "default cpuset cannot be empty". Recovery
            # must start it.
            assert not recover
            assert self.strict
            assert not self.k.m.snapshot.default_cpuset
            assert "default cpuset cannot be empty" in refused
            event("restart refused: empty default set under strict reservation")
            self.k.start(recover=True)
        after = self.running_assignments()
        if before:
            event("restart with running exclusive containers")
        assert after == before, "a restart changed a running container's CPUs"
        self.cleaned = self.k.ready
        if not self.k.ready:
            self.k.ready = True  # sources become ready later; the next step cleans up

    def reconcile(self, data: st.DataObject) -> None:
        report = self.k.m.reconcile(self.runtime, self.k.statuses())
        self.cleaned = True
        failed = {key for key, _ in report.failed}
        applied = self.k.m.last_applied()
        for key in self.k.running:
            if key.pod_uid in self.k.pods and key not in failed:
                # Exclusive sets were applied at creation (add_container); shared ones now.
                want = self.k.m.cpu_affinity(key.pod_uid, key.container_name)
                assert applied.get(key) == want

    def hints(self, data: st.DataObject) -> None:
        p = data.draw(pods("probe"))
        self.k.m.pod_topology_hints(p)
        self.cleaned = True

    def fail(self, data: st.DataObject) -> None:
        """One step whose writes all fail: nothing may change in memory or on disk."""
        before = (self.k.m.snapshot, self.k.store.data)
        self.k.store.fail_saves = True
        try:
            step = data.draw(st.sampled_from(["admit", "delete", "reconcile"]), label="failing")
            getattr(self, step)(data)
        except StoreError:
            event("a failed write was injected")
            assert (self.k.m.snapshot, self.k.store.data) == before
            self.cleaned = False
        finally:
            self.k.store.fail_saves = False


def run_lifecycle(data: st.DataObject, max_steps: int) -> None:
    run = Run(data.draw(setups(), label="machine"))
    for step in data.draw(st.lists(st.sampled_from(STEPS), max_size=max_steps), label="steps"):
        getattr(run, step)(data)
        run.check()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_lifecycles_keep_every_invariant(data: st.DataObject) -> None:
    run_lifecycle(data, max_steps=25)


@pytest.mark.slow
@pytest.mark.skipif(
    not os.environ.get("CPUMANAGER_SLOW"), reason="long property run: set CPUMANAGER_SLOW=1"
)
@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_lifecycles_keep_every_invariant_long(data: st.DataObject) -> None:
    run_lifecycle(data, max_steps=60)
