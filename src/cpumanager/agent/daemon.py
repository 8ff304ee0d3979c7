"""The agent's process around the loop: one owner per state directory, a period, a clean stop.

* :class:`StateDirLock` takes ``fcntl.flock`` on ``<state-dir>/lock``. An agent holds it for
  its whole life; ``cpumanager run`` holds it only while it admits or releases, so several
  runs may pin commands side by side but never write the checkpoint at the same time, and a
  run never races an agent. The lock file holds the owner's pid, which error messages quote.
  The kernel drops the lock when the process dies, so a crash never leaves it stuck.
* :class:`Daemon` ticks every ``period`` seconds on a :class:`~cpumanager.ports.Clock`
  (sleeping in short slices so a stop request is seen quickly), logs and keeps going when a
  tick hits a host failure, and on SIGTERM / SIGINT stops after the current tick and puts
  back every process's or cgroup's original CPUs.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import IO, Any

from cpumanager.agent.loop import AgentLoop, TickReport
from cpumanager.errors import CpuManagerError, HostError, StoreError
from cpumanager.ports import Clock

__all__ = ["LOCK_NAME", "Daemon", "StateDirLock", "SystemClock"]

LOCK_NAME = "lock"
_LOG = logging.getLogger("cpumanager.agent")
_SLICE_S = 0.2


class SystemClock:
    """The Clock port over ``time``."""

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(max(0.0, seconds))


class StateDirLock:
    """An exclusive ``flock`` on ``<directory>/lock`` (created, with its parents, if needed)."""

    def __init__(
        self, directory: Path, *, timeout_s: float = 0.0, clock: Clock | None = None
    ) -> None:
        self.directory = directory
        self.path = directory / LOCK_NAME
        self.timeout_s = timeout_s
        self._clock = clock or SystemClock()
        self._handle: IO[str] | None = None

    def _holder(self) -> str:
        try:
            text = self.path.read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError):
            return "another process"
        return f"pid {text}" if text.isdigit() else "another process"

    def acquire(self, *, timeout_s: float | None = None) -> StateDirLock:
        """Take the lock, waiting up to ``timeout_s``; StoreError when it stays taken."""
        if timeout_s is None:
            timeout_s = self.timeout_s
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            handle = self.path.open("a+", encoding="ascii")
        except OSError as err:
            msg = (
                f"cannot open the lock file {str(self.path)!r}: {err.strerror or err}; "
                "check --state-dir (it must be a writable directory)"
            )
            raise StoreError(msg) from err
        deadline = self._clock.monotonic() + timeout_s
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as err:
                if err.errno not in (errno.EAGAIN, errno.EACCES):
                    handle.close()
                    msg = f"cannot lock {str(self.path)!r}: {err.strerror or err}"
                    raise StoreError(msg) from err
                if self._clock.monotonic() >= deadline:
                    handle.close()
                    msg = (
                        f"state directory {str(self.directory)!r} is in use by "
                        f"{self._holder()} (an agent or a run); stop it, or give this one "
                        "another --state-dir"
                    )
                    raise StoreError(msg) from err
                self._clock.sleep(0.05)
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        self._handle = handle
        return self

    def release(self) -> None:
        """Drop the lock (the file stays: removing it would race the next owner)."""
        if self._handle is None:
            return
        with contextlib.suppress(OSError):
            fcntl.flock(self._handle.fileno(), fcntl.LOCK_UN)
        self._handle.close()
        self._handle = None

    @property
    def held(self) -> bool:
        return self._handle is not None

    def __enter__(self) -> StateDirLock:
        if self._handle is None:
            self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


class Daemon:
    """Runs the loop every ``period_s`` until stopped, then restores what it changed."""

    def __init__(
        self,
        *,
        loop: AgentLoop,
        period_s: float,
        clock: Clock | None = None,
        on_report: Callable[[TickReport], None] | None = None,
        logger: logging.Logger = _LOG,
    ) -> None:
        if period_s <= 0:
            msg = f"the period must be positive, got {period_s}s"
            raise ValueError(msg)
        self.loop = loop
        self.period_s = period_s
        self._clock = clock or SystemClock()
        self._on_report = on_report
        self._log = logger
        self._stopping = False
        self.ticks = 0

    def stop(self, *_args: object) -> None:
        """Ask the daemon to stop after the current tick (safe from a signal handler)."""
        self._stopping = True

    @property
    def stopping(self) -> bool:
        return self._stopping

    def _signal(self, signum: int, _frame: FrameType | None) -> None:
        self._log.info("received %s; stopping", signal.Signals(signum).name)
        self.stop()

    def run(self, *, max_ticks: int | None = None, handle_signals: bool = True) -> int:
        """Tick until stopped (or ``max_ticks``); restore originals; return the tick count."""
        previous: dict[signal.Signals, Any] = {}
        if handle_signals:
            for signum in (signal.SIGTERM, signal.SIGINT):
                previous[signum] = signal.signal(signum, self._signal)
        try:
            if not self.loop.started:
                self.loop.start()
            while not self._stopping:
                began = self._clock.monotonic()
                self._tick()
                if max_ticks is not None and self.ticks >= max_ticks:
                    break
                self._sleep_until(began + self.period_s)
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
            self._restore()
        return self.ticks

    def _tick(self) -> None:
        self.ticks += 1
        try:
            report = self.loop.tick()
        except HostError as err:
            self._log.error("tick %d failed: %s; retrying next period", self.ticks, err.message)
            return
        if self._on_report is not None:
            self._on_report(report)

    def _sleep_until(self, deadline: float) -> None:
        while not self._stopping:
            left = deadline - self._clock.monotonic()
            if left <= 0:
                return
            self._clock.sleep(min(left, _SLICE_S))

    def _restore(self) -> None:
        try:
            self.loop.runtime.restore()
        except CpuManagerError as err:
            self._log.error("%s", err.message)
        else:
            self._log.info("restored the original CPUs of every pinned workload")
