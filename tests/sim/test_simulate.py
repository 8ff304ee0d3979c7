"""Simulator event semantics, through scenarios built in the test (no files from examples/)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from cpumanager.checkpoint.cpu.codec import encode_v1
from cpumanager.checkpoint.cpu.model import CheckpointV1
from cpumanager.sim.scenario import parse_scenario
from cpumanager.sim.simulate import SimulationReport, simulate

MACHINE = {"shape": "2s1n8c2t"}  # NUMA 0 = 0-7,16-23; NUMA 1 = 8-15,24-31
KUBELET = {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0,16"}


def pod(name: str, cpu: str = "2", *, uid: str | None = None, containers: int = 1) -> Any:
    meta: dict[str, str] = {"name": name}
    if uid:
        meta["uid"] = uid
    names = ["c"] if containers == 1 else [f"c{i}" for i in range(containers)]
    return {
        "metadata": meta,
        "spec": {
            "containers": [
                {"name": n, "resources": {"limits": {"cpu": cpu, "memory": "1Gi"}}} for n in names
            ]
        },
    }


def run(events: list[Any], **extra: Any) -> SimulationReport:
    data = {"machine": MACHINE, "kubelet": KUBELET, "events": events, **extra}
    return simulate(parse_scenario(data, source="test", base=Path()))


def released(report: SimulationReport, index: int) -> set[str]:
    return {r["pod"] for r in report.events[index].released}


def test_delete_releases_at_once_exit_waits_for_the_next_cleanup() -> None:
    report = run(
        [
            {"admit": pod("a")},
            {"admit": pod("b")},
            {"delete": "a"},
            {"exit": "b"},
            {"admit": pod("c")},
        ]
    )
    assert released(report, 3) == {"a"}
    assert report.events[3].default_cpuset == "0-1,3-17,19-31"  # b still holds 2,18
    assert released(report, 4) == set()
    assert any("not told" in note for note in report.events[4].notes)
    assert report.events[4].default_cpuset == "0-1,3-17,19-31"
    assert released(report, 5) == {"b"}  # the next admission's stale-state removal
    assert report.events[5].containers["c"]["cpus"] == "1,17"


def test_multi_container_pod_keeps_its_first_containers_cpus() -> None:
    report = run([{"admit": pod("m", containers=3)}])
    cpus = [report.events[1].containers[f"c{i}"]["cpus"] for i in range(3)]
    assert cpus == ["1,17", "2,18", "3,19"]
    assert report.events[1].released == []


def test_restart_running_by_name_and_uid_with_container_ids() -> None:
    report = run(
        [
            {"admit": pod("a", uid="uid-a")},
            {"admit": pod("b")},
            {"restart": {"running": [{"pod": "uid-a", "containers": {"c": "cri://a1"}}, "b"]}},
            {"restart": {"running": ["a"]}},
        ]
    )
    assert released(report, 3) == set()
    assert set(report.events[3].containers) == {"a/c", "b/c"}
    assert report.events[3].containers["a/c"]["cpus"] == "1,17"
    assert released(report, 4) == {"b"}
    assert report.final_entries == {"uid-a": {"c": "1,17"}}


def test_restart_with_no_running_pod_reclaims_everything() -> None:
    report = run([{"admit": pod("a")}, {"restart": {"running": []}}])
    assert released(report, 2) == {"a"}
    assert report.final_default == "0-31"
    assert report.final_entries == {}


V1_ENTRIES = {"containerd://aa": "1-2,17-18"}


def v1_scenario(events: list[Any], ids: dict[str, str]) -> SimulationReport:
    data = encode_v1(CheckpointV1("static", "0,3-16,19-31", V1_ENTRIES))
    scenario = parse_scenario(
        {
            "machine": MACHINE,
            "kubelet": KUBELET,
            "pods": [pod("old", "4", uid="uid-old")],
            "containers": {"old": ids},
            "events": events,
        },
        source="v1",
        base=Path(),
    )
    return simulate(replace(scenario, state_bytes=data))  # the V1 file's exact bytes


def test_v1_checkpoint_migrates_at_start_and_is_rewritten_as_v2_on_the_first_change() -> None:
    untouched = v1_scenario([], {"c": "containerd://aa"})
    assert untouched.events[0].admitted is True
    assert untouched.events[0].containers["old/c"]["cpus"] == "1-2,17-18"
    assert json.loads(untouched.checkpoint)["entries"] == V1_ENTRIES  # still V1 on disk
    changed = v1_scenario([{"admit": pod("new")}], {"c": "containerd://aa"})
    entries = json.loads(changed.checkpoint)["entries"]
    assert entries["uid-old"] == {"c": "1-2,17-18"}
    assert all(isinstance(v, dict) for v in entries.values())


def test_v1_checkpoint_with_an_unknown_container_id_is_refused() -> None:
    report = v1_scenario([{"admit": pod("new")}], {"c": "containerd://other"})
    assert report.events[0].admitted is False
    assert report.events[0].error is not None
    assert "not found in initial containers list" in report.events[0].error["message"]
    assert report.events[1].error == {
        "type": "NodeNotReady",
        "message": "the kubelet is not running (its last start failed); add a restart",
    }


def test_refused_start_then_recovery() -> None:
    report = run(
        [
            {"admit": pod("a", "4")},
            {"reconfigure": {"reservedSystemCPUs": "0-1,16-17"}},
            {"restart": {}},
            {"reconcile": {}},
            {"restart": {}},
            {"restart": {"recover": True}},
        ]
    )
    assert report.events[2].notes  # reconfigure only notes the change
    assert report.events[2].default_cpuset == "0,3-16,19-31"
    assert report.events[3].admitted is False
    assert report.events[3].error is not None
    assert report.events[3].error["type"] == "StateValidationError"
    assert "drain this node" in report.events[3].error["message"]
    assert report.events[4].error is not None
    assert report.events[4].error["type"] == "NodeNotReady"
    assert report.events[5].admitted is False  # refused again: nothing changed
    assert report.events[6].admitted is True
    assert report.events[6].repairs
    assert report.events[6].containers["a/c"]["cpus"] == "2-3,18-19"


def test_reconcile_pushes_after_a_restart_then_has_nothing_to_do() -> None:
    report = run(
        [
            {"admit": pod("a")},
            {"reconcile": {}},
            {"restart": {}},
            {"reconcile": {}},
            {"reconcile": {}},
        ]
    )
    assert report.events[2].reconcile == {"updated": {}, "unchanged": ["a/c"], "failed": {}}
    assert report.events[4].reconcile == {"updated": {"a/c": "1,17"}, "unchanged": [], "failed": {}}
    assert report.events[5].reconcile == {"updated": {}, "unchanged": ["a/c"], "failed": {}}


def test_hotplug_takes_effect_at_restart() -> None:
    report = run(
        [
            {"offline": "30-31"},
            {"restart": {}},
            {"restart": {"recover": True}},
            {"online": "30-31"},
            {"restart": {"recover": True}},
            {"offline": "99"},
        ]
    )
    assert report.events[1].default_cpuset == "0-31"  # nothing until the restart
    assert report.events[2].admitted is False  # the state still names 30-31
    assert report.events[3].default_cpuset == "0-29"
    assert report.events[5].default_cpuset == "0-31"
    assert report.events[6].error is not None
    assert report.events[6].error["type"] == "ScenarioError"


def test_reconfigure_takes_effect_at_restart() -> None:
    report = run(
        [
            {"reconfigure": {"reservedSystemCPUs": "0-1,16-17"}},
            {"admit": pod("a")},
            {"delete": "a"},
            {"restart": {}},
            {"admit": pod("b")},
        ]
    )
    assert report.events[2].containers["c"]["cpus"] == "1,17"  # old reservation still in force
    assert report.events[4].admitted is True
    assert report.events[5].containers["c"]["cpus"] == "2,18"


def test_metrics_are_in_the_report() -> None:
    report = run([{"admit": pod("a", "3")}, {"admit": pod("b", "40")}])
    metrics = report.metrics
    assert metrics["kubelet_cpu_manager_pinning_requests_total"] == 2
    assert metrics["kubelet_cpu_manager_pinning_errors_total"] == 1
    assert metrics["kubelet_cpu_manager_exclusive_cpu_allocation_count"] == 3
    # the shared pool the kubelet reports excludes the reserved CPUs: 32 - 3 - 2
    assert metrics["kubelet_cpu_manager_shared_pool_size_millicores"] == 27000
    assert metrics["kubelet_topology_manager_admission_requests_total"] == 2
    assert metrics['kubelet_cpu_manager_allocation_per_numa{numa_node="0"}'] == 3


def test_report_json_shape() -> None:
    out = run([{"admit": pod("a")}]).to_json(explain=True)
    assert set(out) >= {"scenario", "events", "final"}
    event = out["events"][1]
    assert {"event", "pod", "uid", "admitted", "error", "containers", "defaultCpuSet"} <= set(event)
    assert set(event["containers"]["c"]) >= {"cpus", "numa", "hint"}
    assert set(out["final"]) == {"defaultCpuSet", "entries"}


def test_admitting_a_running_pod_twice_is_refused() -> None:
    report = run([{"admit": pod("a")}, {"admit": pod("a")}])
    assert report.events[2].error is not None
    assert report.events[2].error["type"] == "ScenarioError"
