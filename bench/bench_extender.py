"""Extender filter for one pod over N pushed nodes (issue 15: 5,000 nodes, <= 500 ms p99).

Nodes of mixed shapes (tests/extender/nodes.py: 8 to 64 CPUs, 1 to 4 NUMA nodes, four
topology policies) are pushed into a real extender (uvicorn on 127.0.0.1), then `/filter`
is called over HTTP with all node names, three ways:

* cold: a pod shape never seen, every node through the exact admission (the what-if);
* burst: pods of one ReplicaSet (same spec, new uids), each assumed on its best node, so
  each call re-checks only the node its predecessor was assumed on;
* ruled out: a pod bigger than every node's CPU headroom (the precomputed summary).

    PYTHONPATH=src:. python bench/bench_extender.py [--nodes 5000] [--calls 30]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import urllib.request

from tests.extender.conftest import TOKEN, start_extender
from tests.extender.nodes import make_snapshot, pod_json, snapshot_document

from cpumanager.extender.server import ExtenderConfig

SHAPES = [
    {"cores_per_numa": 4},
    {"cores_per_numa": 8, "topology_policy": "restricted"},
    {"cores_per_numa": 8, "numa_per_socket": 2, "sockets": 2},
    {"cores_per_numa": 16, "topology_policy": "best-effort"},
    {"cores_per_numa": 6, "options": {"full-pcpus-only": "true"}},
]


def call(base: str, path: str, body: dict) -> tuple[float, dict]:
    data = json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method="POST")
    request.add_header("Authorization", "Bearer " + TOKEN.decode())
    start = time.perf_counter()
    with urllib.request.urlopen(request, timeout=600) as answer:
        result = json.loads(answer.read())
    return time.perf_counter() - start, result


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--calls", type=int, default=30)
    args = parser.parse_args()
    ext, server, thread = start_extender(ExtenderConfig(token=TOKEN, stale_after=1e9))
    names = []
    for index in range(args.nodes):
        name = f"node-{index:05d}"
        names.append(name)
        call(
            ext.base,
            f"/v1/nodes/{name}/snapshot",
            snapshot_document(make_snapshot(name, **SHAPES[index % len(SHAPES)])),
        )
    print(f"{args.nodes} nodes pushed")
    cold, result = call(ext.base, "/filter", {"Pod": pod_json("cold", "3"), "NodeNames": names})
    print(
        f"cold (every node exact): {cold * 1000:.0f} ms, "
        f"{args.nodes - len(result['FailedNodes'])} admit (narrowed to 1), "
        f"{args.nodes / cold:.0f} nodes/s"
    )
    burst = []
    for i in range(args.calls):
        took, _ = call(ext.base, "/filter", {"Pod": pod_json(f"rs-{i}", "3"), "NodeNames": names})
        burst.append(took)
    print(
        f"burst ({args.calls} pods of one spec): p50 {statistics.median(burst) * 1000:.0f} ms, "
        f"p99 {pct(burst, 0.99) * 1000:.0f} ms"
    )
    ruled = []
    for i in range(args.calls):
        took, _ = call(
            ext.base, "/filter", {"Pod": pod_json(f"huge-{i}", "200"), "NodeNames": names}
        )
        ruled.append(took)
    print(
        f"ruled out by headroom: p50 {statistics.median(ruled) * 1000:.0f} ms, "
        f"p99 {pct(ruled, 0.99) * 1000:.0f} ms"
    )
    server.should_exit = True
    thread.join(timeout=10)


if __name__ == "__main__":
    main()
