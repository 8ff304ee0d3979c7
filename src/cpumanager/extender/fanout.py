"""Independent pure jobs spread over the usable CPUs, on long-lived forked copies of the process.

A filter call over thousands of nodes is left, after its cheap pass, with up to thousands of
exact checks: pure computations over node states the process already holds. :class:`Fanout`
runs such jobs on up to ``workers`` processes, itself and ``workers - 1`` forked *workers*,
each taking a share balanced by expected cost; results come back in job order.

**Why the workers outlive the call.** A fork shares the parent's memory copy-on-write, and
CPython writes to nearly every object it reads (reference counts), so each page a process
writes after a fork is first copied, at several microseconds a page on our machines. A
check touches some twenty pages of its node: children forked for one call spent more on
copies than on checks (measured over 5,000 busy nodes: 35,000 copied pages on each side for
1,500 checks each, every share 2.5 times slower than in one process). A worker that stays
pays for each page once, and so does the server for its own copies.

**What a worker may run.** A worker holds the states as they were when it was forked. Each
job names the state it reads (its *stamp*: the extender uses the node's name and push
generation); a job goes to a worker only when the worker holds its stamp, otherwise it runs
in the server process. When more than a quarter of a run's cost is on stamps the workers do
not hold, or the number of processes changes, the workers are retired and forked afresh.

**Why forking is safe here, in a threaded server.** A worker only computes: it reads a
request from its pipe, runs ``solve`` on the jobs, writes the pickled results with
``os.write`` on the raw descriptor, and waits for the next request. It takes no lock and
touches no logging, event loop or stdio, freezes the objects it inherited in the collector
(never scanned there, so never copied for it; its own garbage is collected as usual), and
leaves by
``os._exit``: at the end of its request pipe (the server retired it or died) with 0, on any
exception with 1. The server trusts nothing a worker sends: it reads with a deadline
(``patience`` seconds plus ``ratio`` times its own share's time, counted after that share),
unpickles with an unpickler that resolves only the result class, and keeps a share only as
a list of the share's length holding results of that class. Otherwise (a worker that raised,
died, hung past the deadline, or sent anything else) the worker is killed and the server
computes that share itself: a failed worker costs time, never a result. A fork that fails
(``OSError``) leaves its share to the server too.

Few jobs (under ``threshold``) or one usable CPU run in-process. Not thread-safe: the caller
serialises runs (the extender holds its store's lock).
"""

from __future__ import annotations

import contextlib
import copyreg
import gc
import io
import os
import pickle
import select
import signal
import struct
import time
import types
import warnings
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

__all__ = [
    "DEFAULT_MAX",
    "ChildHook",
    "Fanout",
    "FanoutCounts",
    "FanoutSettings",
    "Job",
    "usable_cpus",
]

R = TypeVar("R")

ChildHook = Callable[[int, int], None]
"""Run in a worker (its number from 1, its answer pipe's write end) before each request's
jobs: tests use it to make a worker raise, exit, hang or send garbage."""

_HEADER = struct.Struct(">Q")  # every message: its length, then a pickle
_READ_CHUNK = 1 << 16
_BYTES_PER_RESULT = 1 << 16  # a worker answering with more than this per job sends garbage
_STALE_SHARE = 0.25  # re-fork when more of a run's cost than this is on stamps not held
DEFAULT_MAX = 4
"""Processes by default, however many CPUs are usable: each worker ends up with its own copy
of the pages it touches, and the server's one-core pass over the nodes bounds the gain."""


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # no affinity call on this platform
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True, slots=True)
class Job:
    """One job: ``solve(state, *args)``. ``stamp`` names the state (a worker forked while
    it was current may run the job); ``args`` are pickled to the worker."""

    stamp: Hashable
    state: object
    args: tuple[object, ...]
    cost: float = 1.0


@dataclass(frozen=True, slots=True)
class FanoutSettings:
    """``workers``: at most this many processes (None: the usable CPUs, at most
    :data:`DEFAULT_MAX`); ``threshold``:
    fewer jobs than this run in-process; ``patience`` and ``ratio``: the workers' deadline
    (module docstring); ``cpus`` (how many CPUs are usable) and ``fork`` are ports tests
    replace; ``child_hook``: see :data:`ChildHook`."""

    workers: int | None = None
    threshold: int = 64
    patience: float = 1.0
    ratio: float = 2.0
    cpus: Callable[[], int] = usable_cpus
    fork: Callable[[], int] = os.fork
    child_hook: ChildHook | None = None


@dataclass(slots=True)
class FanoutCounts:
    """Where one run's jobs were computed, and how many workers failed."""

    in_children: int = 0
    in_process: int = 0
    child_failures: int = 0


class _OnlyClass(pickle.Unpickler):
    """Unpickles builtins and one class: a worker's results, nothing that runs code."""

    def __init__(self, data: bytes, allowed: type) -> None:
        super().__init__(io.BytesIO(data))
        self._allowed = allowed

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == (self._allowed.__module__, self._allowed.__qualname__):
            return self._allowed
        msg = f"a worker sent an object of {module}.{name}"
        raise pickle.UnpicklingError(msg)


def _mapping_proxy(values: dict[Any, Any]) -> types.MappingProxyType[Any, Any]:
    return types.MappingProxyType(values)


def _request(batch: list[tuple[Hashable, tuple[object, ...]]]) -> bytes:
    """A request for a worker (which trusts the server): the pod values hold read-only
    mappings, which pickle does not know."""
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = {
        **copyreg.dispatch_table,
        types.MappingProxyType: lambda proxy: (_mapping_proxy, (dict(proxy),)),
    }
    pickler.dump(batch)
    return buffer.getvalue()


def _shares(costs: Sequence[float], pinned: Sequence[bool], count: int) -> list[list[int]]:
    """Job indexes in ``count`` shares of about equal cost: pinned jobs in share 0 (the
    server's), the others largest first, each to the least loaded share; in job order."""
    shares: list[list[int]] = [[] for _ in range(count)]
    loads = [0.0] * count
    for index, here in enumerate(pinned):
        if here:
            shares[0].append(index)
            loads[0] += costs[index]
    free = sorted((i for i, here in enumerate(pinned) if not here), key=lambda i: -costs[i])
    for index in free:
        least = loads.index(min(loads))
        shares[least].append(index)
        loads[least] += costs[index]
    return [sorted(share) for share in shares]


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read_exactly(fd: int, size: int) -> bytes | None:
    """``size`` bytes, or None at the end of the pipe."""
    chunks = bytearray()
    while len(chunks) < size:
        chunk = os.read(fd, min(_READ_CHUNK, size - len(chunks)))
        if not chunk:
            return None
        chunks += chunk
    return bytes(chunks)


@dataclass(slots=True)
class _Worker:
    pid: int
    requests: int  # write end of the worker's request pipe
    answers: int  # read end of its answer pipe
    share: list[int] = field(default_factory=list)
    data: bytearray = field(default_factory=bytearray)
    done: bool = False
    failed: bool = False


class Fanout(Generic[R]):
    """Runs jobs ``solve(state, *args)`` over up to ``settings.workers`` processes (module
    docstring); results of type ``result_type``. :meth:`close` retires the workers."""

    def __init__(
        self,
        solve: Callable[..., R],
        result_type: type[R],
        settings: FanoutSettings | None = None,
    ) -> None:
        self._solve = solve
        self._result_type = result_type
        self.settings = settings if settings is not None else FanoutSettings()
        self._workers: list[_Worker] = []
        self._held: frozenset[Hashable] = frozenset()

    def processes(self, jobs: int) -> int:
        """How many processes a run of ``jobs`` jobs uses (1: no worker)."""
        settings = self.settings
        if jobs < max(1, settings.threshold):
            return 1
        cpus = settings.cpus()
        wanted = min(cpus, DEFAULT_MAX) if settings.workers is None else min(settings.workers, cpus)
        return max(1, min(wanted, jobs))

    def run(
        self, jobs: Sequence[Job], *, states: Callable[[], Mapping[Any, object]]
    ) -> tuple[list[R], FanoutCounts]:
        """Every job's result, in job order, and where they were computed. ``states``: the
        current states by stamp, read only when workers are forked."""
        counts = FanoutCounts()
        processes = self.processes(len(jobs))
        if processes == 1:
            counts.in_process = len(jobs)
            return [self._solve(job.state, *job.args) for job in jobs], counts
        costs = [job.cost for job in jobs]
        stale = sum(job.cost for job in jobs if job.stamp not in self._held)
        if len(self._workers) != processes - 1 or stale > _STALE_SHARE * sum(costs):
            self.close()
            self._start(processes - 1, states)
        pinned = [job.stamp not in self._held for job in jobs]
        shares = _shares(costs, pinned, 1 + len(self._workers))
        mine = shares[0]
        for worker, share in zip(self._workers, shares[1:], strict=True):
            worker.share, worker.data, worker.done = share, bytearray(), False
            try:
                _write_all(worker.requests, _message(_request([self._job(jobs[i]) for i in share])))
            except OSError:  # the worker is gone
                worker.failed = True
        results: list[Any] = [None] * len(jobs)
        started = time.perf_counter()
        for index in mine:
            results[index] = self._solve(jobs[index].state, *jobs[index].args)
        counts.in_process += len(mine)
        own = time.perf_counter() - started
        settings = self.settings
        self._collect(deadline=time.perf_counter() + settings.patience + settings.ratio * own)
        for worker in self._workers:
            got = None if worker.failed else self._decode(worker)
            if got is None:
                worker.failed = True  # garbage or silence: retired below, never asked again
                counts.child_failures += 1
                counts.in_process += len(worker.share)
                got = [self._solve(jobs[i].state, *jobs[i].args) for i in worker.share]
            else:
                counts.in_children += len(worker.share)
            for index, value in zip(worker.share, got, strict=True):
                results[index] = value
        self._retire([w for w in self._workers if w.failed])
        return results, counts

    def close(self) -> None:
        """Retire every worker (they hold copies of the states as forked)."""
        self._retire(list(self._workers))
        self._held = frozenset()

    @staticmethod
    def _job(job: Job) -> tuple[Hashable, tuple[object, ...]]:
        return job.stamp, job.args

    def _start(self, count: int, states: Callable[[], Mapping[Any, object]]) -> None:
        image = dict(states())
        self._held = frozenset(image)
        for number in range(1, count + 1):
            worker = self._fork(number, image)
            if worker is not None:
                self._workers.append(worker)

    def _fork(self, number: int, image: Mapping[Hashable, object]) -> _Worker | None:
        """A worker serving requests on ``image``; None when the fork fails."""
        request_read, request_write = os.pipe()
        answer_read, answer_write = os.pipe()
        try:
            with warnings.catch_warnings():
                # Python 3.12+ warns on fork in a threaded process: a child that takes a lock
                # another thread held at the fork would deadlock. A worker takes none
                # (module docstring) and never leaves this block: it ends in os._exit.
                warnings.filterwarnings(
                    "ignore", r".*fork\(\) may lead to deadlocks", DeprecationWarning
                )
                pid = self.settings.fork()
                if pid == 0:
                    self._serve(
                        number, image, request_read, answer_write, keep=(request_write, answer_read)
                    )
        except OSError:
            for fd in (request_read, request_write, answer_read, answer_write):
                os.close(fd)
            return None
        os.close(request_read)
        os.close(answer_write)
        return _Worker(pid, request_write, answer_read)

    def _serve(
        self,
        number: int,
        image: Mapping[Hashable, object],
        requests: int,
        answers: int,
        *,
        keep: tuple[int, ...],
    ) -> None:
        """A worker's whole life (module docstring); never returns."""
        status = 1
        try:
            gc.freeze()  # inherited objects: never scanned here, so never copied for it
            gc.enable()  # forked during a call, when the server holds collections off
            for fd in (*keep, *(fd for w in self._workers for fd in (w.requests, w.answers))):
                os.close(fd)  # the server's ends: the request pipe ends when the server's does
            hook = self.settings.child_hook
            while True:
                header = _read_exactly(requests, _HEADER.size)
                if header is None:
                    status = 0
                    break
                body = _read_exactly(requests, _HEADER.unpack(header)[0])
                if body is None:
                    break
                batch = pickle.loads(body)  # noqa: S301 - written by the server that forked us
                if hook is not None:
                    hook(number, answers)
                results = [self._solve(image[stamp], *args) for stamp, args in batch]
                _write_all(answers, _message(pickle.dumps(results, pickle.HIGHEST_PROTOCOL)))
        finally:
            os._exit(status)

    def _collect(self, *, deadline: float) -> None:
        """Read each worker's answer; a late, oversized or cut one fails the worker."""
        waiting = {w.answers: w for w in self._workers if not w.failed}
        while waiting:
            left = deadline - time.perf_counter()
            if left <= 0:
                break
            ready, _, _ = select.select(list(waiting), [], [], left)
            for fd in ready:
                worker = waiting[fd]
                chunk = os.read(fd, _READ_CHUNK)
                worker.data += chunk
                if not chunk or len(worker.data) > _HEADER.size + _BYTES_PER_RESULT * len(
                    worker.share
                ):
                    worker.failed = True
                elif len(worker.data) >= _HEADER.size:
                    size = _HEADER.unpack_from(worker.data)[0]
                    if len(worker.data) < _HEADER.size + size:
                        continue
                    worker.done = len(worker.data) == _HEADER.size + size
                    worker.failed = not worker.done
                else:
                    continue
                del waiting[fd]
        for worker in waiting.values():
            worker.failed = True

    def _decode(self, worker: _Worker) -> list[R] | None:
        """The worker's results when they are a list of its share's length of the class."""
        try:
            got = _OnlyClass(bytes(worker.data[_HEADER.size :]), self._result_type).load()
        except Exception:  # anything undecodable is garbage: the share is recomputed
            return None
        if not isinstance(got, list) or len(got) != len(worker.share):
            return None
        if not all(type(item) is self._result_type for item in got):
            return None
        return got

    def _retire(self, workers: list[_Worker]) -> None:
        for worker in workers:
            for fd in (worker.requests, worker.answers):
                with contextlib.suppress(OSError):
                    os.close(fd)
            with contextlib.suppress(ProcessLookupError):
                os.kill(worker.pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(worker.pid, 0)
            self._workers.remove(worker)


def _message(body: bytes) -> bytes:
    return _HEADER.pack(len(body)) + body
