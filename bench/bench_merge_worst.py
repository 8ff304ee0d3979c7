"""The fast merge's known exponential case, measured against its bound (issue 12).

Prefer-closest, one implicit CPU source, fragmented machines (every third CPU taken), 2
sockets with uniform distances inside a socket: nothing is preferred (the fragmented nodes
cannot hold the request at the preferred size), so phase 2 searches masks count by count in
the kubelet's order. The nodes of a socket are interchangeable by distance (two distance
classes), so the search walks count vectors (nodes per socket) by sum of distances and
finds the smallest mask of each directly: at most prod(|class| + 1) vectors over every
count, (N/2 + 1)^2 here, each one depth-first search over the N nodes. The branch and
bound it replaces (``--branch-and-bound``, ``class_limit=0``) is bounded only by the masks
of the counts tried, sum of C(N, k). Each case runs in a fresh process under a time limit
and prints its time and masks tested, or that it hit the limit.

    python bench/bench_merge_worst.py [--limit SECONDS] [--branch-and-bound]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
CASES = (
    (8, 20),
    (8, 40),
    (16, 20),
    (16, 40),
    (16, 60),
    (32, 20),
    (32, 60),
    (32, 100),
    (32, 200),
    (64, 60),
    (64, 100),
    (64, 200),
)

CHILD = """
import json, sys, time
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.hints.cpu_hints import cpu_hint_source
from cpumanager.core.merge.fast import FastStats, merge_fast
from cpumanager.core.merge.options import NUMAInfo
from cpumanager.presets import synthetic
from cpumanager.core.merge.closest import DEFAULT_CLASS_LIMIT
nodes, cpus = int(sys.argv[1]), int(sys.argv[2])
class_limit = 0 if sys.argv[3] == "bnb" else DEFAULT_CLASS_LIMIT
topo = synthetic(sockets=2, numa_per_socket=nodes // 2, cores_per_numa=4, threads=2)
rows = {n.id: [n.distances.get(o.id, 0) for o in topo.numa_nodes] for n in topo.numa_nodes}
numa = NUMAInfo.of([n.id for n in topo.numa_nodes], rows)
available = CPUSet(c for c in topo.all_cpus if c % 3)
src = cpu_hint_source(topo, available=available, reusable=CPUSet(), count=cpus)
stats = FastStats()
start = time.perf_counter()
hint, _ = merge_fast(
    "best-effort", numa, [{"cpu": src}], prefer_closest=True, stats=stats, class_limit=class_limit
)
print(json.dumps({"s": time.perf_counter() - start, "masks": stats.masks_tested,
                  "size": len(hint.mask or ()), "min": src.min_size()}))
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=float, default=20.0)
    parser.add_argument(
        "--branch-and-bound", action="store_true", help="the fallback search (class_limit=0)"
    )
    args = parser.parse_args()
    method = "bnb" if args.branch_and_bound else "classes"
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    print(
        f"{'NUMA':>4} {'CPUs':>5} {'time':>10} {'masks tested':>13} {'answer size':>11}"
        f" {'vectors bound':>13}  sum C(N,k), k <= size"
    )
    for nodes, cpus in CASES:
        start = time.perf_counter()
        try:
            done = subprocess.run(
                [sys.executable, "-c", CHILD, str(nodes), str(cpus), method],
                capture_output=True,
                text=True,
                env=env,
                timeout=args.limit,
                check=True,
            )
        except subprocess.TimeoutExpired:
            took = time.perf_counter() - start
            print(f"{nodes:>4} {cpus:>5} {'> ' + format(took, '.0f') + ' s':>10} {'-':>13}")
            continue
        found = json.loads(done.stdout)
        masks = sum(math.comb(nodes, k) for k in range(1, found["size"] + 1))
        vectors = (nodes // 2 + 1) ** 2
        print(
            f"{nodes:>4} {cpus:>5} {found['s'] * 1e3:8.1f} ms {found['masks']:>13}"
            f" {found['size']:>11} {vectors:>13}  {masks:.2e}"
        )


if __name__ == "__main__":
    main()
