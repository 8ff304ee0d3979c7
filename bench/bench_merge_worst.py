"""The fast merge's known exponential case, measured against its bound (issue 12).

Prefer-closest, one implicit CPU source, fragmented machines (every third CPU taken), 2
sockets with uniform distances inside a socket: nothing is preferred (the fragmented nodes
cannot hold the request at the preferred size), so phase 2 searches masks count by count in
the kubelet's order. The nodes of a socket are interchangeable by distance (two distance
classes), so the search walks count vectors (nodes per socket) by sum of distances and
finds the smallest mask of each directly: at most prod(|class| + 1) vectors over every
count, (N/2 + 1)^2 for two sockets, each one depth-first search over the N nodes. Two more
shapes: 8 sockets of 8 nodes, and 8 sockets of 4 nodes with EPYC-like distances (pairs of
nodes at 11 inside a socket, 12 across pairs: 16 classes of 2). The branch and
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
# (sockets, NUMA nodes, CPUs requested, distances): "uniform" = 10 local, 12 inside a socket,
# 21 across; "epyc" = 4 nodes per socket in 2 pairs (11 inside a pair, 12 across), 32 across
CASES = (
    (2, 8, 20, "uniform"),
    (2, 8, 40, "uniform"),
    (2, 16, 20, "uniform"),
    (2, 16, 40, "uniform"),
    (2, 16, 60, "uniform"),
    (2, 32, 20, "uniform"),
    (2, 32, 60, "uniform"),
    (2, 32, 100, "uniform"),
    (2, 32, 200, "uniform"),
    (2, 64, 60, "uniform"),
    (2, 64, 100, "uniform"),
    (2, 64, 200, "uniform"),
    (8, 64, 60, "uniform"),
    (8, 32, 60, "epyc"),
)

CHILD = """
import json, math, sys, time
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.hints.cpu_hints import cpu_hint_source
from cpumanager.core.merge.classes import distance_classes
from cpumanager.core.merge.closest import DEFAULT_CLASS_LIMIT
from cpumanager.core.merge.fast import FastStats, merge_fast
from cpumanager.core.merge.options import NUMAInfo
from cpumanager.presets import synthetic
sockets, nodes, cpus = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
class_limit = 0 if sys.argv[5] == "bnb" else DEFAULT_CLASS_LIMIT
def epyc(a, b):
    if a == b:
        return 10
    if a // 4 != b // 4:
        return 32
    return 11 if (a % 4) // 2 == (b % 4) // 2 else 12
topo = synthetic(sockets=sockets, numa_per_socket=nodes // sockets, cores_per_numa=4,
                 threads=2, distance=epyc if sys.argv[4] == "epyc" else None)
rows = {n.id: [n.distances.get(o.id, 0) for o in topo.numa_nodes] for n in topo.numa_nodes}
numa = NUMAInfo.of([n.id for n in topo.numa_nodes], rows)
available = CPUSet(c for c in topo.all_cpus if c % 3)
src = cpu_hint_source(topo, available=available, reusable=CPUSet(), count=cpus)
classes = distance_classes(list(numa.nodes), rows).members
stats = FastStats()
start = time.perf_counter()
hint, _ = merge_fast(
    "best-effort", numa, [{"cpu": src}], prefer_closest=True, stats=stats, class_limit=class_limit
)
print(json.dumps({"s": time.perf_counter() - start, "masks": stats.masks_tested,
                  "size": len(hint.mask or ()), "classes": len(classes),
                  "vectors": math.prod(len(c) + 1 for c in classes)}))
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
        f"{'shape':>13} {'CPUs':>5} {'time':>10} {'masks tested':>13} {'answer size':>11}"
        f" {'classes':>7} {'vectors bound':>13}  sum C(N,k), k <= size"
    )
    for sockets, nodes, cpus, distances in CASES:
        shape = f"{sockets}x{nodes // sockets} {distances}"
        start = time.perf_counter()
        try:
            done = subprocess.run(
                [
                    sys.executable,
                    "-c",
                    CHILD,
                    str(sockets),
                    str(nodes),
                    str(cpus),
                    distances,
                    method,
                ],
                capture_output=True,
                text=True,
                env=env,
                timeout=args.limit,
                check=True,
            )
        except subprocess.TimeoutExpired:
            took = time.perf_counter() - start
            print(f"{shape:>13} {cpus:>5} {'> ' + format(took, '.0f') + ' s':>10} {'-':>13}")
            continue
        found = json.loads(done.stdout)
        masks = sum(math.comb(nodes, k) for k in range(1, found["size"] + 1))
        print(
            f"{shape:>13} {cpus:>5} {found['s'] * 1e3:8.1f} ms {found['masks']:>13}"
            f" {found['size']:>11} {found['classes']:>7} {found['vectors']:>13}  {masks:.2e}"
        )


if __name__ == "__main__":
    main()
