"""`resize` events in scenarios, as each kubelet release treats them on a static node."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cpumanager.core import versions
from cpumanager.core.resize import CPU_INFEASIBLE, MEMORY_INFEASIBLE, resize_verdict
from cpumanager.errors import ScenarioError
from cpumanager.sim.scenario import parse_scenario
from cpumanager.sim.simulate import SimulationReport, simulate

MACHINE = {"shape": "2s1n8c2t"}


def pod(name: str, cpu: str, memory: str = "1Gi", *, burstable: bool = False) -> Any:
    limits = {"cpu": cpu, "memory": memory}
    resources: dict[str, Any] = {"limits": limits}
    if burstable:
        resources = {"requests": {"cpu": "500m"}}
    return {
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "resources": resources}]},
    }


def run(version: str, events: list[Any], gates: dict[str, bool] | None = None) -> SimulationReport:
    kubelet: dict[str, Any] = {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0,16"}
    if gates:
        kubelet["featureGates"] = gates
    data = {"machine": MACHINE, "kubelet": kubelet, "kubeletVersion": version, "events": events}
    return simulate(parse_scenario(data, source="test", base=Path()))


@pytest.mark.parametrize(
    ("version", "cpu", "memory", "infeasible"),
    [
        ("1.33", "2", "2Gi", True),  # 1.32-1.33 (#128287): any resize of a Guaranteed pod
        ("1.34", "2", "2Gi", False),  # 1.34: only a CPU request change
        ("1.34", "4", "1Gi", True),
        ("1.35", "4", "1Gi", True),
        ("1.37", "2", "2Gi", False),
    ],
)
def test_guaranteed_resize_per_release(
    version: str, cpu: str, memory: str, infeasible: bool
) -> None:
    resize = {"pod": "a", "container": "c", "cpu": cpu, "memory": memory}
    report = run(version, [{"admit": pod("a", "2")}, {"resize": resize}])
    event = report.events[2]
    if infeasible:
        text = versions.profile(versions.parse_release(version)).resize_cpu_text
        assert event.error == {"type": "Infeasible", "message": text}
        assert text == CPU_INFEASIBLE or version == "1.33"
        assert event.admitted is False
    else:
        assert event.error is None
        assert event.admitted is True


def test_exclusive_cpus_gate_skips_the_check_without_resizing_the_set() -> None:
    gates = {"InPlacePodVerticalScalingExclusiveCPUs": True}
    report = run(
        "1.35",
        [{"admit": pod("a", "2")}, {"resize": {"pod": "a", "container": "c", "cpu": 4}}],
        gates,
    )
    event = report.events[2]
    assert event.admitted is True
    assert any("CPU set is not resized" in note for note in event.notes)
    assert report.final_entries  # the exclusive set is unchanged
    assert len(next(iter(report.final_entries.values()))["c"].split(",")) == 2


def test_shared_pool_resize_changes_only_the_quota() -> None:
    report = run(
        "1.35",
        [
            {"admit": pod("b", "1", burstable=True)},
            {"resize": {"pod": "b", "container": "c", "cpu": "700m"}},
        ],
    )
    event = report.events[2]
    assert event.admitted is True
    assert event.default_cpuset == report.events[1].default_cpuset
    assert any("shared pool" in note for note in event.notes)


def test_before_in_place_resize_existed() -> None:
    report = run(
        "1.26", [{"admit": pod("a", "2")}, {"resize": {"pod": "a", "container": "c", "cpu": 4}}]
    )
    assert "does not exist in kubelet 1.26" in report.events[2].notes[0]


def test_memory_manager_static_refuses_a_memory_change() -> None:
    profile = versions.profile((1, 35))
    verdict = resize_verdict(
        profile, guaranteed=True, cpu_policy="none", memory_policy="Static",
        cpu_changed=False, memory_changed=True,
    )  # fmt: skip
    assert (verdict.reason, verdict.message) == ("Infeasible", MEMORY_INFEASIBLE)


def test_1_32_refuses_a_guaranteed_resize_once_the_alpha_gate_is_on() -> None:
    """#128287 shipped in 1.32: the check predates the gate's beta (was modelled from 1.33)."""
    resize = {"pod": "a", "container": "c", "memory": "2Gi"}
    events = [{"admit": pod("a", "2")}, {"resize": resize}]
    event = run("1.32", events, {"InPlacePodVerticalScaling": True}).events[2]
    message = "Resize is infeasible for Guaranteed Pods alongside CPU Manager static policy"
    assert event.error == {"type": "Infeasible", "message": message}
    assert run("1.31", events, {"InPlacePodVerticalScaling": True}).events[2].admitted is True


@pytest.mark.parametrize(
    ("release", "gates", "infeasible"),
    [
        ((1, 33), {}, True),
        ((1, 33), {"InPlacePodVerticalScalingExclusiveCPUs": True}, False),  # skipped both
        ((1, 34), {"InPlacePodVerticalScalingExclusiveCPUs": True}, True),  # its own gate now
        ((1, 34), {"InPlacePodVerticalScalingExclusiveMemory": True}, False),  # #132473
    ],
)
def test_memory_check_gates_per_release(
    release: tuple[int, int], gates: dict[str, bool], infeasible: bool
) -> None:
    verdict = resize_verdict(
        versions.profile(release, gates), guaranteed=True, cpu_policy="none",
        memory_policy="Static", cpu_changed=False, memory_changed=True,
    )  # fmt: skip
    assert (verdict.outcome == "infeasible") is infeasible
    if infeasible:
        assert verdict.message == versions.profile(release).resize_memory_text


def test_bad_resize_event_is_one_line() -> None:
    data = {"machine": MACHINE, "events": [{"resize": {"pod": "a"}}]}
    with pytest.raises(ScenarioError, match="give pod, container"):
        parse_scenario(data, source="t", base=Path())
    with pytest.raises(ScenarioError, match="kubeletVersion"):
        parse_scenario({"machine": MACHINE, "kubeletVersion": "9.9"}, source="t", base=Path())


def test_simulate_cli_kubelet_version_overrides_the_scenario(tmp_path: Path) -> None:
    import json

    import yaml

    from tests.cli.runner import run_main

    resize = {"pod": "a", "container": "c", "memory": "2Gi"}
    scenario = {
        "machine": MACHINE,
        "kubelet": {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0,16"},
        "kubeletVersion": "1.37",
        "events": [{"admit": pod("a", "2")}, {"resize": resize}],
    }
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(scenario))
    old = json.loads(run_main(["simulate", path, "--kubelet-version", "1.33", "-o", "json"]).output)
    new = json.loads(run_main(["simulate", path, "-o", "json"]).output)
    assert old["events"][-1]["error"]["type"] == "Infeasible"
    assert new["events"][-1]["admitted"] is True
