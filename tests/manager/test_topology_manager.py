"""TopologyManager admission with scripted providers: scopes, policies, rejection reasons.

The providers here answer fixed hints and record every call, so each test pins down who is
asked, in which order, what is stored and what the pod is rejected with. Admission through
the real CPU, device and memory managers is in test_node.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pytest

from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.events import Admitted, Rejected
from cpumanager.core.hints.hint import NO_PLACEMENT, TopologyHint
from cpumanager.core.ids import ContainerName, PodUID
from cpumanager.core.merge.exact import AnyProviderHints
from cpumanager.core.merge.options import build_topology_manager_config
from cpumanager.core.workload import Container, ContainerKind, Pod
from cpumanager.errors import (
    CpuManagerError,
    NotEnoughCPUsError,
    SMTAlignmentError,
    StoreError,
    UnexpectedAdmissionError,
)
from cpumanager.manager.topology_manager import TopologyManager
from tests.builders import container, pod
from tests.manager.harness import EventLog

NODES = (0, 1)


def hint(*nodes: int, preferred: bool = True) -> TopologyHint:
    return TopologyHint(NUMAMask.of(*nodes), preferred)


@dataclass
class Scripted:
    """A provider with fixed answers per container (or for the pod) that records calls."""

    provider_name: str
    per_container: dict[str, AnyProviderHints] = field(default_factory=dict)
    for_pod: AnyProviderHints = field(default_factory=dict)
    fail_on: dict[str, Exception] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)

    def topology_hints(self, pod: Pod, container: Container) -> AnyProviderHints:
        self.calls.append(f"hints:{container.name}")
        return self.per_container.get(container.name, {})

    def pod_topology_hints(self, pod: Pod) -> AnyProviderHints:
        self.calls.append("pod-hints")
        return self.for_pod

    def hint_details(self, pod: Pod, container: Container) -> Mapping[str, object]:
        return {}

    def pod_hint_details(self, pod: Pod) -> Mapping[str, object]:
        return {}

    def allocate(self, pod: Pod, container: Container) -> object:
        self.calls.append(f"allocate:{container.name}")
        error = self.fail_on.get(container.name)
        if error is not None:
            raise error
        return f"{self.provider_name}-{container.name}"


def manager(
    policy: str, *providers: Scripted, scope: str = "container", log: EventLog | None = None
) -> TopologyManager:
    ticks = iter(range(100))
    return TopologyManager(
        config=build_topology_manager_config(policy=policy, scope=scope, numa_nodes=NODES),
        numa_ids=NODES,
        providers=providers,
        observer=log or EventLog(),
        clock=lambda: float(next(ticks)),
    )


TWO = pod(
    "p1",
    container("app", "1"),
    container("log", "1"),
    init=(container("setup", "1", kind=ContainerKind.INIT),),
)


def test_container_scope_asks_every_container_in_admission_order() -> None:
    cpu = Scripted("cpu", {"setup": {"cpu": (hint(0),)}, "app": {"cpu": (hint(1),)}})
    dev = Scripted("devices")
    tm = manager("best-effort", cpu, dev)
    result = tm.admit(TWO)
    assert result.admitted
    assert cpu.calls == [
        "hints:setup",
        "allocate:setup",
        "hints:app",
        "allocate:app",
        "hints:log",
        "allocate:log",
    ]
    assert [d.container for d in result.decisions] == ["setup", "app", "log"]
    assert tm.get_affinity(TWO.uid, ContainerName("setup")) == hint(0)
    assert tm.get_affinity(TWO.uid, ContainerName("app")) == hint(1)
    # Nobody has an opinion on "log": any node, preferred.
    assert tm.get_affinity(TWO.uid, ContainerName("log")) == hint(0, 1)
    assert result.allocated == {
        f"{p}/{c}": f"{p}-{c}" for c in ("setup", "app", "log") for p in ("cpu", "devices")
    }


def test_pod_scope_asks_once_and_stores_the_same_hint_for_every_container() -> None:
    cpu = Scripted("cpu", for_pod={"cpu": (hint(1), hint(0, 1, preferred=False))})
    tm = manager("restricted", cpu, scope="pod")
    result = tm.admit(TWO)
    assert result.admitted
    assert cpu.calls == ["pod-hints", "allocate:setup", "allocate:app", "allocate:log"]
    assert [d.container for d in result.decisions] == ["(pod)"]
    for c in TWO.all_containers():
        assert tm.get_affinity(TWO.uid, c.name) == hint(1)
        assert tm.affinity_mask(TWO.uid, c.name) == NUMAMask.of(1)


def test_none_policy_asks_nobody_stores_nothing_and_still_allocates() -> None:
    cpu = Scripted("cpu", {"app": {"cpu": (hint(1),)}})
    tm = manager("none", cpu)
    result = tm.admit(TWO)
    assert result.admitted
    assert cpu.calls == ["allocate:setup", "allocate:app", "allocate:log"]
    assert result.decisions == ()
    assert tm.get_affinity(TWO.uid, ContainerName("app")) == TopologyHint(None, False)
    assert tm.affinity_mask(TWO.uid, ContainerName("app")) is None


@pytest.mark.parametrize(
    ("policy", "hints", "admitted"),
    [
        ("best-effort", (hint(0, 1, preferred=False),), True),
        ("restricted", (hint(0, 1, preferred=False),), False),
        ("single-numa-node", (hint(0, 1),), False),
        ("single-numa-node", (hint(1),), True),
        ("restricted", NO_PLACEMENT, False),
        ("best-effort", NO_PLACEMENT, True),
    ],
    ids=[
        "best-effort-admits-unaligned",
        "restricted-rejects-unpreferred",
        "single-numa-node-rejects-two-nodes",
        "single-numa-node-admits-one-node",
        "restricted-rejects-no-placement",
        "best-effort-admits-no-placement",
    ],
)
def test_policy_admission(policy: str, hints: AnyProviderHints, admitted: bool) -> None:
    cpu = Scripted("cpu", {"app": {"cpu": hints}})
    tm = manager(policy, cpu)
    result = tm.admit(pod("p1", container("app", "2")))
    assert result.admitted is admitted
    if not admitted:
        assert result.reason == "TopologyAffinityError"
        assert result.message == "Resources cannot be allocated with Topology locality"
        assert cpu.calls == ["hints:app"]  # nothing allocated for a rejected container


def test_rejection_stops_at_the_first_container_that_cannot_be_aligned() -> None:
    cpu = Scripted("cpu", {"app": {"cpu": (hint(0, 1, preferred=False),)}})
    tm = manager("restricted", cpu)
    result = tm.admit(TWO)
    assert not result.admitted
    assert cpu.calls == ["hints:setup", "allocate:setup", "hints:app"]
    assert [d.admitted for d in result.decisions] == [True, False]


@pytest.mark.parametrize(
    ("error", "reason", "message"),
    [
        (
            NotEnoughCPUsError("not enough cpus available to satisfy request: requested=3"),
            "UnexpectedAdmissionError",
            "Allocate failed due to not enough cpus available to satisfy request: requested=3, "
            "which is unexpected",
        ),
        (
            UnexpectedAdmissionError("Allocate failed due to no devices, which is unexpected"),
            "UnexpectedAdmissionError",
            None,
        ),
        (
            SMTAlignmentError("SMT Alignment Error: odd", requested=3, cpus_per_core=2),
            "SMTAlignmentError",
            None,
        ),
        (
            StoreError("disk full"),
            "UnexpectedAdmissionError",
            "Allocate failed due to disk full, which is unexpected",
        ),
    ],
    ids=["not-enough-cpus", "already-unexpected", "smt-alignment", "other-error"],
)
def test_allocation_errors_reject_with_their_reason(
    error: CpuManagerError, reason: str, message: str | None
) -> None:
    cpu = Scripted("cpu", fail_on={"app": error})
    dev = Scripted("devices")
    tm = manager("best-effort", cpu, dev)
    result = tm.admit(TWO)
    assert not result.admitted
    assert result.reason == reason
    assert result.message == (message or error.message)
    # The first failing provider stops admission: the device manager never sees "app".
    assert "allocate:app" not in dev.calls


def test_admission_reports_events_with_durations() -> None:
    log = EventLog()
    ok = manager("best-effort", Scripted("cpu"), log=log)
    ok.admit(TWO)
    bad = manager("restricted", Scripted("cpu", {"app": {"cpu": NO_PLACEMENT}}), log=log)
    bad.admit(TWO)
    admitted, rejected = log.of(Admitted), log.of(Rejected)
    assert [(e.pod_uid, e.duration_s) for e in admitted] == [("p1", 1.0)]
    assert [(e.reason, e.duration_s) for e in rejected] == [("TopologyAffinityError", 1.0)]


def test_forgetting_pods_and_containers() -> None:
    tm = manager("best-effort", Scripted("cpu", {"app": {"cpu": (hint(1),)}}))
    tm.admit(TWO)
    tm.remove_container(TWO.uid, ContainerName("app"))
    assert tm.get_affinity(TWO.uid, ContainerName("app")) == TopologyHint(None, False)
    assert tm.get_affinity(TWO.uid, ContainerName("log")) == hint(0, 1)
    tm.remove_container(PodUID("nobody"), ContainerName("app"))
    tm.remove_pod(TWO.uid)
    tm.remove_pod(TWO.uid)
    assert tm.get_affinity(TWO.uid, ContainerName("log")) == TopologyHint(None, False)
