"""`cpumanager node nrt` as a shell sees it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
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


def test_fingerprint_method_option(tmp_path: Path) -> None:
    snap = _snap(tmp_path, "kubeadm")
    result = run_main(
        ["node", "nrt", snap, "-o", "json", "--fingerprint-method", "with-exclusive-resources"]
    )
    attributes = {a["name"]: a["value"] for a in json.loads(result.output)["attributes"]}
    assert attributes["nodeTopologyPodsFingerprintMethod"] == "with-exclusive-resources"


def test_apply_creates_the_object_named_after_the_node(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import cpumanager.adapters.nrt_apply as nrt_apply
    from tests.adapters.nrt_fakes import FakeObjects

    api = FakeObjects()
    monkeypatch.setattr(nrt_apply, "api_clients", lambda kubeconfig: (api, None))
    snap = _snap(tmp_path, "kubeadm")
    result = run_main(["node", "nrt", snap, "--apply"], env={"NODE_NAME": "worker-7"})
    assert result.exit_code == 0, result.stderr
    assert result.stderr.strip() == "cpumanager: nrt: created worker-7"
    assert api.objects["worker-7"]["kind"] == "NodeResourceTopology"
    again = run_main(["node", "nrt", snap, "--apply", "--node-name", "worker-7"])
    assert again.stderr.strip() == "cpumanager: nrt: unchanged worker-7"


def test_apply_failure_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import cpumanager.adapters.nrt_apply as nrt_apply
    from tests.adapters.nrt_fakes import ApiError, FakeObjects

    api = FakeObjects()
    api.fail_next = ApiError(403, "Forbidden")
    monkeypatch.setattr(nrt_apply, "api_clients", lambda kubeconfig: (api, None))
    result = run_main(["node", "nrt", _snap(tmp_path, "kubeadm"), "--apply"])
    assert result.exit_code == 3
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Forbidden" in result.stderr


def test_every_and_pods_from_apiserver_need_live(tmp_path: Path) -> None:
    snap = _snap(tmp_path, "kubeadm")
    result = run_main(["node", "nrt", snap, "--apply", "--every", "10s"])
    assert result.exit_code != 0
    assert "--every needs --apply and --live" in result.stderr
    result = run_main(["node", "nrt", snap, "--pods-from-apiserver", "--node-name", "n"])
    assert "--pods-from-apiserver needs --live" in result.stderr


def test_every_keeps_the_object_and_reports_changes_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import time
    from types import SimpleNamespace

    import cpumanager.adapters.nrt_apply as nrt_apply
    from tests.adapters.nrt_fakes import FakeObjects
    from tests.nodeview.fixture_nodes import NODES_DIR

    api = FakeObjects()
    monkeypatch.setattr(nrt_apply, "api_clients", lambda kubeconfig: (api, None))
    rounds = []

    def sleep(seconds: float) -> None:
        rounds.append(seconds)
        if len(rounds) == 3:
            raise KeyboardInterrupt

    clock = SimpleNamespace(monotonic=time.monotonic, sleep=sleep)
    monkeypatch.setattr("cpumanager.cli.node_nrt.time", clock)
    node = NODES_DIR / "kubeadm"
    result = run_main(
        [
            "node", "nrt", "--live", "--apply", "--every", "5s", "--node-name", "worker-1",
            "--root", node, "--kubelet-root", node / "var/lib/kubelet",
            "--pods", node / "pods.json",
        ]
    )  # fmt: skip
    assert result.exit_code == 130
    # Three rounds: the object is created, then found unchanged (said once), then the
    # interrupt ends the loop.
    lines = [line for line in result.stderr.splitlines() if line]
    assert lines == [
        "cpumanager: nrt: created worker-1",
        "cpumanager: nrt: unchanged worker-1",
        "cpumanager: aborted",
    ]
    assert all(0 <= s <= 5 for s in rounds)
    assert [c[0] for c in api.calls].count("create") == 1
