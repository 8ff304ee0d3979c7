"""`cpumanager node preflight` as a shell sees it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cpumanager.nodeview.snapshot import snapshot_to_json
from tests.cli.runner import run_main
from tests.nodeanswers.snapshots import fixture_snapshot
from tests.nodeview.fixture_nodes import NODES_DIR

CONFIG = NODES_DIR / "kubeadm/var/lib/kubelet/config.yaml"


@pytest.fixture
def kubeadm(tmp_path: Path) -> Path:
    path = tmp_path / "snap.json"
    path.write_bytes(snapshot_to_json(fixture_snapshot("kubeadm")))
    return path


def test_unchanged_configuration_exits_0(kubeadm: Path) -> None:
    result = run_main(["node", "preflight", kubeadm, "--kubelet-config", CONFIG])
    assert result.exit_code == 0, result.stderr
    assert result.output.startswith("safe:")


def test_policy_switch_exits_1_with_drain_list(kubeadm: Path, tmp_path: Path) -> None:
    new = tmp_path / "new.yaml"
    new.write_text(CONFIG.read_text().replace("cpuManagerPolicy: static", "cpuManagerPolicy: none"))
    before = kubeadm.read_bytes()
    result = run_main(["node", "preflight", kubeadm, "--kubelet-config", new, "-o", "json"])
    assert result.exit_code == 1
    answer = json.loads(result.output)
    assert 'configured policy "none" differs' in answer["refusal"]
    assert answer["drain"] == ["prod/cache-0", "prod/db-0"]
    assert kubeadm.read_bytes() == before


def test_flags_win_over_the_file(kubeadm: Path) -> None:
    result = run_main(
        ["node", "preflight", kubeadm, "--kubelet-config", CONFIG, "--flags", "--reserved-cpus=0-1"]
    )
    assert result.exit_code == 1
    assert 'not all reserved cpus: "0-1"' in result.output
    assert all(len(line) <= 80 for line in result.output.splitlines())


def test_invalid_new_configuration_lists_the_kubelets_errors(kubeadm: Path, tmp_path: Path) -> None:
    new = tmp_path / "new.yaml"
    new.write_text(
        CONFIG.read_text().replace("cpuManagerPolicy: static", "cpuManagerPolicy: fancy")
    )
    result = run_main(["node", "preflight", kubeadm, "--kubelet-config", new])
    assert result.exit_code == 1
    assert "Traceback" not in result.stderr + result.output


def test_unknown_field_in_new_configuration_is_one_line(kubeadm: Path, tmp_path: Path) -> None:
    new = tmp_path / "new.yaml"
    new.write_text("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
                   "cpuManagerPolicy: [1, 2]\n")  # fmt: skip
    result = run_main(["node", "preflight", kubeadm, "--kubelet-config", new])
    assert result.exit_code == 1
    assert "Traceback" not in result.stderr


def test_a_field_the_managers_never_read_still_stops_the_kubelet(
    kubeadm: Path, tmp_path: Path
) -> None:
    new = tmp_path / "new.yaml"
    new.write_text(CONFIG.read_text() + "shutdownGracePeriod: 500ms\n")
    args = ["node", "preflight", kubeadm, "--kubelet-config", new, "--kubelet-version", "1.32"]
    result = run_main([*args, "-o", "json"])
    assert result.exit_code == 1
    answer = json.loads(result.output)
    assert answer["refusal"] == (
        "invalid configuration: shutdownGracePeriod {500ms} must be either zero or otherwise "
        ">= 1 sec"
    )
    assert any("(stage: validates)" in note for note in answer["notes"])


def test_a_manager_refusal_is_reported_at_start(kubeadm: Path, tmp_path: Path) -> None:
    new = tmp_path / "new.yaml"
    new.write_text(
        CONFIG.read_text().replace("cpuManagerPolicy: static", "cpuManagerPolicy: Static")
    )
    result = run_main(["node", "preflight", kubeadm, "--kubelet-config", new, "-o", "json"])
    assert result.exit_code == 1
    answer = json.loads(result.output)
    assert answer["refusal"].startswith('unknown policy: "Static"')
    assert any("(stage: starts)" in note for note in answer["notes"])
