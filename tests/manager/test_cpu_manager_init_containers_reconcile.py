"""Kubelet cpu_manager test cases (init containers, reconcile) not covered elsewhere.

Facts from the kubelet's TestCPUManagerAddWithInitContainers and TestReconcileState; each
row id starts with the kubelet test's name. Allocation goes through CPUManager (the
kubelet's manager.Allocate); reconcile rows go through the pure planner plus stale-state
removal, because the kubelet test feeds a state its policy's Start would refuse.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from cpumanager.core.cpuset import CPUSet
from cpumanager.core.ids import ContainerID, ContainerKey, ContainerName, PodUID
from cpumanager.core.policy.static import StaticPolicy
from cpumanager.core.quantity import parse_quantity
from cpumanager.core.reconcile import ContainerPhase, ContainerStatus, plan_updates
from cpumanager.core.stale_state import active_containers, stale_keys
from cpumanager.core.workload import Container, ContainerKind, Pod
from cpumanager.presets import synthetic
from tests.builders import snapshot
from tests.kubelet_vectors import kubelet_topology
from tests.manager.harness import Kubelet


def _container(name: str, cpu: str, kind: ContainerKind) -> Container:
    resources = {"cpu": parse_quantity(cpu), "memory": Fraction(10**9)}
    return Container(ContainerName(name), resources, resources, kind)


def _multi_container_pod(inits: list[str], apps: list[str]) -> Pod:
    """The kubelet's makeMultiContainerPod: requests equal limits, 1G of memory each."""
    return Pod(
        PodUID("podUID"),
        name="pod",
        init_containers=tuple(
            _container(f"initContainer-{i}", cpu, ContainerKind.INIT) for i, cpu in enumerate(inits)
        ),
        containers=tuple(
            _container(f"appContainer-{i}", cpu, ContainerKind.APP) for i, cpu in enumerate(apps)
        ),
    )


# (description, init CPUs, app CPUs, expected init sets, expected app sets); "" = no set.
INIT_ROWS = [
    ("No Guaranteed Init CPUs", ["100m"], ["4000m"], [""], ["0-1,4-5"]),
    ("Equal Number of Guaranteed CPUs", ["4000m"], ["4000m"], ["0-1,4-5"], ["0-1,4-5"]),
    ("More Init Container Guaranteed CPUs", ["6000m"], ["4000m"], ["0-2,4-6"], ["0-1,4-5"]),
    ("Less Init Container Guaranteed CPUs", ["2000m"], ["4000m"], ["0,4"], ["0-1,4-5"]),
    ("Multi Init Container Equal CPUs", ["2000m", "2000m"], ["2000m"], ["0,4", "0,4"], ["0,4"]),
    (
        "Multi Init Container Less CPUs",
        ["4000m", "4000m"],
        ["2000m"],
        ["0-1,4-5", "0-1,4-5"],
        ["0,4"],
    ),
    (
        "Multi Init Container More CPUs",
        ["2000m", "2000m"],
        ["4000m"],
        ["0,4", "0,4"],
        ["0-1,4-5"],
    ),
    (
        "Multi Init Container Increasing CPUs",
        ["2000m", "4000m"],
        ["6000m"],
        ["0,4", "0-1,4-5"],
        ["0-2,4-6"],
    ),
    (
        "Multi Init, Multi App Container Split CPUs",
        ["2000m", "4000m"],
        ["2000m", "2000m"],
        ["0,4", "0-1,4-5"],
        ["0,4", "1,5"],
    ),
]


@pytest.mark.parametrize(
    ("inits", "apps", "init_sets", "app_sets"),
    [row[1:] for row in INIT_ROWS],
    ids=[f"TestCPUManagerAddWithInitContainers/{row[0]}" for row in INIT_ROWS],
)
def test_add_with_init_containers(
    inits: list[str], apps: list[str], init_sets: list[str], app_sets: list[str]
) -> None:
    kubelet = Kubelet(topology=kubelet_topology("topoSingleSocketHT"))
    kubelet.start()
    the_pod = _multi_container_pod(inits, apps)
    kubelet.admit(the_pod)
    state = kubelet.m.snapshot
    held = CPUSet()
    for container, expected in zip(the_pod.all_containers(), init_sets + app_sets, strict=True):
        got = state.cpuset_of(the_pod.uid, container.name)
        if expected:
            assert got == CPUSet.parse(expected), container.name
        else:
            assert got is None, container.name
        held = held | (got or CPUSet())
    assert state.default_cpuset == CPUSet.parse("0-7") - held


# --- TestReconcileState ---------------------------------------------------------------------

POD = PodUID("fakePodUID")
NAME = ContainerName("fakeContainerName")
KEY = ContainerKey(POD, NAME)
CID = ContainerID("docker://fakeContainerID")


def _pod(*, init: bool = False) -> Pod:
    c = Container(NAME, kind=ContainerKind.INIT if init else ContainerKind.APP)
    return Pod(
        POD,
        name="fakePodName",
        init_containers=(c,) if init else (),
        containers=() if init else (c,),
    )


def _running(name: ContainerName = NAME) -> dict[ContainerKey, ContainerStatus]:
    key = ContainerKey(POD, name)
    return {key: ContainerStatus(key, CID, ContainerPhase.RUNNING)}


# (description, pod is an init container, statuses, state (default, assignment), last applied
#  (assignment or None), expected outcome: "updated" / "unchanged" / "failed" / "none")
RECONCILE_ROWS = [
    ("cpu manager reconcile - no error", False, _running(), ("3-7", "1-2"), None, "updated"),
    (
        "cpu manager reconcile init container - no error",
        True,
        _running(),
        ("3-7", "1-2"),
        None,
        "updated",
    ),
    ("cpu manager reconcile - pod status not found", False, {}, ("", None), None, "failed"),
    (
        "cpu manager reconcile - container state not found",
        False,
        _running(ContainerName("fakeContainerName1")),
        ("", None),
        None,
        "failed",
    ),
    ("cpu manager reconclie - cpuset is empty", False, _running(), ("1-7", ""), None, "failed"),
    (
        "cpu manager reconcile - last update state is current",
        False,
        _running(),
        ("5-7", "1-2"),
        "1-2",
        "unchanged",
    ),
    (
        "cpu manager reconcile - last update state is not current",
        False,
        _running(),
        ("3-7", "1-2"),
        "3-4",
        "updated",
    ),
]


@pytest.mark.parametrize(
    ("init", "statuses", "state", "last", "outcome"),
    [row[1:] for row in RECONCILE_ROWS],
    ids=[f"TestReconcileState/{row[0]}" for row in RECONCILE_ROWS],
)
def test_reconcile_state(
    init: bool,
    statuses: dict[ContainerKey, ContainerStatus],
    state: tuple[str, str | None],
    last: str | None,
    outcome: str,
) -> None:
    default, assigned = state
    snap = snapshot(default) if assigned is None else snapshot(default, fakePodUID={NAME: assigned})
    last_applied = {} if last is None else {KEY: CPUSet.parse(last)}
    plan = plan_updates(snap, [_pod(init=init)], statuses, last_applied)
    assert [u.key for u in plan.updates] == ([KEY] if outcome == "updated" else [])
    if outcome == "updated":
        assert plan.updates[0].cpus == CPUSet.parse(assigned or "")
        assert plan.updates[0].container_id == CID
    assert list(plan.unchanged) == ([KEY] if outcome == "unchanged" else [])
    assert [key for key, _ in plan.failures] == ([KEY] if outcome == "failed" else [])


def test_reconcile_state_releases_an_inactive_container_first() -> None:
    """TestReconcileState/cpu manager reconcile - state has inactive container."""
    policy = StaticPolicy(synthetic(sockets=2, numa_per_socket=1, cores_per_numa=4, threads=1))
    snap = snapshot(
        "5-7", fakePodUID={NAME: "1-2"}, secondfakePodUID={"secondfakeContainerName": "3-4"}
    )
    active = [_pod()]
    for key in stale_keys(snap, (), active_containers(active)):
        snap = policy.remove(snap, key.pod_uid, key.container_name).snapshot
    assert snap == snapshot("3-7", fakePodUID={NAME: "1-2"})
    plan = plan_updates(snap, active, _running(), {})
    assert [(u.key, u.cpus) for u in plan.updates] == [(KEY, CPUSet.parse("1-2"))]
