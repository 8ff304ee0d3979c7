"""`fleet capacity` of a 32-CPU Guaranteed pod over generated snapshots: nodes/s by engine.

Snapshots of mixed shapes (tests/fleet/generate.py: 2 to 64 CPUs, static and none policies,
every topology policy) are written once per size into a temporary directory; then the
capacity run is timed in one process, on the local process pool and on a Dask LocalCluster
of 2 worker processes (its start-up, about 2-3 s, is inside the time: that is what a user
waits for). Issue 15 asks for the figures from 1,000 to 10,000 nodes.

    PYTHONPATH=src:. python bench/bench_fleet.py [--sizes 1000,10000] [--workers 2]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from tests.fleet.generate import guaranteed_pod_yaml, write_snapshots

from cpumanager.fleet.placement import capacity
from cpumanager.fleet.runner import PodSource, run_answers, snapshot_files

POD = guaranteed_pod_yaml("32", name="big", memory="8Gi")
MAX_COPIES = 1000


def _time(files: list[Path], source: PodSource, workers: int, dask: str | None) -> float:
    start = time.perf_counter()
    answers = run_answers(files, source, MAX_COPIES, workers=workers, dask=dask)
    took = time.perf_counter() - start
    total = capacity(answers).total
    engine = f"dask {dask}" if dask else ("1 process" if workers == 1 else "pool")
    rate = len(files) / took
    print(f"  {engine:<12} {len(files):>6} nodes {took:7.2f} s {rate:6.0f} nodes/s total {total}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    source = PodSource(POD, "bench pod")
    print(f"fleet capacity, 32-CPU pod, {args.workers} workers")
    with tempfile.TemporaryDirectory() as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            directory = Path(tmp) / str(size)
            write_snapshots(directory, size)
            files = snapshot_files(directory)
            _time(files, source, 1, None)
            _time(files, source, args.workers, None)
            _time(files, source, args.workers, "local")


if __name__ == "__main__":
    main()
