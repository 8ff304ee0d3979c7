"""``node snapshot`` records the node's kubelet release; the node commands default to it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.runner import run_main
from tests.cli.test_node_snapshot import KUBEADM, _args


def _node(version: object, name: str = "kubeadm-node-1") -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"nodeInfo": {"kubeletVersion": version}},
    }


def _take(tmp_path: Path, *extra: object) -> dict[str, object]:
    out = tmp_path / "snap.json"
    result = run_main(_args(KUBEADM, "--pods", KUBEADM / "pods.json", *extra, "--output-file", out))
    assert result.exit_code == 0, result.stderr
    tree: dict[str, object] = json.loads(out.read_text())
    return tree


def test_without_a_source_the_version_is_null(tmp_path: Path) -> None:
    assert _take(tmp_path)["kubeletVersion"] is None


def test_from_the_option(tmp_path: Path) -> None:
    assert _take(tmp_path, "--kubelet-version", "v1.33.2")["kubeletVersion"] == "v1.33.2"


def test_from_a_node_object(tmp_path: Path) -> None:
    node = tmp_path / "node.json"
    node.write_text(json.dumps(_node("v1.34.1")))
    assert _take(tmp_path, "--node-object", node)["kubeletVersion"] == "v1.34.1"


def test_from_a_node_in_the_pod_list(tmp_path: Path) -> None:
    pods = json.loads((KUBEADM / "pods.json").read_text())
    pods["items"].extend([_node("v1.32.0", "other"), _node("v1.35.0")])
    listed = tmp_path / "pods.json"
    listed.write_text(json.dumps(pods))
    out = tmp_path / "snap.json"
    result = run_main(_args(KUBEADM, "--pods", listed, "--output-file", out))
    assert result.exit_code == 0, result.stderr
    tree = json.loads(out.read_text())
    assert tree["kubeletVersion"] == "v1.35.0"
    assert len(tree["pods"]) == 7


@pytest.mark.parametrize(
    ("node", "expected"),
    [
        (_node("banana"), "is not a version"),
        (_node("v1.33.0", "other"), "is not the snapshot's node"),
        ({"kind": "Pod"}, "no Node object"),
    ],
)
def test_a_bad_node_object_is_one_line(tmp_path: Path, node: object, expected: str) -> None:
    path = tmp_path / "node.json"
    path.write_text(json.dumps(node))
    out = tmp_path / "snap.json"
    result = run_main(_args(KUBEADM, "--node-object", path, "--output-file", out))
    assert result.exit_code == 1
    assert expected in result.stderr
    assert result.stderr.count("\n") == 1
    assert not out.exists()


def test_the_recorded_version_is_the_node_commands_default(tmp_path: Path) -> None:
    _take(tmp_path, "--kubelet-version", "1.33")
    snap = tmp_path / "snap.json"
    resize = ["--resize", "prod/db-0", "postgres", "memory=16Gi"]
    recorded = run_main(["node", "whatif", snap, *resize])
    assert recorded.exit_code == 1
    assert "kubelet 1.33" in recorded.output
    assert "resize Infeasible" in recorded.output
    given = run_main(["node", "whatif", snap, *resize, "--kubelet-version", "1.37"])
    assert given.exit_code == 0, given.output + given.stderr


def test_an_older_snapshot_without_the_key_still_loads(tmp_path: Path) -> None:
    tree = _take(tmp_path, "--kubelet-version", "1.33")
    del tree["kubeletVersion"]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(tree))
    result = run_main(["node", "show", old])
    assert result.exit_code == 0, result.stderr


def test_a_bad_recorded_version_is_one_line(tmp_path: Path) -> None:
    tree = _take(tmp_path)
    tree["kubeletVersion"] = "1.99"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(tree))
    result = run_main(["node", "show", bad])
    assert result.exit_code != 0
    assert "snapshot field kubeletVersion" in result.stderr
