"""`cpumanager node whatif` as a shell sees it (the issue's done-when on the kubeadm node)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cpumanager.cli.options import DEGRADED_EXIT
from cpumanager.nodeview.snapshot import snapshot_to_json
from tests.cli.runner import run_main
from tests.nodeanswers.snapshots import fixture_snapshot, write

POD = """apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:
  containers:
  - name: app
    resources:
      limits: {{cpu: "{cpu}", memory: 1Gi}}
"""


@pytest.fixture
def kubeadm(tmp_path: Path) -> Path:
    path = tmp_path / "snap.json"
    path.write_bytes(snapshot_to_json(fixture_snapshot("kubeadm")))
    return path


def test_explains_an_admission_and_a_topology_affinity_error(kubeadm: Path, tmp_path: Path) -> None:
    # 4 CPUs fit on NUMA 1 (its 8 CPUs are free); 6 more do not fit on one NUMA node.
    big = write(tmp_path, "big.yaml", POD.format(name="big", cpu="4"))
    huge = write(tmp_path, "huge.yaml", POD.format(name="huge", cpu="6"))
    result = run_main(["node", "whatif", kubeadm, big, huge, "--explain"])
    assert result.exit_code == 1, result.stderr
    assert "default/big: admitted" in result.output
    assert "Container app gets exclusive CPUs 4-5,12-13 (NUMA {1})." in result.output
    assert "default/huge: rejected: TopologyAffinityError" in result.output
    assert all(len(line) <= 80 for line in result.output.splitlines())


def test_json_is_one_report_in_simulate_shape(kubeadm: Path, tmp_path: Path) -> None:
    big = write(tmp_path, "big.yaml", POD.format(name="big", cpu="4"))
    result = run_main(["node", "whatif", kubeadm, big, "-o", "json"])
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.output)
    assert [e["event"] for e in report["events"]] == ["start", "admit"]
    assert report["events"][1]["containers"]["app"]["cpus"] == "4-5,12-13"


def test_whatif_and_simulate_share_one_schema(kubeadm: Path, tmp_path: Path) -> None:
    """A script reads both alike: the same top-level keys, admit events with the same
    keys, and a rejection's class under error.type in both."""
    pods = [write(tmp_path, f"{n}.yaml", POD.format(name=n, cpu=c)) for n, c in
            (("big", "4"), ("huge", "6"))]  # fmt: skip
    whatif = json.loads(run_main(["node", "whatif", kubeadm, *pods, "-o", "json"]).output)
    example = Path(__file__).parents[2] / "examples/01-gpu-blocks-single-numa.yaml"
    simulated = json.loads(run_main(["simulate", example, "-o", "json"]).output)
    assert set(whatif) == set(simulated)
    assert set(whatif["final"]) == set(simulated["final"]) == {"defaultCpuSet", "entries"}
    admits = [e for e in whatif["events"] if e["event"] == "admit"]
    sim_admits = [e for e in simulated["events"] if e["event"] == "admit"]
    common = {"event", "pod", "uid", "admitted", "error", "containers", "defaultCpuSet"}
    assert all(common <= set(e) for e in admits + sim_admits)
    rejected = [e["error"] for e in admits + sim_admits if not e["admitted"]]
    assert {"type", "message"} == set(rejected[0]) == set(rejected[-1])
    assert rejected[0]["type"] == "TopologyAffinityError"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"{not json", "not JSON"),
        (b'{"schema": "other"}', "not a node snapshot"),
    ],
)
def test_bad_snapshot_is_one_line(tmp_path: Path, content: bytes, expected: str) -> None:
    snap = tmp_path / "bad.json"
    snap.write_bytes(content)
    big = write(tmp_path, "big.yaml", POD.format(name="big", cpu="4"))
    result = run_main(["node", "whatif", snap, big])
    assert result.exit_code == 1
    assert expected in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_absurd_quantity_is_one_line(kubeadm: Path, tmp_path: Path) -> None:
    bad = write(tmp_path, "bad.yaml", POD.format(name="bad", cpu="1e99999999"))
    result = run_main(["node", "whatif", kubeadm, bad])
    assert result.exit_code == 1
    assert len(result.stderr.strip().splitlines()) == 1


def test_corrupt_checkpoint_node_is_refused_as_the_kubelet_would(tmp_path: Path) -> None:
    snap = tmp_path / "snap.json"
    snap.write_bytes(snapshot_to_json(fixture_snapshot("corrupt-checkpoint")))
    big = write(tmp_path, "big.yaml", POD.format(name="big", cpu="4"))
    before = snap.read_bytes()
    result = run_main(["node", "whatif", snap, big])
    assert result.exit_code == DEGRADED_EXIT
    flat = " ".join(result.output.split())
    assert "checkpoint is corrupted" in flat
    assert "checksum mismatch" in flat
    assert "big: rejected: NodeNotReady" in flat
    assert "Traceback" not in result.stderr
    assert snap.read_bytes() == before
    as_json = run_main(["node", "whatif", snap, big, "-o", "json"])
    assert as_json.exit_code == DEGRADED_EXIT
    events = json.loads(as_json.output)["events"]
    assert [e["error"]["type"] for e in events] == ["NodeNotReady", "NodeNotReady"]


def test_resize_explains_infeasible_and_applied(kubeadm: Path) -> None:
    refused = run_main(["node", "whatif", kubeadm, "--resize", "prod/db-0", "postgres", "cpu=6"])
    assert refused.exit_code == 1, refused.stderr
    assert "prod/db-0: resize Infeasible: Resize is infeasible" in refused.output
    shared = ["--resize", "coredns-5d78c9869d-x7k2p", "coredns", "cpu=200m"]
    applied = run_main(["node", "whatif", kubeadm, *shared, "-o", "json"])
    assert applied.exit_code == 0, applied.stderr
    events = json.loads(applied.output)["events"]
    assert [e["event"] for e in events] == ["start", "resize"]
    assert any("only the quota changes" in note for note in events[1]["notes"])


def test_resize_with_a_bad_amount_is_a_usage_error(kubeadm: Path) -> None:
    result = run_main(["node", "whatif", kubeadm, "--resize", "prod/db-0", "postgres", "gpu=1"])
    assert result.exit_code == 2
    assert "cpu=N and/or memory=Q" in result.stderr
