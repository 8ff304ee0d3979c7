"""`cpumanager run` under signals and with background processes (issue 11, items 10, 14).

SIGHUP, SIGUSR1 and the other fatal signals used to kill run without releasing (the next
run got the same CPU while the command still ran); `sh -c 'sleep 30 &'` left the
background process pinned after release; an invalid CPU showed only "Exception occurred in
preexec_fn".
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cpumanager.checkpoint.cpu.codec import decode
from tests.cli.test_agent import SRC, cpumanager, needs_two_cpus
from tests.cli.test_agent import host as machine_tree

pytestmark = needs_two_cpus


@pytest.fixture
def host(tmp_path: Path) -> Path:
    """The fake sysfs tree of this host's usable CPUs (see tests/cli/test_agent.py)."""
    return machine_tree.__wrapped__(tmp_path)  # type: ignore[attr-defined,no-any-return]


def start_run(state: Path, machine: Path, *command: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "cpumanager", "run", "--cpus", "1", "--state-dir", str(state),
         "--sysfs", str(machine), "--", *command],
        env={**os.environ, "PYTHONPATH": str(SRC)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip


def entries(state: Path) -> dict[str, object]:
    checkpoint = decode((state / "cpu_manager_state").read_bytes(), source="s")
    return dict(checkpoint.entries or {})


def wait_for_entry(state: Path, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (state / "cpu_manager_state").exists() and entries(state):
            return
        time.sleep(0.05)
    raise AssertionError("run never admitted its pod")


@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGUSR1, signal.SIGTERM])
def test_a_fatal_signal_reaches_the_command_and_run_releases(
    tmp_path: Path, host: Path, signum: int
) -> None:
    state = tmp_path / "s"
    run = start_run(state, host, "sleep", "30")
    wait_for_entry(state)
    time.sleep(0.3)  # the command is started after the checkpoint is written
    run.send_signal(signum)
    _out, err = run.communicate(timeout=30)
    assert run.returncode == 128 + signum, err
    assert entries(state) == {}


def test_background_processes_keep_the_cpus_until_they_end(tmp_path: Path, host: Path) -> None:
    state = tmp_path / "s"
    began = time.monotonic()
    run = start_run(state, host, "sh", "-c", "sleep 1.5 &")
    _out, err = run.communicate(timeout=30)
    assert run.returncode == 0, err
    assert time.monotonic() - began >= 1.4  # it waited for the background sleep
    assert "waiting for 1 process(es) it left in its process group" in err
    assert entries(state) == {}


def test_cpus_this_process_may_not_use_are_a_clear_error(tmp_path: Path) -> None:
    allowed = os.sched_getaffinity(0)
    machine = "2s4n16c2t"  # 128 CPUs: the chosen one is outside this host's set
    result = cpumanager("run", "--cpus", "1", "--state-dir", tmp_path / "s", "--machine",
                        machine, "--", "true")  # fmt: skip
    if len(allowed) >= 128:
        pytest.skip("this host may use every CPU of the shape")
    assert result.exit_code == 1
    assert "are not available to this process" in result.stderr
    assert "preexec_fn" not in result.stderr
    assert entries(tmp_path / "s") == {}


def test_sigkill_of_run_is_reported_by_the_next_run(tmp_path: Path, host: Path) -> None:
    state = tmp_path / "s"
    run = start_run(state, host, "sleep", "0.5")
    wait_for_entry(state)
    run.kill()
    run.communicate(timeout=30)
    killed = next(iter(entries(state)))
    result = cpumanager("run", "--cpus", "1", "--state-dir", state, "--sysfs", host, "--", "true")
    assert result.exit_code == 0, result.stderr
    assert f"reclaimed the CPUs of {killed}: that run ended without releasing them" in (
        result.stderr
    )
    assert json.dumps(entries(state)) == "{}"
