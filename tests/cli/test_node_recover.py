"""`cpumanager node recover`: dry-run by default, atomic writes, the old bytes kept."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.cli.runner import run_main
from tests.nodeview.fixture_nodes import NODES_DIR


def _copy(tmp_path: Path, name: str) -> Path:
    node = tmp_path / name
    shutil.copytree(NODES_DIR / name, node)
    return node


def _snapshot(node: Path, out: Path) -> Path:
    argv = ["node", "snapshot", "--root", node, "--kubelet-root", node / "var/lib/kubelet"]
    argv += ["--pods", node / "pods.json", "--socket", node / "no.sock", "--output-file", out]
    taken = run_main(argv)
    assert taken.exit_code == 0, taken.stderr
    return out


@pytest.mark.parametrize("name", ["corrupt-checkpoint", "policy-switched"])
def test_dry_run_then_apply_lets_the_node_start(tmp_path: Path, name: str) -> None:
    node = _copy(tmp_path, name)
    state = node / "var/lib/kubelet/cpu_manager_state"
    original = state.read_bytes()
    snap = _snapshot(node, tmp_path / "snap.json")
    assert run_main(["node", "show", snap]).exit_code == 4

    dry = run_main(["node", "recover", snap])
    assert dry.exit_code == 0, dry.stderr
    assert "dry run: nothing written" in dry.output
    assert "would write" in dry.output
    assert state.read_bytes() == original

    done = run_main(["node", "recover", snap, "--apply", "-o", "json"])
    assert done.exit_code == 0, done.stderr
    answer = json.loads(done.output)
    assert answer["applied"] is True
    assert state.read_bytes().decode() == answer["files"][0]["content"]
    assert (state.parent / "cpu_manager_state.before-recover").read_bytes() == original

    again = _snapshot(node, tmp_path / "after.json")
    shown = run_main(["node", "show", again])
    assert shown.exit_code == 0, shown.output + shown.stderr
    assert "DEGRADED" not in shown.output
    assert run_main(["node", "recover", again]).output.startswith("nothing to recover")


def test_apply_refuses_a_file_changed_since_the_snapshot(tmp_path: Path) -> None:
    node = _copy(tmp_path, "corrupt-checkpoint")
    snap = _snapshot(node, tmp_path / "snap.json")
    state = node / "var/lib/kubelet/cpu_manager_state"
    state.write_bytes(state.read_bytes() + b" ")
    changed = state.read_bytes()
    result = run_main(["node", "recover", snap, "--apply"])
    assert result.exit_code == 1
    assert "changed since the snapshot" in result.stderr
    assert state.read_bytes() == changed
    assert not (state.parent / "cpu_manager_state.before-recover").exists()


def test_into_writes_elsewhere(tmp_path: Path) -> None:
    node = _copy(tmp_path, "policy-switched")
    snap = _snapshot(node, tmp_path / "snap.json")
    elsewhere = tmp_path / "out"
    elsewhere.mkdir()
    (elsewhere / "cpu_manager_state").write_bytes(
        (node / "var/lib/kubelet/cpu_manager_state").read_bytes()
    )
    result = run_main(["node", "recover", snap, "--apply", "--into", elsewhere])
    assert result.exit_code == 0, result.stderr
    assert b'"policyName":"none"' in (elsewhere / "cpu_manager_state").read_bytes()
