"""`node preflight --to-kubelet` on a fixture node: an upgrade, a downgrade across V4."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from cpumanager.checkpoint import newer
from cpumanager.nodeview.snapshot import CheckpointFile, snapshot_to_json
from tests.cli.runner import Run, run_main
from tests.nodeanswers.snapshots import fixture_snapshot


def run(*args: str | Path) -> Run:
    return run_main(["node", "preflight", *args])


def test_upgrade_of_the_kubeadm_node_is_safe(tmp_path: Path) -> None:
    path = tmp_path / "kubeadm.json"
    path.write_bytes(snapshot_to_json(fixture_snapshot("kubeadm")))
    result = run(path, "--to-kubelet", "1.37")
    assert result.exit_code == 0, result.output + result.stderr
    assert result.output.startswith("safe: kubelet 1.37")


def test_downgrade_across_the_format_change_names_the_pods(tmp_path: Path) -> None:
    node = fixture_snapshot("kubeadm")
    v4 = newer.encode_cpu_v4("static", "1-7,9-15", {"p1": {"c": "0"}}, {"p1": "0"})
    files = dict(node.checkpoints)
    files["cpu_manager_state"] = CheckpointFile("cpu_manager_state", "/x", v4, None)
    path = tmp_path / "v4.json"
    path.write_bytes(snapshot_to_json(replace(node, checkpoints=files)))
    result = run(path, "--to-kubelet", "1.35", "-o", "json")
    report = json.loads(result.output)
    assert result.exit_code == 1
    assert report["verdict"] == "drain"
    assert report["drain"] == ["p1"]
