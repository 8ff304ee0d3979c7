"""Scenario parsing: every event kind, and every malformed input as a one-line ScenarioError."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cpumanager.core.cpuset import CPUSet
from cpumanager.errors import ScenarioError
from cpumanager.sim.scenario import (
    Admit,
    Delete,
    Exit,
    Hotplug,
    Reconcile,
    Reconfigure,
    Restart,
    RunningPod,
    load_scenario,
    parse_scenario,
)

POD = {
    "metadata": {"name": "p1", "uid": "uid-p1"},
    "spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "2", "memory": "1Gi"}}}]},
}
POD2 = {"metadata": {"name": "p2"}, "spec": {"containers": [{"name": "c"}]}}
BASE: dict[str, Any] = {"machine": {"shape": "1s1n4c2t"}, "kubelet": {"cpuManagerPolicy": "none"}}


def parse(**extra: Any) -> Any:
    return parse_scenario({**BASE, **extra}, source="t.yaml", base=Path())


def one_event(raw: object) -> object:
    return parse(events=[raw]).events[0]


EVENTS = [
    pytest.param({"delete": "p1"}, Delete("p1"), id="delete"),
    pytest.param({"exit": "uid-p1"}, Exit("uid-p1"), id="exit"),
    pytest.param({"restart": None}, Restart(None), id="restart-all-running"),
    pytest.param({"restart": {"running": []}}, Restart(()), id="restart-none-running"),
    pytest.param(
        {"restart": {"running": ["p1", {"pod": "uid-p2", "containers": {"c": "cri://x"}}]}},
        Restart((RunningPod("p1"), RunningPod("uid-p2", {"c": "cri://x"}))),
        id="restart-by-name-and-uid-with-ids",
    ),
    pytest.param({"restart": {"recover": True}}, Restart(None, recover=True), id="recover"),
    pytest.param({"reconcile": {}}, Reconcile(), id="reconcile"),
    pytest.param({"offline": "4-7"}, Hotplug(CPUSet.parse("4-7"), online=False), id="offline"),
    pytest.param({"online": 3}, Hotplug(CPUSet.parse("3"), online=True), id="online"),
    pytest.param(
        {"reconfigure": {"reservedSystemCPUs": "0"}},
        Reconfigure({"reservedSystemCPUs": "0"}),
        id="reconfigure",
    ),
]


@pytest.mark.parametrize(("raw", "expected"), EVENTS)
def test_event_kinds(raw: object, expected: object) -> None:
    assert one_event(raw) == expected


def test_admit_inline_and_from_a_file(tmp_path: Path) -> None:
    event = one_event({"admit": POD})
    assert isinstance(event, Admit)
    assert event.pod.name == "p1"
    (tmp_path / "pod.yaml").write_text("metadata: {name: p2}\nspec: {containers: [{name: c}]}\n")
    scenario = parse_scenario(
        {**BASE, "events": [{"admit": {"file": "pod.yaml"}}]}, source="s", base=tmp_path
    )
    assert isinstance(scenario.events[0], Admit)
    assert scenario.events[0].pod.name == "p2"


def test_top_level_keys_and_ignored_expect() -> None:
    scenario = parse(
        name="n",
        pods=[POD],
        containers={"p1": {"c": "containerd://abc"}},
        state={"defaultCpuSet": "0-1,4-7", "entries": {"uid-p1": {"c": "2-3"}}},
        devices={"nvidia.com/gpu": {0: 1}},
        memory={0: {"memory": "1Gi"}},
        expect={1: {"admitted": True}},
    )
    assert scenario.name == "n"
    assert scenario.container_ids == {"p1": {"c": "containerd://abc"}}
    assert scenario.state_bytes is not None
    assert b'"uid-p1":{"c":"2-3"}' in scenario.state_bytes
    assert [p.uid for p in scenario.pods] == ["uid-p1"]


def test_default_machine_and_kubelet_file(tmp_path: Path) -> None:
    (tmp_path / "kubelet.yaml").write_text("cpuManagerPolicy: none\n")
    scenario = parse_scenario({"kubelet": {"file": "kubelet.yaml"}}, source="s", base=tmp_path)
    assert scenario.kubelet == {"cpuManagerPolicy": "none"}
    assert scenario.topology.name == "topoDualSocketHT"


def test_state_file_is_read_as_bytes(tmp_path: Path) -> None:
    (tmp_path / "cp").write_bytes(b'{"policyName":"none","defaultCpuSet":"","checksum":0}')
    scenario = parse_scenario({**BASE, "state": {"file": "cp"}}, source="s", base=tmp_path)
    assert scenario.state_bytes == b'{"policyName":"none","defaultCpuSet":"","checksum":0}'


MALFORMED = [
    pytest.param(["not", "a", "mapping"], "scenario: expected a mapping", id="not-a-mapping"),
    pytest.param({"machine": {}}, "machine: give one of", id="machine-kind"),
    pytest.param({"machine": "big"}, "machine: expected a mapping", id="machine-type"),
    pytest.param({"kubelet": ["x"]}, "kubelet: expected a mapping", id="kubelet-type"),
    pytest.param({"kubelet": {"file": 3}}, "kubelet.file: expected a path", id="kubelet-file"),
    pytest.param({"kubelet": {"file": "nope.yaml"}}, "kubelet.file: cannot read", id="k-missing"),
    pytest.param({"events": "admit"}, "events: expected a list", id="events-type"),
    pytest.param({"events": [{"a": 1, "b": 2}]}, "events[0]: each event", id="two-keys"),
    pytest.param({"events": ["admit"]}, "events[0]: each event", id="bare-string"),
    pytest.param({"events": [{"boot": {}}]}, "events[0]: unknown event 'boot'", id="unknown"),
    pytest.param(
        {"events": [{"admit": [POD, POD2]}]}, "events[0].admit: expected exactly one", id="two-pods"
    ),
    pytest.param({"events": [{"admit": []}]}, "events[0].admit: expected exactly one", id="no-pod"),
    pytest.param({"events": [{"delete": ""}]}, "events[0].delete: give the pod", id="delete-empty"),
    pytest.param({"events": [{"exit": 3}]}, "events[0].exit: give the pod", id="exit-type"),
    pytest.param(
        {"events": [{"restart": ["p1"]}]}, "events[0].restart: expected a mapping", id="restart"
    ),
    pytest.param(
        {"events": [{"restart": {"running": "p1"}}]},
        "restart.running: expected a list",
        id="running",
    ),
    pytest.param(
        {"events": [{"restart": {"running": [3]}}]}, "restart.running: cannot read item", id="item"
    ),
    pytest.param(
        {"events": [{"restart": {"running": [{"pod": "p", "containers": ["c"]}]}}]},
        "restart.running[].containers",
        id="running-ids",
    ),
    pytest.param(
        {"events": [{"reconfigure": "x"}]}, "events[0].reconfigure: expected a mapping", id="reconf"
    ),
    pytest.param({"events": [{"offline": "x-"}]}, "events[0].offline", id="offline-cpuset"),
    pytest.param({"state": "cp"}, "state: expected a mapping", id="state-type"),
    pytest.param({"state": {"file": "nope"}}, "state.file: cannot read", id="state-missing"),
    pytest.param(
        {"state": {"entries": {"p": "0"}}}, "state.entries: expected a mapping", id="entries"
    ),
    pytest.param({"devices": ["gpu"]}, "devices: expected a mapping", id="devices"),
    pytest.param({"memory": 3}, "memory: expected a mapping", id="memory"),
    pytest.param({"containers": {"p9": {"c": "x"}}}, "containers.p9: no pod", id="ids-pod"),
    pytest.param(
        {"pods": [POD], "containers": {"p1": {"d": "x"}}}, "containers.p1.d", id="ids-name"
    ),
    pytest.param(
        {"pods": [POD], "containers": {"p1": {"c": 5}}}, "containers.p1.c: expected", id="ids-type"
    ),
    pytest.param({"pods": [{"metadata": {"name": "x"}}]}, "scenario 't.yaml'", id="bad-manifest"),
]


@pytest.mark.parametrize(("raw", "message"), MALFORMED)
def test_malformed_scenarios_give_one_line_errors(raw: object, message: str) -> None:
    data = {**BASE, **raw} if isinstance(raw, dict) else raw
    with pytest.raises(ScenarioError) as info:
        parse_scenario(data, source="t.yaml", base=Path())
    text = str(info.value)
    assert message in text
    assert "\n" not in text


def test_load_scenario_errors(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="cannot read scenario"):
        load_scenario(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("events: [\n")
    with pytest.raises(ScenarioError, match="is not valid YAML/JSON") as info:
        load_scenario(bad)
    assert "\n" not in str(info.value)


def test_load_scenario_resolves_paths_next_to_the_file(tmp_path: Path) -> None:
    (tmp_path / "pod.json").write_text(
        '{"metadata": {"name": "j"}, "spec": {"containers": [{"name": "c"}]}}'
    )
    path = tmp_path / "s.yaml"
    path.write_text("machine: {shape: 1s1n2c1t}\nevents:\n  - admit: {file: pod.json}\n")
    scenario = load_scenario(path)
    assert scenario.source == str(path)
    assert isinstance(scenario.events[0], Admit)


def test_hostile_scenario_yaml_is_a_one_line_error(tmp_path: Path) -> None:
    deep = tmp_path / "deep.yaml"
    deep.write_text("events: " + "[" * 30_000)  # segfaulted libyaml's composer
    with pytest.raises(ScenarioError, match="nested more than 100 levels") as info:
        load_scenario(deep)
    assert "\n" not in str(info.value)
    huge = tmp_path / "huge.yaml"
    huge.write_text("events: " + "1" * 5_000)
    with pytest.raises(ScenarioError, match="more than 4300 digits"):
        load_scenario(huge)


def test_a_sysfs_machine_is_the_kubelets_view_unless_view_kernel(tmp_path: Path) -> None:
    from tests.adapters.sysfs.cadvisor_trees import CASES

    CASES["nonuma-2pkg"](tmp_path / "tree")  # cadvisor: one pseudo-node per package

    def numa(machine: dict[str, Any]) -> tuple[int, ...]:
        raw = {**BASE, "machine": machine}
        return parse_scenario(raw, source="t", base=tmp_path).topology.numa_ids()

    assert numa({"sysfs": "tree"}) == (0, 1)
    assert numa({"sysfs": "tree", "view": "kernel"}) == (0,)
    with pytest.raises(ScenarioError, match="unknown topology view"):
        numa({"sysfs": "tree", "view": "hwloc"})
