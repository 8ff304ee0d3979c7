"""Map the per-node answer over many snapshots: a local process pool or a Dask cluster.

Snapshot files are cut into batches (a task per node would cost more in scheduling than in
work); each batch is answered by :func:`answer_batch` in a worker process, and the answers
come back in file order whichever engine ran them, so results are identical. Dask
(``distributed``) is imported only when asked for: ``"local"`` starts a LocalCluster of
``workers`` processes for this run, any other value is a scheduler address whose workers
must have cpumanager installed.
"""

from __future__ import annotations

import multiprocessing
import os
import stat
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cpumanager.core.workload import Pod
from cpumanager.errors import InputError, WorkloadError
from cpumanager.fleet.node import answer_file
from cpumanager.fleet.placement import NodeAnswer

__all__ = ["MAX_SNAPSHOTS", "PodSource", "answer_batch", "run_answers", "snapshot_files"]

MAX_SNAPSHOTS = 1_000_000
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


def answer_batch(paths: Sequence[str], pod: PodSource, limit: int) -> list[NodeAnswer]:
    """Answer every snapshot of a batch (runs in a worker)."""
    parsed = pod.pod()
    return [answer_file(p, parsed, limit) for p in paths]


def _batches(files: Sequence[Path], workers: int) -> list[list[str]]:
    size = max(1, min(64, len(files) // (workers * 8) or 1))
    return [[str(f) for f in files[i : i + size]] for i in range(0, len(files), size)]


def _on_pool(
    batches: list[list[str]], pod: PodSource, limit: int, workers: int, progress: Progress
) -> list[list[NodeAnswer]]:
    results: list[list[NodeAnswer]] = [[] for _ in batches]
    total, done = sum(len(b) for b in batches), 0
    if workers <= 1:
        for i, batch in enumerate(batches):
            results[i] = answer_batch(batch, pod, limit)
            done += len(batch)
            progress(done, total)
        return results
    context = multiprocessing.get_context("forkserver")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        futures = {pool.submit(answer_batch, b, pod, limit): i for i, b in enumerate(batches)}
        for future in as_completed(futures):
            i = futures[future]
            results[i] = future.result()
            done += len(batches[i])
            progress(done, total)
    return results


def _on_dask(
    batches: list[list[str]],
    pod: PodSource,
    limit: int,
    *,
    address: str,
    workers: int,
    progress: Progress,
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
        futures = client.map(answer_batch, batches, pod=pod, limit=limit, pure=False)
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
    import dataclasses

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
) -> list[NodeAnswer]:
    """Every node's answer for up to ``limit`` copies of ``pod``, in file order."""
    if limit < 1:
        msg = f"the copy limit must be at least 1, got {limit}"
        raise InputError(msg)
    if workers < 1:
        msg = f"--workers must be at least 1, got {workers}"
        raise InputError(msg)
    tick = progress or (lambda _done, _total: None)
    batches = _batches(files, workers)
    if dask is None:
        results = _on_pool(batches, pod, limit, workers, tick)
    else:
        results = _on_dask(batches, pod, limit, address=dask, workers=workers, progress=tick)
    return _unique([a for batch in results for a in batch], files)
