"""`cpumanager node show` as a shell sees it: a picture at 80 columns, and JSON."""

from __future__ import annotations

import json
from pathlib import Path

from cpumanager.nodeview.snapshot import snapshot_to_json
from tests.cli.runner import run_main
from tests.nodeanswers.snapshots import fixture_snapshot


def _snap(tmp_path: Path, name: str) -> Path:
    path = tmp_path / "snap.json"
    path.write_bytes(snapshot_to_json(fixture_snapshot(name)))
    return path


def test_picture_reads_at_80_columns(tmp_path: Path) -> None:
    result = run_main(["node", "show", _snap(tmp_path, "gpu")])
    assert result.exit_code == 0, result.stderr
    assert all(len(line) <= 80 for line in result.output.splitlines())
    assert "exclusive   1-2,9-10  ml/trainer-a train" in result.output
    assert "largest Guaranteed pod still admitted: 6 CPUs" in result.output


def test_json(tmp_path: Path) -> None:
    result = run_main(["node", "show", _snap(tmp_path, "kubeadm"), "-o", "json"])
    picture = json.loads(result.output)
    assert picture["largestGuaranteedPod"] == {"packed": 7, "single_numa": 7}


def test_policy_switched_node_is_one_line(tmp_path: Path) -> None:
    result = run_main(["node", "show", _snap(tmp_path, "policy-switched")])
    assert result.exit_code == 1
    assert len(result.stderr.strip().splitlines()) == 1
