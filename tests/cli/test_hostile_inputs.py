"""Hostile files and streams through the real CLI (issue 11, items 2, 12, 13, 14).

Each case used to end in a traceback, exit 3 (internal error) or an unbounded read.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from cpumanager.checkpoint.cpu.codec import encode_v2
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.state import StateSnapshot
from tests.cli.test_agent import cpumanager
from tests.cli.test_state import assert_one_line_error

POISON = "cpumanager-run.\u00b2.1"  # '²'.isdigit() is true, int('²') raises ValueError


def poisoned_state(directory: Path) -> Path:
    directory.mkdir(mode=0o700)
    snapshot = StateSnapshot(
        "static", CPUSet.parse("0-1,3-11"), {POISON: {"main": CPUSet.parse("2")}}
    )
    (directory / "cpu_manager_state").write_bytes(encode_v2(snapshot))
    return directory


def test_a_poisoned_uid_in_the_checkpoint_breaks_neither_run_nor_agent(tmp_path: Path) -> None:
    state = poisoned_state(tmp_path / "s")
    machine = ("--machine", "dual-socket-ht", "--state-dir", state)
    dry = cpumanager("run", "--cpus", "1", "--dry-run", *machine)
    assert dry.exit_code == 0, dry.stderr
    workloads = tmp_path / "w"
    workloads.mkdir()
    agent = cpumanager("agent", "--workloads", workloads, *machine, "--once")
    assert agent.exit_code == 0, agent.stderr
    released = json.loads(agent.output)["released"]
    assert [(e["uid"], e["cpus"], e["reason"]) for e in released] == [(POISON, "2", "stale")]


def test_verify_flags_uids_cpumanager_never_writes(tmp_path: Path) -> None:
    state = poisoned_state(tmp_path / "s")
    result = cpumanager("state", "verify", state / "cpu_manager_state", "-o", "json")
    assert result.exit_code == 0, result.stderr  # the kubelet would restore it
    notes = json.loads(result.output)["notes"]
    assert len(notes) == 1
    assert "an agent releases it as stale" in notes[0]


def test_a_checksum_of_100000_digits_is_a_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "cpu_manager_state"
    digits = "9" * 100_000
    path.write_text(f'{{"policyName":"none","defaultCpuSet":"","checksum":{digits}}}')
    result = cpumanager("state", "verify", path)
    assert result.exit_code == 1
    assert "Traceback" not in result.stderr
    assert "internal error" not in result.output + result.stderr
    assert "(100000 characters)" in result.output
    assert max(map(len, result.output.splitlines())) < 600


def test_a_huge_shape_is_refused_before_it_is_built() -> None:
    began = time.monotonic()
    result = cpumanager("topology", "--machine", "1s1n1000000c1t")
    assert_one_line_error(result, 1)
    assert "more than 65536 CPUs" in result.stderr
    assert time.monotonic() - began < 30  # it was OOM-killed at 24 GB


def test_non_utf8_on_compute_batch_stdin_is_a_per_line_error() -> None:
    import subprocess
    import sys

    good = json.dumps({"machine": "dual-socket-ht", "available": "0-11", "count": 2})
    done = subprocess.run(
        [sys.executable, "-m", "cpumanager", "compute", "take", "--batch"],
        input=good.encode() + b"\n" + b'{"machine": "\xff\xfe"}\n' + good.encode() + b"\n",
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")},
        timeout=60,
        check=False,
    )
    answers = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert done.returncode == 1
    assert len(answers) == 3
    assert "cpus" in answers[0]
    assert "cpus" in answers[2]
    assert "not UTF-8" in answers[1]["error"]["message"]
    assert b"Traceback" not in done.stderr


def test_machine_and_kubelet_config_from_a_fifo_are_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "m.yaml"
    os.mkfifo(fifo)
    result = cpumanager("topology", "--machine", fifo, timeout=30)
    assert_one_line_error(result, 1)
    assert "not a regular file" in result.stderr
    config = tmp_path / "k.yaml"
    os.mkfifo(config)
    args = ("--kubelet-config", config, "--machine", "dual-socket-ht")
    result = cpumanager("run", "--cpus", "1", "--dry-run", "--state-dir", tmp_path / "s", *args)
    assert_one_line_error(result, 1)
    assert "not a regular file" in result.stderr


def test_an_empty_state_dir_is_refused(tmp_path: Path) -> None:
    result = cpumanager("run", "--cpus", "1", "--state-dir", "", "--", "true")
    assert result.exit_code == 2
    assert "an empty value is refused" in result.stderr
