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

* first: the first call after the pushes, which forks the fan-out's workers (their pages
  are copied as they and the server write to them, so this call pays for most copies);
* cold: pod specs never seen before (``--specs`` of them), every node ruled out or checked
  exactly; p50/p99 and nodes/s, the server's CPU time per call (its own and its workers'),
  how many exact checks ran in the workers, and where the server process's time goes (exact
  checks it ran itself; parsing the request and rendering the answer; the rest: waiting
  for the workers, the per-node loop, rule-outs, HTTP);
* burst: pods of one ReplicaSet (same spec, new uids), each assumed on the first node the
  filter passes (as a bind would assume it there), so each call re-checks only the state
  its predecessor changed;
* ruled out: a pod bigger than every node (the precomputed summaries).

    PYTHONPATH=src:. python bench/bench_extender.py [--nodes 5000] [--calls 30] [--specs 12]
        [--workers N]

The load average is printed with the figures: other processes on the machine take CPUs the
fan-out would use.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import resource
import statistics
import time
import urllib.request
from collections import Counter
from collections.abc import Callable
from typing import Any

from starlette.responses import JSONResponse
from tests.extender.conftest import TOKEN, start_extender
from tests.extender.nodes import busy_snapshot, make_snapshot, pod_json, snapshot_document

from cpumanager.extender import decide as decide_module
from cpumanager.extender import server as server_module
from cpumanager.extender.prepared import PreparedNode
from cpumanager.extender.server import ExtenderConfig
from cpumanager.extender.store import pod_shape
from cpumanager.formats.manifest import pod_from_manifest

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
    decide_module.judge = timed("exact", decide_module.judge)  # type: ignore[attr-defined]
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


def cpu_seconds() -> float:
    """CPU time of this process (the server runs in it) and of its workers once reaped, plus
    the workers' so far (read from /proc: they stay alive across calls)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    total = own.ru_utime + own.ru_stime
    for pid in worker_pids():
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def worker_pids() -> list[int]:
    """This process's children (the workers), whichever of its threads forked them."""
    pids: list[int] = []
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/children") as children:
                pids += [int(pid) for pid in children.read().split()]
        except OSError:
            continue
    return pids


def metric(base: str, sample: str) -> float:
    with urllib.request.urlopen(base + "/metrics", timeout=60) as page:
        for line in page.read().decode().splitlines():
            if line.startswith(sample + " "):
                return float(line.split()[-1])
    return 0.0


CHILD = 'cpumanager_extender_exact_checks_total{where="child"}'
HERE = 'cpumanager_extender_exact_checks_total{where="process"}'


def run_mix(mix: str, count: int, calls: int, specs: int, workers: int | None) -> None:
    options = {} if workers is None else {"workers": workers}
    config = ExtenderConfig(token=TOKEN, stale_after=1e9, **options)
    ext, server, thread = start_extender(config)
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
    took, _ = call(ext.base, "/filter", {"Pod": pod_json("first", "5"), "NodeNames": names})
    print(f"[{mix}] first call after the pushes (forks the workers): {ms(took)}")

    cold, exact, parse_render, cpu_used = [], [], [], []
    before = (metric(ext.base, CHILD), metric(ext.base, HERE))
    reasons: Counter[str] = Counter()
    first_spec = None
    for i in range(specs):
        cpu = SPEC_CPUS[i % len(SPEC_CPUS)]
        pod = pod_json(f"cold-{i}", cpu, f"{1000 + i}Mi")  # a memory size never asked before
        first_spec = first_spec or (cpu, f"{1000 + i}Mi")
        SPENT.clear()
        start_cpu = cpu_seconds()
        took, result = call(ext.base, "/filter", {"Pod": pod, "NodeNames": names})
        cpu_used.append(cpu_seconds() - start_cpu)
        cold.append(took)
        exact.append(SPENT["exact"])
        parse_render.append(SPENT["json"])
        reasons.update(text.split(":")[0] for text in result["FailedNodes"].values())
    share_exact = sum(exact) / sum(cold)
    share_json = sum(parse_render) / sum(cold)
    in_children = metric(ext.base, CHILD) - before[0]
    in_process = metric(ext.base, HERE) - before[1]
    print(
        f"[{mix}] cold ({specs} new specs): p50 {ms(statistics.median(cold))}, "
        f"p99 {ms(pct(cold, 0.99))}, {count / statistics.median(cold):.0f} nodes/s; "
        f"CPU p50 {ms(statistics.median(cpu_used))} a call (server and workers); exact checks in "
        f"workers {in_children:.0f}, in the server {in_process:.0f} "
        f"({in_children / max(1, in_children + in_process):.0%} in workers); server time in its "
        f"own exact checks {share_exact:.0%}, parsing+rendering JSON {share_json:.0%}, rest "
        f"(waiting for workers, per-node loop, rule-outs, HTTP) "
        f"{1 - share_exact - share_json:.0%}"
    )
    print(f"[{mix}] cold outcomes over all specs: {dict(reasons.most_common())}")

    assert first_spec is not None
    burst = []
    for i in range(calls):
        pod = pod_json(f"rs-{i}", *first_spec)
        took, answer = call(ext.base, "/filter", {"Pod": pod, "NodeNames": names})
        burst.append(took)
        if answer["NodeNames"]:  # the bind's assumption, without an API server
            parsed = pod_from_manifest({"kind": "Pod", "apiVersion": "v1", **pod})
            ext.store.assume(answer["NodeNames"][0], parsed, pod_shape(pod["spec"]), 30)
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
    parser.add_argument("--workers", type=int, default=None, help="default: the usable CPUs")
    args = parser.parse_args()
    instrument()
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    for mix in ("empty", "busy") if args.mix == "both" else (args.mix,):
        run_mix(mix, args.nodes, args.calls, args.specs, args.workers)
        print(f"[{mix}] load average: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
