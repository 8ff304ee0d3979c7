from __future__ import annotations

from cpumanager.core.repair import repair_snapshot
from tests.builders import cpus, snapshot


def test_sound_state_is_unchanged() -> None:
    state = snapshot("4-7", p1={"a": "0-3"})
    repaired, changes = repair_snapshot(
        state, all_cpus=cpus("0-7"), reserved=cpus("4"), strict_reservation=False
    )
    assert repaired == state
    assert changes == ()


def test_offline_reserved_and_overlapping_assignments_are_dropped() -> None:
    state = snapshot("", p1={"a": "0-1"}, p2={"b": "6-7"}, p3={"c": "1-2"}, p4={"d": "3"})
    repaired, changes = repair_snapshot(
        state, all_cpus=cpus("0-5"), reserved=cpus("3"), strict_reservation=False
    )
    assert repaired.plain_assignments() == {"p1": {"a": cpus("0-1")}}
    assert repaired.default_cpuset == cpus("2-5")
    assert [c.pod_uid for c in changes if c.pod_uid] == ["p2", "p3", "p4"]
    assert repaired.invariant_violations(cpus("0-5"), reserved=cpus("3")) == ()


def test_strict_reservation_keeps_reserved_out_of_default() -> None:
    state = snapshot("0-7", p1={"a": "4-5"})
    repaired, _ = repair_snapshot(
        state, all_cpus=cpus("0-7"), reserved=cpus("0"), strict_reservation=True
    )
    assert repaired.default_cpuset == cpus("1-3,6-7")


def test_pod_may_share_cpus_between_its_containers() -> None:
    state = snapshot("4-7", p1={"init": "0-1", "app": "0-3"})
    repaired, changes = repair_snapshot(
        state, all_cpus=cpus("0-7"), reserved=cpus(""), strict_reservation=False
    )
    assert repaired == state
    assert changes == ()
