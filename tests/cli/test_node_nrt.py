"""`cpumanager node nrt` as a shell sees it."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from cpumanager.nodeview.snapshot import snapshot_to_json
from tests.cli.runner import run_main
from tests.nodeanswers.snapshots import fixture_snapshot


def _snap(tmp_path: Path, name: str) -> Path:
    path = tmp_path / "snap.json"
    path.write_bytes(snapshot_to_json(fixture_snapshot(name)))
    return path


def test_yaml_by_default_ready_for_kubectl(tmp_path: Path) -> None:
    result = run_main(["node", "nrt", _snap(tmp_path, "kubeadm")])
    assert result.exit_code == 0, result.stderr
    document = yaml.safe_load(result.output)
    assert document["kind"] == "NodeResourceTopology"
    assert [z["name"] for z in document["zones"]] == ["node-0", "node-1"]


def test_json(tmp_path: Path) -> None:
    result = run_main(["node", "nrt", _snap(tmp_path, "kubeadm"), "-o", "json"])
    assert json.loads(result.output)["apiVersion"] == "topology.node.k8s.io/v1alpha2"


def test_corrupt_checkpoint_is_degraded(tmp_path: Path) -> None:
    result = run_main(["node", "nrt", _snap(tmp_path, "corrupt-checkpoint"), "-o", "json"])
    assert result.exit_code == 4
    document = json.loads(result.output)
    attributes = {a["name"]: a["value"] for a in document["attributes"]}
    assert "checkpoint is corrupted" in attributes["cpumanager.io/degraded"]
    cpu = {z["name"]: r for z in document["zones"] for r in z["resources"] if r["name"] == "cpu"}
    # node 0: CPUs 0-3,8-11, reserved 0,8, held 1-3,9-11 per the raw checkpoint
    assert (cpu["node-0"]["allocatable"], cpu["node-0"]["available"]) == ("6", "0")
    assert "checksum mismatch" in result.stderr


def test_missing_snapshot_is_one_line(tmp_path: Path) -> None:
    result = run_main(["node", "nrt", tmp_path / "nope.json"])
    assert result.exit_code == 1
    assert "does not exist" in result.stderr
