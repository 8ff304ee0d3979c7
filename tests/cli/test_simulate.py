"""`cpumanager simulate`: table output, the JSON shape, several files, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli.runner import Run, run_main

SCENARIO = """
machine: {shape: 2s1n8c2t}
kubelet: {cpuManagerPolicy: static, reservedSystemCPUs: "0,16",
          topologyManagerPolicy: single-numa-node}
events:
  - admit:
      metadata: {name: db}
      spec: {containers: [{name: pg, resources: {limits: {cpu: "4", memory: 1Gi}}}]}
  - admit:
      metadata: {name: huge}
      spec: {containers: [{name: x, resources: {limits: {cpu: "20", memory: 1Gi}}}]}
  - delete: db
"""


def run(*args: str | Path) -> Run:
    return run_main(["simulate", *args], env={"COLUMNS": "200"})


def scenario(tmp_path: Path, name: str = "s.yaml", text: str = SCENARIO) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_table_output(tmp_path: Path) -> None:
    result = run(scenario(tmp_path), "--explain")
    assert result.exit_code == 0, result.stderr
    for text in ("scenario", "start", "admit", "delete", "huge", "TopologyAffinityError"):
        assert text in result.output
    assert "20 CPUs needed, free per node 0:10, 1:16" in " ".join(result.output.split())
    assert "final shared pool: 0-31" in result.output


def test_json_shape(tmp_path: Path) -> None:
    result = run(scenario(tmp_path), "-o", "json")
    assert result.exit_code == 0, result.stderr
    report: dict[str, Any] = json.loads(result.output)
    assert report["scenario"] == str(tmp_path / "s.yaml")
    start, admit, rejected, delete = report["events"]
    assert start["event"] == "start"
    assert {"event", "pod", "uid", "admitted", "error", "containers", "defaultCpuSet"} <= set(admit)
    assert admit["error"] is None
    assert admit["containers"]["pg"]["cpus"] == "1-2,17-18"
    assert admit["containers"]["pg"]["numa"] == [0]
    assert admit["containers"]["pg"]["hint"] == {"affinity": [0], "preferred": True}
    assert admit["defaultCpuSet"] == "0,3-16,19-31"
    assert rejected["admitted"] is False
    assert set(rejected["error"]) == {"type", "message"}
    assert rejected["error"]["type"] == "TopologyAffinityError"
    assert "explain" not in rejected
    assert delete["event"] == "delete"
    assert report["final"] == {"defaultCpuSet": "0-31", "entries": {}}


def test_explain_adds_hints_and_reasons(tmp_path: Path) -> None:
    report = json.loads(run(scenario(tmp_path), "-o", "json", "--explain").output)
    why = report["events"][2]["explain"][0]
    assert why["blocking"] == ["cpu"]
    assert why["providers"]["cpu"] == {"cpu": [{"affinity": [0, 1], "preferred": True}]}
    assert "single-numa-node accepts only one node" in why["why"][0]


def test_several_scenarios_one_json_object_per_line(tmp_path: Path) -> None:
    first = scenario(tmp_path, "a.yaml")
    second = scenario(tmp_path, "b.yaml", "machine: {shape: 1s1n2c2t}\n")
    result = run(first, second, "-o", "json")
    assert result.exit_code == 0, result.stderr
    lines = result.output.strip().splitlines()
    assert [json.loads(line)["scenario"] for line in lines] == [str(first), str(second)]


def test_no_scenario_runs_the_embedded_demo() -> None:
    result = run("-o", "json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.output)
    assert report["scenario"] == "(embedded demo.yaml)"
    assert len(report["events"]) == 9


def test_missing_file_is_a_one_line_error(tmp_path: Path) -> None:
    result = run(tmp_path / "missing.yaml")
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("cpumanager: error: scenario ")
    assert "does not exist" in lines[0]
    assert "Traceback" not in result.stderr


def test_malformed_scenario_is_a_one_line_error(tmp_path: Path) -> None:
    result = run(scenario(tmp_path, text="events: [{boot: {}}]\n"))
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1
    assert "events[0]: unknown event 'boot'" in result.stderr
