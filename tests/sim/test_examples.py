"""Every scenario in ``examples/`` runs through the simulator and meets its ``expect`` block.

An example's ``expect`` maps an event index (0 = the start, 1.. = the scenario's events) to
the fields that event must show, and ``final`` to the end state. Every expected value was
derived by hand from the kubelet's rules before the simulator ran (see each file's header).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from cpumanager.cli.main import cli
from cpumanager.sim.scenario import load_scenario
from cpumanager.sim.simulate import simulate

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FILES = sorted(EXAMPLES.glob("*.yaml"))


def _expectations(path: Path) -> dict[Any, dict[str, Any]]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    expect = data.get("expect")
    assert isinstance(expect, dict), f"{path.name} has no expect block"
    assert expect, f"{path.name} has an empty expect block"
    return expect


def _check_event(where: str, event: Mapping[str, Any], want: Mapping[str, Any]) -> None:
    containers = event.get("containers", {})
    for key, value in want.items():
        label = f"{where} {key}"
        if key == "admitted":
            assert event.get("admitted") is value, label
        elif key == "error":
            assert event["error"] is not None, label
            assert event["error"]["type"] == value, label
        elif key == "message_contains":
            assert value in event["error"]["message"], label
        elif key == "default_cpuset":
            assert event["defaultCpuSet"] == value, label
        elif key in ("cpus", "numa", "memory_numa", "devices"):
            field = "memoryNuma" if key == "memory_numa" else key  # the report's camelCase
            got = {name: containers[name][field] for name in value}
            assert got == value, label
        elif key == "released":
            assert {r["pod"] for r in event.get("released", [])} == set(value), label
        elif key == "repairs":
            assert len(event.get("repairs", [])) >= value, label
        elif key == "reconcile":
            assert event["reconcile"] == value, label
        elif key == "blocking":
            rejected = [e for e in event["explain"] if e.get("admit") is False]
            assert rejected, f"{label}: no rejected merge to explain"
            assert set(rejected[-1]["blocking"]) == set(value), label
            summary = rejected[-1]["why"][-1]
            for resource in value:
                assert resource in summary, label
        else:
            pytest.fail(f"{label}: unknown expectation key")


def _check_final(where: str, report: Mapping[str, Any], want: Mapping[str, Any]) -> None:
    final = report["final"]
    for key, value in want.items():
        if key == "checkpoint":
            entries = json.loads(report["checkpoint"]).get("entries", {})
            nested = all(isinstance(v, dict) for v in entries.values())
            assert (value == "v2") == nested, f"{where} checkpoint format"
        elif key == "default_cpuset":
            assert final["defaultCpuSet"] == value, where
        elif key == "entries":
            for pod, containers in value.items():
                assert final["entries"][pod] == containers, f"{where} entries {pod}"
        else:
            pytest.fail(f"{where} final: unknown expectation key {key}")


def test_there_are_enough_examples() -> None:
    assert 8 <= len(FILES) <= 12


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_example_meets_its_expectations(path: Path) -> None:
    report = simulate(load_scenario(path)).to_json(explain=True)
    events = report["events"]
    for index, want in _expectations(path).items():
        if index == "final":
            _check_final(path.name, report, want)
            continue
        assert isinstance(index, int), f"{path.name}: expect keys are event indexes or final"
        assert index < len(events), f"{path.name}: no event {index}"
        _check_event(f"{path.name} #{index}", events[index], want)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_example_header_tells_the_story(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    header = [line for line in lines[:6] if line.startswith("#")]
    assert len(header) >= 3, f"{path.name} needs a comment header"


def test_rejections_explained_through_the_cli() -> None:
    path = EXAMPLES / "02-cpu-blocks-single-numa.yaml"
    result = CliRunner().invoke(cli, ["simulate", str(path), "--explain", "-o", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    rejected = report["events"][3]
    assert rejected["error"]["type"] == "TopologyAffinityError"
    why = " ".join(rejected["explain"][0]["why"])
    assert "cpu: " in why
    assert rejected["explain"][0]["blocking"] == ["cpu"]


def test_every_example_renders_as_a_table() -> None:
    result = CliRunner().invoke(cli, ["simulate", *map(str, FILES), "--explain"])
    assert result.exit_code == 0, result.output
    assert result.output.count("scenario ") >= len(FILES)
