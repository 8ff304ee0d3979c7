"""`cpumanager fleet fit` / `fleet capacity` through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.runner import run_main
from tests.fleet.generate import guaranteed_pod_yaml, write_snapshots


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cli-fleet")
    write_snapshots(root / "snaps", 12)
    (root / "pod.yaml").write_text(guaranteed_pod_yaml("4"))
    (root / "big.yaml").write_text(guaranteed_pod_yaml("500"))
    return root


def _run(*args: str) -> tuple[int, str]:
    result = run_main(["fleet", *args])
    return result.exit_code, result.output + result.stderr


def test_fit_places_replicas_and_groups_refusals(fleet: Path) -> None:
    snaps = str(fleet / "snaps")
    code, out = _run("fit", str(fleet / "pod.yaml"), "--snapshots", snaps, "--replicas", "3")
    assert code == 0, out
    assert out.startswith("default/web: 3 of 3 replica(s) placed")
    code, out = _run(
        "fit", str(fleet / "pod.yaml"), "--snapshots", snaps, "--replicas", "3", "-o", "json"
    )
    report = json.loads(out)
    assert report["placed"] == 3
    assert sum(report["perNode"].values()) == 3
    assert all(g["count"] == len(g["nodes"]) for g in report["rejections"])


def test_fit_exits_1_when_a_replica_has_no_node(fleet: Path) -> None:
    code, out = _run("fit", str(fleet / "big.yaml"), "--snapshots", str(fleet / "snaps"))
    assert code == 1
    assert "unschedulable" in out
    assert "OutOfcpu" in out


def test_capacity_json_and_table_agree(fleet: Path) -> None:
    args = ["capacity", str(fleet / "pod.yaml"), "--snapshots", str(fleet / "snaps")]
    code, out = _run(*args, "-o", "json")
    assert code == 0, out
    report = json.loads(out)
    assert report["total"] == sum(report["perNode"].values()) > 0
    assert not report["atLeast"]
    code, out = _run(*args)
    assert f"the fleet takes {report['total']} more copies" in out


def test_bad_input_is_a_one_line_error(fleet: Path, tmp_path: Path) -> None:
    code, out = _run("capacity", str(tmp_path / "nope.yaml"), "--snapshots", str(fleet))
    assert code != 0
    assert "Traceback" not in out
    (tmp_path / "pod.yaml").write_text(guaranteed_pod_yaml("1"))
    code, out = _run("capacity", str(tmp_path / "pod.yaml"), "--snapshots", str(tmp_path))
    assert code != 0
    assert "holds no snapshot" in out
    assert len(out.strip().splitlines()) == 1


def test_summary_by_default_every_node_with_all(tmp_path: Path) -> None:
    write_snapshots(tmp_path / "snaps", 30)
    (tmp_path / "pod.yaml").write_text(guaranteed_pod_yaml("2"))
    args = ["capacity", str(tmp_path / "pod.yaml"), "--snapshots", str(tmp_path / "snaps")]
    code, summary = _run(*args, "--workers", "1")
    assert code == 0, summary
    named = [ln for ln in summary.splitlines() if ln.startswith("  node-")]
    assert len(named) == 10  # the top nodes only
    assert "every node: -o wide (or --all)" in summary
    for extra in (["--all"], ["-o", "wide"]):
        code, every = _run(*args, "--workers", "1", *extra)
        assert code == 0
        assert len([ln for ln in every.splitlines() if ln.startswith("  node-")]) == 30
    code, fit = _run(
        "fit", *args[1:], "--workers", "1", "--replicas", "40"
    )  # fmt: skip
    lines = fit.splitlines()
    assert lines[0].startswith("default/web: ")
    assert not any(ln.startswith("  replica ") for ln in lines)  # grouped per node
    assert any("(replicas " in ln or "(replica " in ln for ln in lines)
    code, every_replica = _run("fit", *args[1:], "--workers", "1", "--replicas", "40", "--all")
    assert sum(ln.startswith("  replica ") for ln in every_replica.splitlines()) == 40
