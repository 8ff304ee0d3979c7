"""Extender filter for one pod over N pushed nodes (issue 15: 5,000 nodes, <= 500 ms p99).

Two node mixes, each pushed into a real extender (uvicorn on 127.0.0.1), then `/filter` is
called over HTTP with all node names:

* empty: five shapes (tests/extender/nodes.py: 16 to 64 CPUs, 1 to 4 NUMA nodes, four
  topology policies), no pods;
* busy: the same shapes running 0 to 14 random pods each (Guaranteed with exclusive CPUs,
  fractional, multi-container), admitted by the what-if, so nearly every node is in its own
  state.

For each mix it prints the number of distinct admission keys (exact checks a new pod spec
costs at most), then:

* cold: pod specs never seen before (``--specs`` of them), every node ruled out or checked
  exactly; p50/p99 and nodes/s, and where a cold call's time goes (exact checks; parsing
  the request and rendering the answer; the rest: the per-node loop, rule-outs, HTTP);
* burst: pods of one ReplicaSet (same spec, new uids), each assumed on its best node, so
  each call re-checks only the state its predecessor changed;
* ruled out: a pod bigger than every node (the precomputed summaries).

    PYTHONPATH=src:. python bench/bench_extender.py [--nodes 5000] [--calls 30] [--specs 12]
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import time
import urllib.request
from collections import Counter
from collections.abc import Callable
from typing import Any

from starlette.responses import JSONResponse
from tests.extender.conftest import TOKEN, start_extender
from tests.extender.nodes import busy_snapshot, make_snapshot, pod_json, snapshot_document

from cpumanager.extender import server as server_module
from cpumanager.extender.prepared import PreparedNode
from cpumanager.extender.server import ExtenderConfig

SHAPES: list[dict[str, Any]] = [
    {"cores_per_numa": 4},
    {"cores_per_numa": 8, "topology_policy": "restricted"},
    {"cores_per_numa": 8, "numa_per_socket": 2, "sockets": 2},
    {"cores_per_numa": 16, "topology_policy": "best-effort"},
    {"cores_per_numa": 6, "options": {"full-pcpus-only": "true"}},
]
SPEC_CPUS = ("1", "2", "3", "4", "6", "8", "500m")

SPENT: Counter[str] = Counter()


def timed(label: str, func: Callable[..., Any]) -> Callable[..., Any]:
    def run(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return func(*args, **kwargs)
        finally:
            SPENT[label] += time.perf_counter() - start
            SPENT[label + " calls"] += 1

    return run


class TimedJSON(JSONResponse):
    def render(self, content: Any) -> bytes:
        start = time.perf_counter()
        body = super().render(content)
        SPENT["json"] += time.perf_counter() - start
        return body


FULL_GC: list[float] = []  # durations of full (oldest-generation) collections
_gc_started = [0.0]


def _gc_watch(phase: str, info: dict[str, int]) -> None:
    if info["generation"] != 2:
        return
    if phase == "start":
        _gc_started[0] = time.perf_counter()
    else:
        FULL_GC.append(time.perf_counter() - _gc_started[0])


def instrument() -> None:
    """Count time in exact checks and in request parsing / answer rendering, and full
    garbage collections (bench only)."""
    gc.callbacks.append(_gc_watch)
    server_module.judge = timed("exact", server_module.judge)  # type: ignore[attr-defined]
    server_module.parse_args = timed("json", server_module.parse_args)  # type: ignore[attr-defined]
    server_module.JSONResponse = TimedJSON  # type: ignore[attr-defined,misc]


def call(base: str, path: str, body: object) -> tuple[float, dict[str, Any]]:
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


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def node_document(mix: str, index: int, rng: random.Random) -> dict[str, Any]:
    name = f"node-{index:05d}"
    shape = SHAPES[index % len(SHAPES)]
    if mix == "empty":
        return snapshot_document(make_snapshot(name, **shape))
    return snapshot_document(busy_snapshot(name, rng, pods=rng.randint(0, 14), **shape))


def run_mix(mix: str, count: int, calls: int, specs: int) -> None:
    ext, server, thread = start_extender(ExtenderConfig(token=TOKEN, stale_after=1e9))
    rng = random.Random(15)
    names = []
    start = time.perf_counter()
    for index in range(count):
        document = node_document(mix, index, rng)
        names.append(document["nodeName"])
        call(ext.base, f"/v1/nodes/{document['nodeName']}/snapshot", document)
    pushed = time.perf_counter() - start
    keys = {
        e.prepared.key
        for e in (ext.store.get(n) for n in names)
        if e is not None and isinstance(e.prepared, PreparedNode)
    }
    print(f"[{mix}] {count} nodes pushed in {pushed:.0f} s; {len(keys)} distinct admission keys")
    FULL_GC.clear()

    cold, exact, parse_render = [], [], []
    reasons: Counter[str] = Counter()
    first_spec = None
    for i in range(specs):
        cpu = SPEC_CPUS[i % len(SPEC_CPUS)]
        pod = pod_json(f"cold-{i}", cpu, f"{1000 + i}Mi")  # a memory size never asked before
        first_spec = first_spec or (cpu, f"{1000 + i}Mi")
        SPENT.clear()
        took, result = call(ext.base, "/filter", {"Pod": pod, "NodeNames": names})
        cold.append(took)
        exact.append(SPENT["exact"])
        parse_render.append(SPENT["json"])
        reasons.update(text.split(":")[0] for text in result["FailedNodes"].values())
        reasons["exact checks"] += SPENT["exact calls"]
    share_exact = sum(exact) / sum(cold)
    share_json = sum(parse_render) / sum(cold)
    print(
        f"[{mix}] cold ({specs} new specs): p50 {ms(statistics.median(cold))}, "
        f"p99 {ms(pct(cold, 0.99))}, {count / statistics.median(cold):.0f} nodes/s; "
        f"time in exact checks {share_exact:.0%}, parsing+rendering JSON {share_json:.0%}, "
        f"rest (per-node loop, rule-outs, HTTP) {1 - share_exact - share_json:.0%}"
    )
    print(f"[{mix}] cold outcomes over all specs: {dict(reasons.most_common())}")

    assert first_spec is not None
    burst = []
    for i in range(calls):
        pod = pod_json(f"rs-{i}", *first_spec)
        took, _ = call(ext.base, "/filter", {"Pod": pod, "NodeNames": names})
        burst.append(took)
    print(
        f"[{mix}] burst ({calls} pods of one spec): p50 {ms(statistics.median(burst))}, "
        f"p99 {ms(pct(burst, 0.99))}"
    )
    ruled = []
    for i in range(calls):
        pod = pod_json(f"huge-{i}", "200")
        took, _ = call(ext.base, "/filter", {"Pod": pod, "NodeNames": names})
        ruled.append(took)
    print(
        f"[{mix}] ruled out (200 CPUs): p50 {ms(statistics.median(ruled))}, "
        f"p99 {ms(pct(ruled, 0.99))}"
    )
    longest = ms(max(FULL_GC)) if FULL_GC else "-"
    print(f"[{mix}] full garbage collections during the calls: {len(FULL_GC)} (longest {longest})")
    server.should_exit = True
    thread.join(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--specs", type=int, default=12)
    parser.add_argument("--mix", choices=("empty", "busy", "both"), default="both")
    args = parser.parse_args()
    instrument()
    for mix in ("empty", "busy") if args.mix == "both" else (args.mix,):
        run_mix(mix, args.nodes, args.calls, args.specs)


if __name__ == "__main__":
    main()
