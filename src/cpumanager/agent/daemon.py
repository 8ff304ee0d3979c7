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
import re
import signal
import stat
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

from cpumanager.agent.loop import AgentLoop, TickReport
from cpumanager.errors import CpuManagerError, HostError, StoreError
from cpumanager.ports import Clock

__all__ = ["LOCK_NAME", "Daemon", "StateDirLock", "SystemClock", "state_dir_problem"]

LOCK_NAME = "lock"
_LOG = logging.getLogger("cpumanager.agent")
_SLICE_S = 0.2
_PID = re.compile(r"[0-9]{1,10}")
_ROLES = ("agent", "run")


class SystemClock:
    """The Clock port over ``time``."""

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(max(0.0, seconds))


class StateDirLock:
    """An exclusive ``flock`` on ``<directory>/lock`` (the directory is created if needed).

    The directory holds the checkpoint every pin is derived from, so it is the caller's
    alone: created 0700 (whatever the umask), and an existing one must be a directory owned
    by the caller with no permissions for group or others, or it is refused with the reason.
    The lock file is opened with ``O_NOFOLLOW`` (a planted symlink is never followed, nor its
    target truncated), must be a regular file owned by the caller, and is kept 0600, so no
    other user can take the lock and shut every run and agent out.

    The file holds ``<pid> <role>``; a ``run`` that finds the lock held by an ``agent`` fails
    at once instead of waiting (an agent holds it for its whole life).
    """

    def __init__(
        self,
        directory: Path,
        *,
        timeout_s: float = 0.0,
        clock: Clock | None = None,
        role: str = "agent",
    ) -> None:
        self.directory = directory
        self.path = directory / LOCK_NAME
        self.timeout_s = timeout_s
        self.role = role
        self._clock = clock or SystemClock()
        self._fd: int | None = None

    def _holder(self) -> tuple[str, str]:
        """(who, role) from the lock file; ``who`` names a live pid or 'another process'."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
            try:
                text = os.read(fd, 64).decode("ascii", "replace")
            finally:
                os.close(fd)
        except OSError:
            return "another process", ""
        words = text.split()
        pid = words[0] if words and _PID.fullmatch(words[0]) else ""
        role = words[1] if len(words) > 1 and words[1] in _ROLES else ""
        if pid and _pid_alive(int(pid)):
            return f"pid {pid}", role
        return "another process", role

    def _prepare_directory(self) -> None:
        directory = self.directory
        try:
            if not directory.exists():
                directory.parent.mkdir(parents=True, exist_ok=True)
                with contextlib.suppress(FileExistsError):
                    os.mkdir(directory, 0o700)
                    os.chmod(directory, 0o700)  # mkdir's mode is filtered by the umask
            info = os.stat(directory)
        except OSError as err:
            msg = (
                f"cannot create the state directory {str(directory)!r}: "
                f"{err.strerror or err}; check --state-dir (it must be a writable directory)"
            )
            raise StoreError(msg) from err
        problem = state_dir_problem(info, uid=os.geteuid())
        if problem is not None:
            msg = f"state directory {str(directory)!r} {problem}"
            raise StoreError(msg)

    def _open(self) -> int:
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
        try:
            fd = os.open(self.path, flags, 0o600)
        except OSError as err:
            why = err.strerror or str(err)
            if err.errno == errno.ELOOP:
                why = "it is a symbolic link (refused); remove it"
            msg = (
                f"cannot open the lock file {str(self.path)!r}: {why}; "
                "check --state-dir (it must be a writable directory)"
            )
            raise StoreError(msg) from err
        try:
            self._verify(fd)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _verify(self, fd: int) -> None:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
            msg = (
                f"lock file {str(self.path)!r} is not a regular file owned by uid "
                f"{os.geteuid()}; remove it (the directory is yours)"
            )
            raise StoreError(msg)
        if stat.S_IMODE(info.st_mode) != 0o600:
            os.fchmod(fd, 0o600)

    def acquire(self, *, timeout_s: float | None = None) -> StateDirLock:
        """Take the lock, waiting up to ``timeout_s``; StoreError when it stays taken."""
        if timeout_s is None:
            timeout_s = self.timeout_s
        self._prepare_directory()
        fd = self._open()
        deadline = self._clock.monotonic() + timeout_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as err:
                if err.errno not in (errno.EAGAIN, errno.EACCES):
                    os.close(fd)
                    msg = f"cannot lock {str(self.path)!r}: {err.strerror or err}"
                    raise StoreError(msg) from err
                who, role = self._holder()
                if self._clock.monotonic() >= deadline or role == "agent":
                    os.close(fd)
                    what = "an agent" if role == "agent" else "an agent or a run"
                    msg = (
                        f"state directory {str(self.directory)!r} is in use by {who} "
                        f"({what}); stop it, or give this one another --state-dir"
                    )
                    raise StoreError(msg) from err
                self._clock.sleep(0.05)
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()} {self.role}\n".encode("ascii"), 0)
        except OSError as err:  # the lock is held; the note is only for messages
            _LOG.debug("could not write the lock holder: %s", err)
        self._fd = fd
        return self

    def release(self) -> None:
        """Drop the lock (the file stays: removing it would race the next owner)."""
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def __enter__(self) -> StateDirLock:
        if self._fd is None:
            self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def state_dir_problem(info: os.stat_result, *, uid: int) -> str | None:
    """Why a state directory with status ``info`` must not be used by ``uid`` (None: fine)."""
    if not stat.S_ISDIR(info.st_mode):
        return "is not a directory; give a directory"
    if info.st_uid != uid:
        return (
            f"is owned by uid {info.st_uid}, not by this user (uid {uid}); use a directory of "
            "your own"
        )
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        return (
            f"has mode {mode:04o}, open to group or others; 'chmod 700' it (it decides which "
            "CPUs every workload gets)"
        )
    return None


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, not ours to signal
    return True


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
            # No start outside the loop: a host failure at start (a full disk, a read-only
            # mount) is retried every period like any failed tick, instead of ending the agent.
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
