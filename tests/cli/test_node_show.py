"""`cpumanager node show` as a shell sees it: a picture at 80 columns, and JSON."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from cpumanager.cli.options import DEGRADED_EXIT
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
    assert picture["largestGuaranteedPod"] == {"packed": 7, "singleNuma": 7}


def test_policy_switched_node_is_shown_degraded(tmp_path: Path) -> None:
    result = run_main(["node", "show", _snap(tmp_path, "policy-switched")])
    assert result.exit_code == DEGRADED_EXIT == 4, result.stderr
    assert result.output.startswith("!" * 80 + "\nDEGRADED: the kubelet would not start")
    assert 'configured policy "none" differs from state checkpoint policy "static"' in (
        " ".join(result.output.split())
    )
    # who holds what per the raw checkpoint, although the kubelet refuses it
    assert "exclusive" in result.output
    assert "largest Guaranteed pod still admitted: none" in result.output


def test_corrupt_checkpoint_keeps_the_checksum_detail(tmp_path: Path) -> None:
    result = run_main(["node", "show", _snap(tmp_path, "corrupt-checkpoint")])
    assert result.exit_code == DEGRADED_EXIT, result.stderr
    flat = " ".join(result.output.split())
    assert "checkpoint is corrupted" in flat
    assert "checksum mismatch (stored 568600742, computed 568600743)" in flat
    assert "exclusive 1-2,9-10 prod/db-0 postgres" in flat
    assert "exclusive 3,11 prod/cache-0 redis" in flat
    assert all(len(line) <= 80 for line in result.output.splitlines() if " " in line.strip())


def test_degraded_json_and_yaml(tmp_path: Path) -> None:
    snap = _snap(tmp_path, "corrupt-checkpoint")
    result = run_main(["node", "show", snap, "-o", "json"])
    assert result.exit_code == DEGRADED_EXIT
    picture = json.loads(result.output)
    assert picture["largestGuaranteedPod"] is None
    assert any("checksum mismatch" in p for p in picture["degraded"]["problems"])
    assert "degraded" in result.stderr
    as_yaml = run_main(["node", "show", snap, "-o", "yaml"])
    assert yaml.safe_load(as_yaml.output) == picture


def test_healthy_node_has_no_degraded_key(tmp_path: Path) -> None:
    result = run_main(["node", "show", _snap(tmp_path, "kubeadm"), "-o", "yaml"])
    assert result.exit_code == 0
    assert "degraded" not in yaml.safe_load(result.output)


def test_wide_adds_totals(tmp_path: Path) -> None:
    snap = _snap(tmp_path, "kubeadm")
    table = run_main(["node", "show", snap]).output
    wide = run_main(["node", "show", snap, "-o", "wide"]).output
    assert "total" not in table
    assert "total)" in wide
