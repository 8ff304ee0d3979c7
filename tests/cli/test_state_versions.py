"""`state verify` names the format and the releases that read it; `--kubelet-version`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.runner import Run, run_main

GOLDEN = Path(__file__).parents[1] / "checkpoint" / "golden"


def run(*args: str | Path) -> Run:
    return run_main(["state", *args])


def test_verify_a_v3_file_by_release() -> None:
    path = GOLDEN / "newer" / "memory-v2-kubelet-test.json"
    newest = run("verify", path, "--feature-gates", "PodLevelResourceManagers=true")
    assert newest.exit_code == 0, newest.output
    assert "memory V2 (podEntries" in newest.output
    # gate off (1.37's default): the pod-level entries are read but not restored
    gate_off = run("verify", path)
    assert gate_off.exit_code == 1
    assert "dropping 1 pod-level entries" in gate_off.output
    old = run("verify", path, "--kubelet-version", "1.35", "-o", "json")
    report = json.loads(old.output)
    assert old.exit_code == 1
    assert report["outcome"] == "refuses it: checkpoint is corrupted"
    assert report["readByWithPodLevelResourceManagers"] == "1.36-1.37"


def test_verify_names_readers_of_a_v2_file() -> None:
    result = run("verify", GOLDEN / "v2-one-pod-two-containers.json", "-o", "json")
    report = json.loads(result.output)
    assert report["formatId"] == "cpu-v2"
    assert report["readBy"] == "1.18-1.37"


def test_bad_kubelet_version_is_one_line() -> None:
    result = run("verify", GOLDEN / "v2-one-pod-two-containers.json", "--kubelet-version", "2.x")
    assert result.exit_code != 0
    assert "not a version" in result.stderr
    assert "Traceback" not in result.stderr


def test_migrate_to_an_older_kubelet_names_the_pods_to_drain() -> None:
    path = GOLDEN / "newer" / "cpu-v3-kubelet-test.json"
    result = run("migrate", path, "--to-kubelet", "1.34", "-o", "json")
    report = json.loads(result.output)
    assert result.exit_code == 1
    assert report["now"] == "refuses it: checkpoint is corrupted"
    assert report["verdict"] == "drain"
    assert report["drain"] == ["pod2"]


def test_migrate_converts_for_a_gated_136(tmp_path: Path) -> None:
    from cpumanager.checkpoint import compat, newer

    source = tmp_path / "cpu_manager_state"
    source.write_bytes(newer.encode_cpu_v4("static", "0,3-7", {"p": {"c": "1-2"}}, {"p": "1-2"}))
    out = tmp_path / "out"
    args = ["--to-kubelet", "1.36", "--pod-level-resource-managers", "--output-file", out]
    result = run("migrate", source, *args)
    assert result.exit_code == 0, result.output
    assert "convert to V3" in result.output
    assert compat.read_as(out.read_bytes(), (1, 36), gate=True).format == "cpu-v3"


def test_migrate_a_v2_file_needs_nothing(tmp_path: Path) -> None:
    out = tmp_path / "never"
    path = GOLDEN / "v2-one-pod-two-containers.json"
    result = run("migrate", path, "--to-kubelet", "1.37", "--output-file", out)
    assert result.exit_code == 0
    assert "nothing to do" in result.output
    assert not out.exists()


def test_verify_takes_the_kubelets_feature_gates(tmp_path: Path) -> None:
    path = GOLDEN / "newer" / "memory-v2-kubelet-test.json"
    on = run("verify", path, "--feature-gates", "PodLevelResourceManagers=true", "-o", "json")
    assert on.exit_code == 0, on.output
    off = run("verify", path, "--feature-gates", "PodLevelResourceManagers=false", "-o", "json")
    assert off.exit_code == 1
    assert "dropping 1 pod-level entries" in json.loads(off.output)["outcome"]


@pytest.mark.parametrize(
    ("gates", "release", "message"),
    [
        ("PodLevelResourceManagers=maybe", "1.37",
         'invalid value of PodLevelResourceManagers=maybe, err: strconv.ParseBool: parsing '
         '"maybe": invalid syntax'),
        ("NoSuchGate=true", "1.37", "unrecognized feature gate: NoSuchGate"),
        ("PodLevelResourceManagers=true", "1.35",
         "unrecognized feature gate: PodLevelResourceManagers"),
        ("CPUManager=false", "1.30",
         "cannot set feature gate CPUManager to false, feature is locked to true"),
        ("PodLevelResourceManagers", "1.37", "missing bool value for PodLevelResourceManagers"),
    ],
)  # fmt: skip
def test_bad_feature_gates_are_one_line(gates: str, release: str, message: str) -> None:
    path = GOLDEN / "v2-one-pod-two-containers.json"
    result = run("verify", path, "--feature-gates", gates, "--kubelet-version", release)
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_verify_checks_the_policy_of_a_newer_file(tmp_path: Path) -> None:
    from cpumanager.checkpoint import newer

    path = tmp_path / "cpu_manager_state"
    path.write_bytes(newer.encode_cpu_v4("static", "0-7", {}, {}))
    assert run("verify", path, "--policy", "static").exit_code == 0
    refused = run("verify", path, "--policy", "none", "-o", "json")
    assert refused.exit_code == 1
    assert json.loads(refused.output)["outcome"] == (
        'refuses it: configured policy "none" differs from state checkpoint policy "static"'
    )


def test_verify_a_gate_written_file_without_pod_entries(tmp_path: Path) -> None:
    from cpumanager.checkpoint import newer

    path = tmp_path / "cpu_manager_state"
    path.write_bytes(newer.encode_cpu_v3("static", "0-7", {}, {}))
    result = run("verify", path, "-o", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["formatId"] == "cpu-v3"
    assert run("verify", path, "--kubelet-version", "1.35").exit_code == 1


def test_verify_a_memory_file_with_checksum_zero_per_release(tmp_path: Path) -> None:
    doc = json.loads((GOLDEN / "memory" / "kubelet-test-restore-valid.json").read_text())
    doc["checksum"] = 0
    path = tmp_path / "memory_manager_state"
    path.write_text(json.dumps(doc))
    old = run("verify", path, "--kubelet-version", "1.32", "-o", "json")
    assert old.exit_code == 1
    assert "kubelet 1.32 refuses it: checkpoint is corrupted" in json.loads(old.output)["reasons"]


def test_migrate_to_a_release_takes_its_feature_gates(tmp_path: Path) -> None:
    from cpumanager.checkpoint import newer

    source = tmp_path / "cpu_manager_state"
    source.write_bytes(newer.encode_cpu_v4("static", "0,3-7", {"p": {"c": "1-2"}}, {"p": "1-2"}))
    gated = ["--feature-gates", "PodLevelResourceManagers=true", "-o", "json"]
    on = run("migrate", source, "--to-kubelet", "1.36", *gated)
    assert json.loads(on.output)["PodLevelResourceManagers"] is True
    off = run("migrate", source, "--to-kubelet", "1.36", "-o", "json")
    assert json.loads(off.output)["PodLevelResourceManagers"] is False
    assert json.loads(off.output)["verdict"] == "drain"
