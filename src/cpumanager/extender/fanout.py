"""Independent pure computations spread over the usable CPUs, on forked copies of the process.

A filter call over thousands of nodes is left, after its cheap pass, with up to thousands of
exact checks that no cache, rule-out or shared verdict answered: pure computations over
values the process already holds. :class:`Fanout` runs them on up to ``workers`` processes.
It forks ``workers - 1`` children, which see the restored nodes as they are at the fork
(copy-on-write: nothing is sent to them), gives each child a share of the tasks balanced by
expected cost, computes its own share meanwhile, and reads each child's results back,
pickled, from a pipe. Results come back in task order, as a plain loop would give them.

Why forking here is safe, even in a threaded server:

* a child runs only the tasks: no lock, logging, event loop or stdio. It switches the
  garbage collector off, writes its pickled results with ``os.write`` on the raw descriptor,
  and leaves by ``os._exit`` (0 after a complete write, 1 on any exception), so it never
  returns into the caller's stack, runs no exit handler and flushes no buffer it shares with
  the parent;
* the parent trusts nothing a child sends: it reads with a deadline, unpickles with an
  unpickler that resolves the result class only, and keeps a share only from a child that
  exited 0 and sent a list of the share's length holding results of that class. Otherwise
  (the child raised, died, hung past the deadline and was killed, or sent anything else)
  the parent computes that share itself: a failed child costs time, never a result;
* a fork that fails (``OSError``) leaves its share to the parent.

Few tasks (under ``threshold``) or one usable CPU run in-process: a fork of a large process
costs milliseconds. The deadline for the children is counted from the moment the parent's own
share is done: ``patience`` seconds plus ``ratio`` times what that share took (the shares
cost about the same, so a child still busy by then is stuck or starved).
"""

from __future__ import annotations

import contextlib
import gc
import io
import os
import pickle
import select
import signal
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

__all__ = ["ChildHook", "Fanout", "FanoutCounts", "usable_cpus"]

T = TypeVar("T")

ChildHook = Callable[[int, int], None]
"""Run in each child (its number from 1, its pipe's write end) before its share: tests use it
to make a child raise, exit, hang or send garbage."""

_READ_CHUNK = 1 << 16
_BYTES_PER_RESULT = 1 << 16  # a child sending more than this per task is sending garbage


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # no affinity call on this platform
        return max(1, os.cpu_count() or 1)


@dataclass(slots=True)
class FanoutCounts:
    """Where one run's tasks were computed, and how many children failed."""

    in_children: int = 0
    in_process: int = 0
    child_failures: int = 0


class _OnlyClass(pickle.Unpickler):
    """Unpickles builtins and one class: a child's results, nothing that runs code."""

    def __init__(self, data: bytes, allowed: type) -> None:
        super().__init__(io.BytesIO(data))
        self._allowed = allowed

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == (self._allowed.__module__, self._allowed.__qualname__):
            return self._allowed
        msg = f"a child sent an object of {module}.{name}"
        raise pickle.UnpicklingError(msg)


def _shares(costs: Sequence[float], count: int) -> list[list[int]]:
    """Task indexes in ``count`` shares of about equal cost (largest first, each to the
    least loaded share), each share in task order."""
    shares: list[list[int]] = [[] for _ in range(count)]
    loads = [0.0] * count
    for index in sorted(range(len(costs)), key=lambda i: -costs[i]):
        least = loads.index(min(loads))
        shares[least].append(index)
        loads[least] += costs[index]
    return [sorted(share) for share in shares]


@dataclass(slots=True)
class _Child:
    pid: int
    fd: int
    share: list[int]
    data: bytearray
    done: bool = False  # EOF read
    failed: bool = False


class Fanout:
    """Runs lists of independent tasks over up to ``workers`` processes (module docstring).

    ``workers``: at most this many processes (None: every usable CPU); ``threshold``: fewer
    tasks than this run in-process; ``cpus`` (how many CPUs are usable) and ``fork`` are
    ports tests replace; ``child_hook``: see :data:`ChildHook`; ``patience`` and ``ratio``:
    the children's deadline (module docstring).
    """

    def __init__(
        self,
        *,
        workers: int | None = None,
        threshold: int = 64,
        patience: float = 1.0,
        ratio: float = 2.0,
        cpus: Callable[[], int] = usable_cpus,
        fork: Callable[[], int] = os.fork,
        child_hook: ChildHook | None = None,
    ) -> None:
        self.workers = workers
        self.threshold = threshold
        self.patience = patience
        self.ratio = ratio
        self._cpus = cpus
        self._fork_process = fork
        self._child_hook = child_hook

    def processes(self, tasks: int) -> int:
        """How many processes a run of ``tasks`` tasks uses (1: no fork)."""
        if tasks < max(1, self.threshold):
            return 1
        cpus = self._cpus()
        wanted = cpus if self.workers is None else min(self.workers, cpus)
        return max(1, min(wanted, tasks))

    def run(
        self,
        tasks: Sequence[Callable[[], T]],
        *,
        result_type: type[T],
        costs: Sequence[float] | None = None,
    ) -> tuple[list[T], FanoutCounts]:
        """Every task's result, in task order, and where they were computed."""
        counts = FanoutCounts()
        processes = self.processes(len(tasks))
        if processes == 1:
            counts.in_process = len(tasks)
            return [task() for task in tasks], counts
        shares = _shares(costs if costs is not None else [1.0] * len(tasks), processes)
        results: list[Any] = [None] * len(tasks)
        children: list[_Child] = []
        mine = shares[0]
        for number, share in enumerate(shares[1:], start=1):
            child = self._fork(number, share, tasks)
            if child is None:
                mine = mine + share
            else:
                children.append(child)
        started = time.perf_counter()
        for index in mine:
            results[index] = tasks[index]()
        counts.in_process += len(mine)
        own = time.perf_counter() - started
        self._collect(children, deadline=time.perf_counter() + self.patience + self.ratio * own)
        for child in children:
            got = None if child.failed else _decode(child, result_type)
            if got is None:
                counts.child_failures += 1
                counts.in_process += len(child.share)
                got = [tasks[index]() for index in child.share]
            else:
                counts.in_children += len(child.share)
            for index, value in zip(child.share, got, strict=True):
                results[index] = value
        return cast(list[T], results), counts

    def _fork(
        self, number: int, share: list[int], tasks: Sequence[Callable[[], Any]]
    ) -> _Child | None:
        """A child computing ``share``; None when the fork fails."""
        read_fd, write_fd = os.pipe()
        try:
            with warnings.catch_warnings():
                # Python 3.12+ warns on fork in a threaded process: a child that takes a lock
                # another thread held at the fork would deadlock. Ours takes none (module
                # docstring), and never leaves this block: it ends in os._exit.
                warnings.filterwarnings(
                    "ignore",
                    message=r".*fork\(\) may lead to deadlocks",
                    category=DeprecationWarning,
                )
                pid = self._fork_process()
                if pid == 0:
                    os.close(read_fd)
                    self._child(number, share, tasks, write_fd)
        except OSError:
            os.close(read_fd)
            os.close(write_fd)
            return None
        os.close(write_fd)
        return _Child(pid, read_fd, share, bytearray())

    def _child(
        self, number: int, share: list[int], tasks: Sequence[Callable[[], Any]], fd: int
    ) -> None:
        """The child's whole life: compute, write, ``os._exit``; never returns."""
        status = 1
        try:
            gc.disable()
            if self._child_hook is not None:
                self._child_hook(number, fd)
            data = memoryview(pickle.dumps([tasks[i]() for i in share], pickle.HIGHEST_PROTOCOL))
            while data:
                data = data[os.write(fd, data) :]
            status = 0
        finally:
            os._exit(status)

    def _collect(self, children: list[_Child], *, deadline: float) -> None:
        """Read every child's pipe to its end, then reap it; kill what is late."""
        waiting = {child.fd: child for child in children}
        while waiting:
            left = deadline - time.perf_counter()
            if left <= 0:
                break
            ready, _, _ = select.select(list(waiting), [], [], left)
            for fd in ready:
                child = waiting[fd]
                chunk = os.read(fd, _READ_CHUNK)
                if chunk:
                    child.data += chunk
                    if len(child.data) <= _BYTES_PER_RESULT * len(child.share):
                        continue
                    child.failed = True
                child.done = True
                del waiting[fd]
        for child in children:
            os.close(child.fd)
            late = child.failed or not child.done
            # a child whose pipe has ended is exiting: a moment more to reap it
            exited = _reap(child.pid, max(deadline, time.perf_counter() + 1.0), kill=late)
            child.failed = late or not exited


def _reap(pid: int, deadline: float, *, kill: bool) -> bool:
    """Wait for the child (killed first when ``kill``, or when it outlives the deadline);
    True when it exited 0 by itself."""
    if not kill:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(status) == 0
            if time.perf_counter() >= deadline:
                break
            time.sleep(0.001)
    with contextlib.suppress(ProcessLookupError):  # already gone, not yet reaped
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return False


def _decode(child: _Child, result_type: type[T]) -> list[T] | None:
    """The child's results when they are a list of the share's length of ``result_type``."""
    try:
        got = _OnlyClass(bytes(child.data), result_type).load()
    except Exception:  # anything undecodable is garbage: the share is recomputed
        return None
    if not isinstance(got, list) or len(got) != len(child.share):
        return None
    if not all(type(item) is result_type for item in got):
        return None
    return got
