"""Daemon: periodic ticks on a fake clock, clean stop with restore; the state-dir lock."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from cpumanager.adapters.memory_store import InMemoryStore
from cpumanager.agent.daemon import Daemon, StateDirLock
from cpumanager.agent.loop import TickReport
from cpumanager.errors import StoreError
from tests.agent.test_loop import make, workload


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_ticks_every_period_until_max_and_restores() -> None:
    s = make(workload("a", "2", "pid://10"))
    clock = FakeClock()
    reports: list[TickReport] = []
    daemon = Daemon(loop=s.loop, period_s=1.0, clock=clock, on_report=reports.append)
    assert daemon.run(max_ticks=3, handle_signals=False) == 3
    assert [r.tick for r in reports] == [1, 2, 3]
    assert clock.now == pytest.approx(2.0)  # two full periods between three ticks
    assert max(clock.slept) <= 0.2  # short slices: a stop request is seen quickly
    assert s.runtime.restored == ["pid://10"]


def test_stop_from_a_tick_ends_the_loop() -> None:
    s = make(workload("a", "1", "pid://10"))
    daemon = Daemon(loop=s.loop, period_s=5.0, clock=FakeClock())
    daemon._on_report = lambda report: daemon.stop()
    assert daemon.run(handle_signals=False) == 1
    assert daemon.stopping


def test_sigterm_stops_gracefully_and_handlers_come_back() -> None:
    s = make(workload("a", "1", "pid://10"))
    daemon = Daemon(loop=s.loop, period_s=5.0, clock=FakeClock())
    daemon._on_report = lambda report: os.kill(os.getpid(), signal.SIGTERM)
    before = signal.getsignal(signal.SIGTERM)
    assert daemon.run() == 1
    assert signal.getsignal(signal.SIGTERM) is before
    assert s.runtime.restored == ["pid://10"]


def test_host_failure_in_a_tick_is_logged_and_the_daemon_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = InMemoryStore()
    s = make(workload("a", "1", "pid://10"), store=store)

    def break_the_disk(report: object) -> None:
        s.listed.clear()  # the next tick must save a release, and saving fails
        store.fail_saves = True

    daemon = Daemon(loop=s.loop, period_s=1.0, clock=FakeClock(), on_report=break_the_disk)
    with caplog.at_level("ERROR", logger="cpumanager.agent"):
        assert daemon.run(max_ticks=3, handle_signals=False) == 3
    failures = [r.getMessage() for r in caplog.records if "retrying next period" in r.getMessage()]
    assert len(failures) == 2
    assert "injected failure" in failures[0]


def test_period_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        Daemon(loop=make().loop, period_s=0)


# --- the lock --------------------------------------------------------------------------------

HOLD = (
    "import fcntl, sys, time\n"
    "f = open(sys.argv[1], 'a+')\n"
    "fcntl.flock(f, fcntl.LOCK_EX)\n"
    "import os; f.write(f'{os.getpid()} run\\n'); f.flush()\n"
    "print('held', flush=True)\n"
    "sys.stdin.read()\n"
)


def test_lock_is_exclusive_across_processes_and_names_the_holder(tmp_path: Path) -> None:
    lock_file = tmp_path / "state" / "lock"
    lock_file.parent.mkdir(mode=0o700)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(lock_file)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        clock = FakeClock()
        with pytest.raises(StoreError, match=rf"in use by pid {holder.pid}.*another --state-dir"):
            StateDirLock(tmp_path / "state", clock=clock).acquire(timeout_s=0.5)
        assert clock.now >= 0.5  # it waited for the timeout
    finally:
        holder.communicate("")
    with StateDirLock(tmp_path / "state") as lock:
        assert lock.held
        assert lock_file.read_text().strip() == f"{os.getpid()} agent"
    assert not lock.held


def test_lock_creates_the_state_dir_and_refuses_a_file(tmp_path: Path) -> None:
    StateDirLock(tmp_path / "a" / "b").acquire().release()
    assert (tmp_path / "a" / "b" / "lock").is_file()
    (tmp_path / "file").write_text("")
    with pytest.raises(StoreError, match="is not a directory"):
        StateDirLock(tmp_path / "file").acquire()
