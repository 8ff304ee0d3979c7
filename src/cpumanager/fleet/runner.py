"""Map the per-node answer over many snapshots: a local process pool or a Dask cluster.

Snapshot files are cut into batches (a task per node would cost more in scheduling than in
work); each batch is answered by :func:`answer_batch` in a worker process, and the answers
come back in file order whichever engine ran them, so results are identical. Dask
(``distributed``) is imported only when asked for: ``"local"`` starts a LocalCluster of
``workers`` processes for this run, any other value is a scheduler address whose workers
must have cpumanager installed.

**One snapshot fails only itself.** Every snapshot is answered on its own: a file we cannot
use, a defect of ours it trips (any exception), or a snapshot past the per-snapshot time
limit (``time_limit`` seconds, enforced with a timer signal where the answer runs in a
process's main thread: the local pool and ``--workers 1``) is an answer with ``error``
naming the reason; the others are answered as usual. A worker process that dies (killed,
out of memory) is replaced: its batch's snapshots are answered again one per task, so only
the snapshot that kills a worker is reported as unusable.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import signal
import stat
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cpumanager.core.workload import Pod
from cpumanager.errors import InputError, WorkloadError
from cpumanager.fleet.node import answer_file
from cpumanager.fleet.placement import NodeAnswer

__all__ = [
    "DEFAULT_TIME_LIMIT",
    "MAX_SNAPSHOTS",
    "PodSource",
    "answer_batch",
    "run_answers",
    "snapshot_files",
]

MAX_SNAPSHOTS = 1_000_000
DEFAULT_TIME_LIMIT = 60.0  # seconds per snapshot: a 1,024-NUMA node takes a few seconds
Progress = Callable[[int, int], None]


def snapshot_files(directory: Path) -> list[Path]:
    """The regular ``*.json`` files directly in ``directory`` (links skipped), by name."""
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except FileNotFoundError as err:
        msg = f"snapshot directory {str(directory)!r} does not exist"
        raise InputError(msg) from err
    except NotADirectoryError as err:
        msg = f"{str(directory)!r} is not a directory; give the directory of snapshot files"
        raise InputError(msg) from err
    except OSError as err:
        msg = f"cannot list {str(directory)!r}: {err.strerror or err}"
        raise InputError(msg) from err
    files = [
        Path(e.path)
        for e in entries
        if e.name.endswith(".json") and stat.S_ISREG(e.stat(follow_symlinks=False).st_mode)
    ]
    if not files:
        msg = f"{str(directory)!r} holds no snapshot (*.json); write some with 'node snapshot'"
        raise InputError(msg)
    if len(files) > MAX_SNAPSHOTS:
        msg = f"{str(directory)!r} holds {len(files)} snapshots, more than {MAX_SNAPSHOTS}"
        raise InputError(msg)
    return files


@dataclass(frozen=True, slots=True)
class PodSource:
    """The pod as manifest text: what travels to workers (a Pod holds read-only mappings,
    which do not pickle), parsed once per batch."""

    text: str
    source: str

    def pod(self) -> Pod:
        """The one Pod of the manifest."""
        from cpumanager.adapters.manifests import pods_from_text

        pods = pods_from_text(self.text, source=self.source)
        if len(pods) != 1:
            msg = f"{self.source}: holds {len(pods)} pods; give a file with exactly one Pod"
            raise WorkloadError(msg)
        return pods[0]


class _TimeUp(BaseException):  # from the timer: no `except Exception` stops it
    pass


def _time_up(_signum: int, _frame: object) -> None:
    raise _TimeUp


@contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Raise _TimeUp in the block after ``seconds`` (main thread only; elsewhere no limit)."""
    if seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGALRM, _time_up)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _unusable(path: str, limit: int, reason: str) -> NodeAnswer:
    return NodeAnswer(Path(path).name, (), limit, error=reason)


def answer_contained(path: str, pod: Pod, limit: int, time_limit: float) -> NodeAnswer:
    """One snapshot's answer; whatever goes wrong answering it is its answer's ``error``."""
    try:
        with _time_limit(time_limit):
            return answer_file(path, pod, limit)
    except _TimeUp:
        return _unusable(path, limit, f"not answered within the {time_limit:g} s time limit")
    except RecursionError:
        return _unusable(path, limit, "internal error: nested too deeply (please report)")
    except MemoryError:
        return _unusable(path, limit, "internal error: out of memory answering it")
    except Exception as exc:  # a defect of ours fails this snapshot only
        detail = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
        return _unusable(path, limit, f"internal error ({detail}; please report)")


def answer_batch(
    paths: Sequence[str], pod: PodSource, limit: int, time_limit: float = DEFAULT_TIME_LIMIT
) -> list[NodeAnswer]:
    """Answer every snapshot of a batch (runs in a worker)."""
    parsed = pod.pod()
    return [answer_contained(p, parsed, limit, time_limit) for p in paths]


def _batches(files: Sequence[Path], workers: int) -> list[list[str]]:
    size = max(1, min(64, len(files) // (workers * 8) or 1))
    return [[str(f) for f in files[i : i + size]] for i in range(0, len(files), size)]


def _on_pool(
    batches: list[list[str]],
    pod: PodSource,
    limit: int,
    workers: int,
    progress: Progress,
    *,
    time_limit: float,
) -> list[list[NodeAnswer]]:
    results: list[list[NodeAnswer]] = [[] for _ in batches]
    total, done = sum(len(b) for b in batches), 0
    if workers <= 1:
        for i, batch in enumerate(batches):
            results[i] = answer_batch(batch, pod, limit, time_limit)
            done += len(batch)
            progress(done, total)
        return results
    context = multiprocessing.get_context("forkserver")
    todo = list(range(len(batches)))
    single = False  # after a worker died: one snapshot per task
    while todo:
        failed: list[int] = []
        tasks = (
            [(i, [p]) for i in todo for p in batches[i]]
            if single
            else [(i, batches[i]) for i in todo]
        )
        parts: dict[int, dict[str, NodeAnswer]] = {i: {} for i in todo}
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            futures = {
                pool.submit(answer_batch, paths, pod, limit, time_limit): (i, paths)
                for i, paths in tasks
            }
            for future in as_completed(futures):
                i, paths = futures[future]
                try:
                    got = future.result()
                except Exception as exc:  # a dead worker: see the module docstring
                    if not single:
                        failed.append(i)
                        continue
                    reason = f"the worker answering it died ({type(exc).__name__})"
                    got = [_unusable(paths[0], limit, reason)]
                for path, answer in zip(paths, got, strict=True):
                    parts[i][path] = answer
                done += len(paths)
                progress(done, total)
        for i in todo:
            if i not in failed:
                results[i] = [parts[i][p] for p in batches[i]]
        todo, single = sorted(set(failed)), True
    return results


def _on_dask(
    batches: list[list[str]],
    pod: PodSource,
    limit: int,
    *,
    address: str,
    workers: int,
    progress: Progress,
    time_limit: float,
) -> list[list[NodeAnswer]]:
    import importlib

    # distributed has no type hints: used through Any on purpose
    distributed: Any = importlib.import_module("distributed")
    cluster: Any = None
    client: Any
    if address == "local":
        cluster = distributed.LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",  # any free port: never clash with another cluster
        )
        client = distributed.Client(cluster)
    else:
        try:
            client = distributed.Client(address, timeout="10s")
        except OSError as err:
            msg = f"cannot reach the Dask scheduler at {address!r}: {err}"
            raise InputError(msg) from err
    results: list[list[NodeAnswer]] = [[] for _ in batches]
    total, done = sum(len(b) for b in batches), 0
    try:
        futures = client.map(
            answer_batch, batches, pod=pod, limit=limit, time_limit=time_limit, pure=False
        )
        index = {f.key: i for i, f in enumerate(futures)}
        for future in distributed.as_completed(futures):
            i = index[future.key]
            results[i] = future.result()
            done += len(batches[i])
            progress(done, total)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    return results


def _unique(answers: list[NodeAnswer], files: Sequence[Path]) -> list[NodeAnswer]:
    """Two snapshots naming the same node both count: the later one is told by its file."""
    seen: set[str] = set()
    out: list[NodeAnswer] = []
    for found, path in zip(answers, files, strict=True):
        answer = found
        if answer.node in seen:
            answer = dataclasses.replace(answer, node=f"{answer.node} ({path.name})")
        seen.add(answer.node)
        out.append(answer)
    return out


def run_answers(
    files: Sequence[Path],
    pod: PodSource,
    limit: int,
    *,
    workers: int = 2,
    dask: str | None = None,
    progress: Progress | None = None,
    time_limit: float = DEFAULT_TIME_LIMIT,
) -> list[NodeAnswer]:
    """Every node's answer for up to ``limit`` copies of ``pod``, in file order; a snapshot
    that cannot be answered (module docstring) is an answer with ``error``."""
    if limit < 1:
        msg = f"the copy limit must be at least 1, got {limit}"
        raise InputError(msg)
    if workers < 1:
        msg = f"--workers must be at least 1, got {workers}"
        raise InputError(msg)
    tick = progress or (lambda _done, _total: None)
    batches = _batches(files, workers)
    if dask is None:
        results = _on_pool(batches, pod, limit, workers, tick, time_limit=time_limit)
    else:
        results = _on_dask(
            batches, pod, limit, address=dask, workers=workers, progress=tick, time_limit=time_limit
        )
    return _unique([a for batch in results for a in batch], files)
