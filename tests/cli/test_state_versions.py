"""`state verify` names the format and the releases that read it; `--kubelet-version`."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.runner import Run, run_main

GOLDEN = Path(__file__).parents[1] / "checkpoint" / "golden"


def run(*args: str | Path) -> Run:
    return run_main(["state", *args])


def test_verify_a_v3_file_by_release() -> None:
    path = GOLDEN / "newer" / "memory-v2-kubelet-test.json"
    newest = run("verify", path)
    assert newest.exit_code == 0, newest.output
    assert "memory V2 (podEntries" in newest.output
    old = run("verify", path, "--kubelet-version", "1.35", "-o", "json")
    report = json.loads(old.output)
    assert old.exit_code == 1
    assert report["outcome"] == "refuses it: checkpoint is corrupted"
    assert report["read_by_with_PodLevelResourceManagers"] == "1.36-1.37"


def test_verify_names_readers_of_a_v2_file() -> None:
    result = run("verify", GOLDEN / "v2-one-pod-two-containers.json", "-o", "json")
    report = json.loads(result.output)
    assert report["format_id"] == "cpu-v2"
    assert report["read_by"] == "1.18-1.37"


def test_bad_kubelet_version_is_one_line() -> None:
    result = run("verify", GOLDEN / "v2-one-pod-two-containers.json", "--kubelet-version", "2.x")
    assert result.exit_code != 0
    assert "not a version" in result.stderr
    assert "Traceback" not in result.stderr
