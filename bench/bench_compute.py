"""`cpumanager compute` overhead: microseconds per request line, and whole vector batches.

Per line: a take, a hints and a merge request answered by ``ComputeSession.answer_line``
(JSON parsing, validation, the building block, the answer) next to the bare library call,
so the protocol's own cost shows. Machines are named presets (cached after the first line)
and, for take, a full machine object on every line (cached by its JSON text).
Batches: the ported kubelet vector tables through ``cpumanager compute ... --batch`` in
process (click, JSON lines out), lines per second.

    python bench/bench_compute.py [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner

from cpumanager.cli.compute_protocol import ComputeSession
from cpumanager.cli.main import cli
from cpumanager.core.allocation.options import StaticPolicyOptions
from cpumanager.core.allocation.take import take_by_topology
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.hints.cpu_hints import generate_cpu_hints
from cpumanager.core.kept import KEEP
from cpumanager.core.merge.options import NUMAInfo
from cpumanager.core.merge.policies import merge
from cpumanager.formats.machine_format import topology_to_dict
from cpumanager.presets import get_preset

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MACHINE = "epyc-7763-2s-nps4"  # 256 CPUs, 8 NUMA nodes


def per_call(fn: Callable[[], object], repeat: int, inner: int = 50) -> float:
    """Best microseconds per call over ``repeat`` rounds of ``inner`` calls."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        best = min(best, (time.perf_counter() - start) / inner)
    return best * 1e6


def lines(repeat: int) -> None:
    session = ComputeSession()
    topology = get_preset(MACHINE)
    available = CPUSet.parse("0-255") - CPUSet(range(0, 256, 7))
    described = topology_to_dict(topology)
    providers = [
        {"cpu": [{"affinity": [n], "preferred": True} for n in range(4)]},
        {"gpu": [{"affinity": [1], "preferred": True}, {"affinity": [0, 1], "preferred": False}]},
    ]
    rows = [
        (
            "take n=16 (preset)",
            json.dumps({"machine": MACHINE, "available": str(available), "count": 16}),
            lambda: take_by_topology(topology, available, 16, StaticPolicyOptions()),
        ),
        (
            "take n=16 (machine object)",
            json.dumps({"machine": described, "available": str(available), "count": 16}),
            lambda: take_by_topology(topology, available, 16, StaticPolicyOptions()),
        ),
        (
            "hints n=16, 8 NUMA",
            json.dumps({"machine": MACHINE, "available": str(available), "count": 16}),
            lambda: generate_cpu_hints(topology, available=available, reusable=CPUSet(), count=16),
        ),
        (
            "merge 2 providers, 4 NUMA",
            json.dumps(
                {"numa_nodes": [0, 1, 2, 3], "policy": "restricted", "providers": providers}
            ),
            lambda: merge("restricted", NUMAInfo.of([0, 1, 2, 3]), []),
        ),
    ]
    kinds = ["take", "take", "hints", "merge"]
    print(f"{'request':<28} {'line µs':>10} {'library µs':>11} {'overhead':>9}")
    for (label, line, library), kind in zip(rows, kinds, strict=True):
        session.answer_line(kind, line)  # type: ignore[arg-type]  # warm the machine cache
        whole = per_call(lambda: session.answer_line(kind, line), repeat)  # type: ignore[arg-type]  # noqa: B023
        bare = per_call(library, repeat)
        print(f"{label:<28} {whole:>10.0f} {bare:>11.0f} {whole / bare:>8.1f}x")


def batches(repeat: int) -> None:
    from tests.cli.test_compute import (
        HINT_CASES,
        MERGE_CASES,
        TAKE_CASES,
        hint_request,
        merge_request,
        take_request,
    )

    tables = {
        "take": [json.dumps(take_request(c)) for c in TAKE_CASES],
        "hints": [json.dumps(hint_request(c)) for c in HINT_CASES],
        "merge": [json.dumps(merge_request(i, c)) for i, c in enumerate(MERGE_CASES)],
    }
    print(f"\n{'vector batch (CLI, in process)':<32} {'lines':>6} {'ms':>8} {'lines/s':>9}")
    for kind, requests in tables.items():
        text = "\n".join(requests) + "\n"
        best = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            CliRunner().invoke(cli, ["compute", kind, "--batch"], input=text)
            best = min(best, time.perf_counter() - start)
        print(f"{kind:<32} {len(requests):>6} {best * 1e3:>8.1f} {len(requests) / best:>9.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    KEEP.on = False  # each call does the work: no answers kept from an earlier call
    print("answers kept across calls: off (core/kept.py): every call does the work")
    lines(args.repeat)
    batches(args.repeat)


if __name__ == "__main__":
    main()
