from __future__ import annotations

from cpumanager.core.ids import ContainerID
from cpumanager.core.reconcile import ContainerPhase, ContainerStatus, plan_updates
from tests.builders import container, cpus, guaranteed, pod, snapshot

STATE = snapshot("2-7", p1={"app": "0-1"})
P1 = guaranteed("p1", app="2")
P2 = pod("p2", container("web", "500m"))


def status(p: str, c: str, phase: ContainerPhase, cid: str | None = "id") -> ContainerStatus:
    return ContainerStatus(
        P1.key(c) if p == "p1" else P2.key(c), ContainerID(f"{cid}-{c}") if cid else None, phase
    )


def test_running_containers_get_their_sets() -> None:
    statuses = {
        s.key: s
        for s in [
            status("p1", "app", ContainerPhase.RUNNING),
            status("p2", "web", ContainerPhase.RUNNING),
        ]
    }
    plan = plan_updates(STATE, [P1, P2], statuses, {})
    assert [(u.key.container_name, str(u.cpus)) for u in plan.updates] == [
        ("app", "0-1"),
        ("web", "2-7"),
    ]
    assert plan.failures == ()
    assert len(plan.running) == 2


def test_already_applied_sets_are_not_pushed_again() -> None:
    statuses = {s.key: s for s in [status("p1", "app", ContainerPhase.RUNNING)]}
    plan = plan_updates(STATE, [P1], statuses, {P1.key("app"): cpus("0-1")})
    assert plan.updates == ()
    assert plan.unchanged == (P1.key("app"),)


def test_waiting_missing_and_terminated_containers() -> None:
    statuses = {
        s.key: s
        for s in [
            status("p1", "app", ContainerPhase.WAITING),
            status("p2", "web", ContainerPhase.TERMINATED),
        ]
    }
    plan = plan_updates(STATE, [P1, P2], statuses, {})
    assert plan.updates == ()
    assert [k.container_name for k, _ in plan.failures] == ["app"]
    assert plan.running == ()
    no_id = {P1.key("app"): status("p1", "app", ContainerPhase.RUNNING, cid=None)}
    assert len(plan_updates(STATE, [P1], no_id, {}).failures) == 1


def test_empty_desired_set_is_a_failure() -> None:
    state = snapshot("", p1={"app": "0-7"})
    statuses = {P2.key("web"): status("p2", "web", ContainerPhase.RUNNING)}
    plan = plan_updates(state, [P2], statuses, {})
    assert plan.updates == ()
    assert plan.failures[0][1] == "desired cpuset is empty"
