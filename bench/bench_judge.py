"""The extender's exact check on busy nodes: microseconds per ``judge`` (issue 15).

Nodes are built as ``bench_extender.py`` builds its busy mix (the same five shapes, 0 to 14
random running pods, seed 15) and prepared once each (``extender.prepared.prepare``). Each
round takes new pod objects for 1, 2, 3, 4, 6, 8 CPUs and 500m (never seen before, as in a
cold filter call) and, for every node the summary does not rule out, calls
``judge(prepared, pod)`` once per admission key, as the filter does. Printed: microseconds
per judge (median over rounds, wall and process CPU time), per pod and in all, and for the
first round alone (the per-node tables built on first use, and the answers kept across
nodes (take_by_topology's, the CPU hints', the short merges') starting empty: a fresh
extender). Then the
verdicts of a wider set, by reason, with a digest of them in full (words included), so a
change that alters one shows: these pods, the same with two containers each (some
refused), each alone and after another pod assumed on the node.

    PYTHONPATH=src:. python bench/bench_judge.py [--nodes 1000 --rounds 5] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import pstats
import random
import statistics
import time
from collections import Counter
from typing import Any

from tests.extender.nodes import busy_snapshot, pod_json

from cpumanager.core.allocation.index import topology_index
from cpumanager.core.hints.cpu_hints import mask_table
from cpumanager.core.merge import policies
from cpumanager.core.workload import Pod
from cpumanager.extender.judge import judge
from cpumanager.extender.prepared import PreparedNode, prepare
from cpumanager.extender.summary import pod_facts, rule_out
from cpumanager.formats.manifest import pod_from_manifest

SHAPES: list[dict[str, Any]] = [  # bench_extender.py's
    {"cores_per_numa": 4},
    {"cores_per_numa": 8, "topology_policy": "restricted"},
    {"cores_per_numa": 8, "numa_per_socket": 2, "sockets": 2},
    {"cores_per_numa": 16, "topology_policy": "best-effort"},
    {"cores_per_numa": 6, "options": {"full-pcpus-only": "true"}},
]
POD_CPUS = ("1", "2", "3", "4", "6", "8", "500m")


def build(count: int) -> list[PreparedNode]:
    rng = random.Random(15)
    nodes = []
    for index in range(count):
        shape = SHAPES[index % len(SHAPES)]
        name = f"node-{index:05d}"
        nodes.append(prepare(busy_snapshot(name, rng, pods=rng.randint(0, 14), **shape)))
    return nodes


def checked(nodes: list[PreparedNode], pod: Pod) -> list[PreparedNode]:
    """The nodes a cold filter call would judge: not ruled out, one per admission key."""
    facts = pod_facts(pod)
    seen: set[str] = set()
    found = []
    for node in nodes:
        if node.key in seen or rule_out(node.summary, facts, runs_here=False) is not None:
            continue
        seen.add(node.key)
        found.append(node)
    return found


def forget_kept_answers(nodes: list[PreparedNode]) -> None:
    """Empty the answers kept across nodes (take_by_topology's and the CPU hints' per
    machine, the short merges'), filled while the nodes were built: the first round starts
    without them."""
    for node in nodes:
        getattr(topology_index(node.base.topology), "answers", {}).clear()
        getattr(mask_table(node.base.topology), "answers", {}).clear()
    getattr(policies, "_SMALL_ANSWERS", {}).clear()


def new_pods(round_no: int) -> dict[str, Pod]:
    return {
        cpu: pod_from_manifest(pod_json(f"bench-{round_no}-{cpu}", cpu, f"{1000 + round_no}Mi"))
        for cpu in POD_CPUS
    }


def one_round(nodes: list[PreparedNode], round_no: int) -> dict[str, tuple[int, float, float]]:
    """Per pod: judges, wall seconds, process CPU seconds."""
    found = {}
    for cpu, pod in new_pods(round_no).items():
        targets = checked(nodes, pod)
        wall, used = time.perf_counter(), time.process_time()
        for node in targets:
            judge(node, pod)
        found[cpu] = (
            len(targets),
            time.perf_counter() - wall,
            time.process_time() - used,
        )
    return found


def verdicts(nodes: list[PreparedNode]) -> tuple[Counter[str], str]:
    """Outcomes by reason, and a digest of every verdict in full (words included)."""
    counts: Counter[str] = Counter()
    digest = hashlib.sha256()
    # and two containers each: refusals the summary leaves to the exact check
    pairs = [pod_from_manifest(pod_json(f"pair-{cpu}", cpu, containers=2)) for cpu in POD_CPUS]
    pods = [*new_pods(-1).values(), *pairs]
    assumed = [pod_from_manifest(pod_json("assumed", "2"))]
    for pod in pods:
        for node in checked(nodes, pod):
            verdict = judge(node, pod)
            counts[verdict.reason or "admitted"] += 1
            digest.update(repr(verdict).encode())
            after = judge(node, pod, assumed=assumed)  # another pod assumed there first
            counts[(after.reason or "admitted") + " (after an assumed pod)"] += 1
            digest.update(repr(after).encode())
    return counts, digest.hexdigest()[:16]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--profile", action="store_true", help="cProfile one round")
    parser.add_argument("--sort", default="tottime")
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()
    start = time.perf_counter()
    nodes = build(args.nodes)
    print(f"{len(nodes)} busy nodes prepared in {time.perf_counter() - start:.0f} s")
    forget_kept_answers(nodes)
    first = one_round(nodes, 0)  # builds the per-node tables, fills the kept answers
    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        one_round(nodes, 1)
        profiler.disable()
        pstats.Stats(profiler).sort_stats(args.sort).print_stats(args.top)
        return
    rounds = [one_round(nodes, r + 1) for r in range(args.rounds)]
    print(f"us per judge, median of {args.rounds} rounds (wall / process CPU)")
    total_wall, total_cpu = [], []
    for cpu in POD_CPUS:
        count = rounds[0][cpu][0]
        wall = statistics.median(r[cpu][1] for r in rounds) / max(1, count) * 1e6
        used = statistics.median(r[cpu][2] for r in rounds) / max(1, count) * 1e6
        print(f"  pod {cpu:>4} CPU: {count:5d} judges  {wall:7.1f} / {used:7.1f} us")
    for r in rounds:
        judges = sum(v[0] for v in r.values())
        total_wall.append(sum(v[1] for v in r.values()) / judges * 1e6)
        total_cpu.append(sum(v[2] for v in r.values()) / judges * 1e6)
    judges = sum(v[0] for v in rounds[0].values())
    print(
        f"all {judges} judges: {statistics.median(total_wall):.1f} us wall, "
        f"{statistics.median(total_cpu):.1f} us CPU per judge (median of rounds); "
        f"best round {min(total_cpu):.1f} us CPU"
    )
    judges = sum(v[0] for v in first.values())
    print(
        f"first round ({judges} judges; per-node tables built, no answers kept yet): "
        f"{sum(v[1] for v in first.values()) / judges * 1e6:.1f} us wall, "
        f"{sum(v[2] for v in first.values()) / judges * 1e6:.1f} us CPU per judge"
    )
    outcomes, digest = verdicts(nodes)
    print("verdicts:", ", ".join(f"{k} x{v}" for k, v in sorted(outcomes.items())))
    print(f"digest of every verdict: {digest}")


if __name__ == "__main__":
    main()
