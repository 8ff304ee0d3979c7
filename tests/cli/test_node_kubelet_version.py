"""``--kubelet-version`` on node whatif, preflight, show and nrt: the release's rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from cpumanager.nodeview.snapshot import snapshot_to_json
from tests.cli.runner import run_main
from tests.nodeanswers.snapshots import fixture_snapshot, write

CONFIG = """apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cpuManagerPolicy: static
reservedSystemCPUs: "0,8"
cpuManagerPolicyOptions: {full-pcpus-only: "true"}
"""


@pytest.fixture
def kubeadm(tmp_path: Path) -> Path:
    path = tmp_path / "snap.json"
    path.write_bytes(snapshot_to_json(fixture_snapshot("kubeadm")))
    return path


def test_whatif_resize_follows_the_release(kubeadm: Path) -> None:
    resize = ["--resize", "prod/db-0", "postgres", "memory=16Gi"]
    newest = run_main(["node", "whatif", kubeadm, *resize])
    assert newest.exit_code == 0, newest.stderr
    assert "kubelet 1.37" in newest.output
    old = run_main(["node", "whatif", kubeadm, *resize, "--kubelet-version", "1.33"])
    assert old.exit_code == 1, old.stderr
    assert "resize Infeasible" in old.output


@pytest.mark.parametrize("command", ["show", "nrt", "whatif"])
def test_a_release_that_would_not_start_is_one_line(kubeadm: Path, command: str) -> None:
    extra = ["--resize", "prod/db-0", "postgres", "cpu=4"] if command == "whatif" else []
    result = run_main(["node", command, kubeadm, *extra, "--kubelet-version", "1.20"])
    assert result.exit_code != 0
    assert "kubelet 1.20 would not start on this node" in result.stderr
    assert "Traceback" not in result.stderr
    assert run_main(["node", command, kubeadm, *extra, "--kubelet-version", "1.34"]).exit_code == 0


def test_preflight_checks_the_new_configuration_under_the_release(
    kubeadm: Path, tmp_path: Path
) -> None:
    config = write(tmp_path, "config.yaml", CONFIG)
    old = run_main(["node", "preflight", kubeadm, "--kubelet-config", config,
                    "--kubelet-version", "1.21"])  # fmt: skip
    assert old.exit_code == 1
    assert "full-pcpus-only does not exist in kubelet 1.21" in " ".join(old.output.split())
    new = run_main(["node", "preflight", kubeadm, "--kubelet-config", config])
    assert new.exit_code == 0, new.output + new.stderr


def test_a_version_outside_the_table_is_one_line(kubeadm: Path) -> None:
    result = run_main(["node", "show", kubeadm, "--kubelet-version", "1.17"])
    assert result.exit_code != 0
    assert "outside the releases modelled" in result.stderr
