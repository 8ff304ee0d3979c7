"""Issue 21 through the CLI: one bad snapshot, configuration or unit is one line and a
non-zero exit (or, in a fleet run, one unusable node), never an internal error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli.runner import Run, run_main
from tests.extender.nodes import make_snapshot, running_pod, snapshot_document
from tests.nodeanswers.snapshots import write

POD = """apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:
  containers:
  - name: app
    resources:
      limits: {{cpu: "{cpu}", memory: 1Gi}}
"""


def one_line(result: Run) -> None:
    assert result.exit_code not in (0, 3), result.stderr  # 3: internal error
    assert "internal error" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def wide_document() -> dict[str, Any]:
    return snapshot_document(
        make_snapshot(
            "wide",
            numa_per_socket=1024,
            cores_per_numa=1,
            threads=1,
            topology_policy="best-effort",
            config={"topologyManagerPolicyOptions": {"max-allowable-numa-nodes": "1024"}},
        )
    )


def write_doc(path: Path, document: dict[str, Any]) -> Path:
    path.write_text(json.dumps(document))
    return path


def test_1_whatif_on_a_1024_numa_node(tmp_path: Path) -> None:
    snap = write_doc(tmp_path / "wide.json", wide_document())
    pod = write(tmp_path, "p.yaml", POD.format(name="p", cpu="2"))
    result = run_main(["node", "whatif", snap, pod])
    assert result.exit_code == 0, result.stderr
    assert "admitted" in result.output


def test_2_whatif_refuses_a_machine_past_the_caps(tmp_path: Path) -> None:
    document = snapshot_document(make_snapshot("huge", numa_per_socket=2, cores_per_numa=16_385))
    snap = write_doc(tmp_path / "huge.json", document)
    pod = write(tmp_path, "p.yaml", POD.format(name="p", cpu="2"))
    result = run_main(["node", "whatif", snap, pod])
    one_line(result)
    assert "65,536" in result.stderr


def test_5_a_running_pod_with_a_huge_quantity(tmp_path: Path) -> None:
    document = snapshot_document(make_snapshot("n"))
    document["pods"] = [running_pod("r1", "1e9999", "1Gi", "n")]
    snap = write_doc(tmp_path / "n.json", document)
    pod = write(tmp_path, "p.yaml", POD.format(name="p", cpu="1"))
    for argv in (["node", "whatif", snap, pod], ["node", "show", snap]):
        result = run_main(argv)
        one_line(result)
        assert "too large" in result.stderr


def test_5_kube_reserved_with_a_huge_quantity(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
        "kubeReserved: {cpu: 1e9999}\n"
    )
    one_line(run_main(["node", "config", "--kubelet-config", config]))
    configz = tmp_path / "configz.json"
    configz.write_text(json.dumps({"kubeletconfig": {"kubeReserved": {"cpu": "1e9999"}}}))
    one_line(run_main(["node", "config", "--configz", configz]))


@pytest.mark.parametrize("statuses", [5, [1.5], ["x"], [{"name": 7}], {"name": "c0"}])
def test_6_container_statuses_of_the_wrong_type(tmp_path: Path, statuses: object) -> None:
    document = snapshot_document(make_snapshot("n"))
    pod = running_pod("r1", "1", "1Gi", "n")
    pod["status"]["containerStatuses"] = statuses
    document["pods"] = [pod]
    snap = write_doc(tmp_path / "n.json", document)
    result = run_main(["node", "show", snap])
    one_line(result)
    assert "containerStatuses" in result.stderr


@pytest.mark.parametrize("text", ["[" * 100_000, "[" * 3_000 + "]" * 3_000], ids=["open", "deep"])
def test_10_a_deep_configz(tmp_path: Path, text: str) -> None:
    configz = tmp_path / "configz.json"
    configz.write_text(text)
    one_line(run_main(["node", "config", "--configz", configz]))


def test_8_a_fleet_run_answers_every_good_snapshot(tmp_path: Path) -> None:
    snaps = tmp_path / "snaps"
    snaps.mkdir()
    write_doc(snaps / "a-good.json", snapshot_document(make_snapshot("good-a")))
    write_doc(snaps / "b-wide.json", wide_document())
    bad = snapshot_document(make_snapshot("bad-status"))
    pod = running_pod("r1", "1", "1Gi", "bad-status")
    pod["status"]["containerStatuses"] = [1.5]
    bad["pods"] = [pod]
    write_doc(snaps / "c-bad.json", bad)
    huge = snapshot_document(make_snapshot("huge-q"))
    huge["pods"] = [running_pod("r2", "1e9999", "1Gi", "huge-q")]
    write_doc(snaps / "d-huge.json", huge)
    write_doc(snaps / "e-good.json", snapshot_document(make_snapshot("good-e")))
    pod_file = write(tmp_path, "p.yaml", POD.format(name="p", cpu="1"))
    result = run_main(
        [
            "fleet",
            "capacity",
            pod_file,
            "--snapshots",
            snaps,
            "--workers",
            "1",
            "--max-copies",
            "3",
            "-o",
            "json",
        ]
    )
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.output)
    per_node = report["perNode"]
    assert per_node["good-a"] > 0
    assert per_node["good-e"] > 0
    assert per_node["wide"] > 0
    unusable = [g for g in report["limits"] if g["reason"] == "SnapshotUnusable"]
    assert [g["nodes"] for g in unusable] == [["c-bad.json", "d-huge.json"]]
