"""Hint merging at scale: the fast merge against the kubelet's shapes (prints, asserts nothing).

Rows:
  (a) kubelet BenchmarkHintMergerManyHintsPerProvider: 8 NUMA nodes, 4 providers x 255 hints
  (b) one container, CPUs + 1 GPU + memory, on 8 / 16 / 32 / 64 NUMA nodes
  (c) CPU hints + merge for one container, 2-socket 256-thread machine, 8 and 16 NUMA nodes
  (d) GB200-like tray (34 NUMA nodes, 2 with CPUs, GPUs on those 2) admitting a 1-GPU pod
  (f) issue 12's explicit-list worst case: 16 NUMA nodes, fragmented, n = 16, CPU + 1 GPU
  (e) whole admissions through the simulator's node (CPU manager, device manager, static
      memory manager with hugepages; pod and container scope) on 8 / 16 / 32 / 64 NUMA
      nodes: a pod of CPUs + 1 GPU + memory + hugepages, after 10 pods already placed

Each row prints the best wall time of a few runs, the peak traced memory of one run, and the
exact merge's time where it can finish within about a minute (otherwise an extrapolation).

Run: python bench/bench_merge.py [--quick] [--only-explicit]
"""

from __future__ import annotations

import math
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

from kubelet import best_call_us, figures, load_note

from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.hints.cpu_hints import cpu_hint_source, generate_cpu_hints
from cpumanager.core.hints.hint import TopologyHint
from cpumanager.core.hints.source import CapacityHintSource
from cpumanager.core.kept import KEEP
from cpumanager.core.merge.exact import merge_exact
from cpumanager.core.merge.fast import merge_fast
from cpumanager.core.merge.options import NUMAInfo
from cpumanager.core.topology import CPUTopology
from cpumanager.presets import GIB, get_preset, synthetic

QUICK = "--quick" in sys.argv


def measure(fn: Callable[[], Any], repeats: int = 5) -> tuple[float, float, Any]:
    """(best seconds, peak MiB, result)."""
    tracemalloc.start()
    result = fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best, peak / (1 << 20), result


def row(label: str, seconds: float, peak: float, note: str = "") -> None:
    print(f"{label:<58} {seconds * 1e3:>10.2f} ms {peak:>8.2f} MiB  {note}")


def numa_of(topo: CPUTopology) -> NUMAInfo:
    rows = {
        node.id: [node.distances.get(other.id, 0) for other in topo.numa_nodes]
        for node in topo.numa_nodes
    }
    return NUMAInfo.of([node.id for node in topo.numa_nodes], rows)


# --- (a) ------------------------------------------------------------------------------------
def bench_many_hints() -> None:
    numa = NUMAInfo.of(list(range(8)))
    one = tuple(
        TopologyHint(NUMAMask.from_bits(bits), bits.bit_count() == 1) for bits in range(1, 256)
    )
    providers = [{"cpu": one}, {"memory": one}, {"hugepages": one}, {"gpu": one}]
    seconds, peak, result = measure(lambda: merge_fast("best-effort", numa, providers))
    # The exact merge walks 255^4 = 4.2e9 permutations; time 2 providers and extrapolate.
    two = providers[:2]
    exact_two, _, exact_result = measure(lambda: merge_exact("best-effort", numa, two), 1)
    fast_two = merge_fast("best-effort", numa, two)
    per_perm = exact_two / 255**2
    estimate = per_perm * 255**4
    row(
        "(a) 8 NUMA, 4 providers x 255 hints, fast",
        seconds,
        peak,
        f"hint={result[0].mask} preferred={result[0].preferred}; kubelet 258 s/op",
    )
    print(
        f"    exact: 2 providers {exact_two:.2f} s (same answer: {exact_result == fast_two}); "
        f"4 providers extrapolated {estimate / 3600:.1f} h -> not run"
    )
    # A non-preferred variant: nothing is preferred, so phase 2 does the work.
    flat = tuple(TopologyHint(hint.mask, False) for hint in one)
    flat_providers = [{"cpu": flat}, {"memory": flat}, {"hugepages": flat}, {"gpu": flat}]
    seconds, peak, result = measure(lambda: merge_fast("best-effort", numa, flat_providers))
    row("(a') same, no hint preferred (phase 2)", seconds, peak, f"hint={result[0].mask}")


# --- (b) ------------------------------------------------------------------------------------
def container_sources(
    topo: CPUTopology, *, cpus: int, gpu_nodes: list[int]
) -> list[dict[str, Any]]:
    """CPUs fragmented (every 3rd CPU taken), 1 GPU, 4 GiB of memory."""
    available = CPUSet(cpu for cpu in topo.all_cpus if cpu % 3)
    cpu = cpu_hint_source(topo, available=available, reusable=CPUSet(), count=cpus)
    universe = sum(1 << node.id for node in topo.numa_nodes)
    gpu = CapacityHintSource(
        universe=universe,
        free=dict.fromkeys(gpu_nodes, 1),
        need=1,
        preferred_size=1,
        unit="devices",
    )
    memory = CapacityHintSource(
        universe=universe,
        free={node.id: (node.memory_bytes or 0) // 2 for node in topo.numa_nodes},
        need=4 * GIB,
        preferred_size=1,
        unit="bytes",
    )
    return [{"cpu": cpu}, {"nvidia.com/gpu": gpu}, {"memory": memory}]


def bench_cpu_gpu_memory() -> None:
    for nodes in (8, 16, 32, 64):
        topo = synthetic(sockets=2, numa_per_socket=nodes // 2, cores_per_numa=4, threads=2)
        numa = numa_of(topo)
        last = nodes - 1
        for cpus, label in ((4, "1-node CPUs"), (20, "4-node CPUs")):

            def run(
                topo: CPUTopology = topo, cpus: int = cpus, numa: NUMAInfo = numa, last: int = last
            ) -> Any:
                sources = container_sources(topo, cpus=cpus, gpu_nodes=[last])
                return merge_fast("restricted", numa, sources, prefer_closest=True)

            seconds, peak, (hint, admit) = measure(run)
            note = f"hint={hint.mask} preferred={hint.preferred} admit={admit}"
            if nodes == 8:
                sources = container_sources(topo, cpus=cpus, gpu_nodes=[last])
                start = time.perf_counter()
                exact = merge_exact("restricted", numa, sources, prefer_closest=True)
                exact_s = time.perf_counter() - start
                note += f"; exact {exact_s:.2f} s, same={exact == (hint, admit)}"
            row(f"(b) {nodes:>2} NUMA, {label} + 1 GPU + memory", seconds, peak, note)


# --- (c) ------------------------------------------------------------------------------------
def bench_cpu_hints_and_merge() -> None:
    kubelet = {8: 6e-3, 16: 2.9}
    for nodes in (8, 16):
        topo = synthetic(sockets=2, numa_per_socket=nodes // 2, cores_per_numa=128 // nodes)
        numa = numa_of(topo)
        available = CPUSet(cpu for cpu in topo.all_cpus if cpu % 5)

        def fast(topo: CPUTopology = topo, numa: NUMAInfo = numa, av: CPUSet = available) -> Any:
            src = cpu_hint_source(topo, available=av, reusable=CPUSet(), count=40)
            return merge_fast("best-effort", numa, [{"cpu": src}])

        def exact(topo: CPUTopology = topo, numa: NUMAInfo = numa, av: CPUSet = available) -> Any:
            hints = generate_cpu_hints(topo, available=av, reusable=CPUSet(), count=40)
            return merge_exact("best-effort", numa, [{"cpu": hints}])

        seconds, peak, result = measure(fast)
        ex_seconds, ex_peak, ex_result = measure(exact, 1 if nodes > 8 else 3)
        ratio = kubelet[nodes] / seconds
        row(
            f"(c) {nodes:>2} NUMA, 256 CPUs: CPU hints + merge (implicit+fast)",
            seconds,
            peak,
            f"kubelet {kubelet[nodes] * 1e3:.0f} ms -> {ratio:.0f}x faster",
        )
        row(
            f"    {nodes:>2} NUMA, explicit hints + exact merge",
            ex_seconds,
            ex_peak,
            f"same answer: {ex_result == result}",
        )


# --- (d) ------------------------------------------------------------------------------------
def bench_gb200() -> None:
    topo = get_preset("gb200-tray")
    numa = numa_of(topo)
    universe = numa.default_bits

    def admit() -> Any:
        cpu = cpu_hint_source(topo, available=topo.all_cpus, reusable=CPUSet(), count=16)
        gpu = CapacityHintSource(
            universe=universe, free={0: 2, 1: 2}, need=1, preferred_size=1, unit="devices"
        )
        providers = [{"cpu": cpu}, {"nvidia.com/gpu": gpu}]
        return [
            merge_fast(policy, numa, providers) for policy in ("single-numa-node", "restricted")
        ]

    seconds, peak, results = measure(admit)
    notes = ", ".join(f"{h.mask} pref={h.preferred} admit={a}" for h, a in results)
    row("(d) GB200 tray, 34 NUMA, 16 CPUs + 1 GPU (2 policies)", seconds, peak, notes)


# --- (e) ------------------------------------------------------------------------------------
def _scenario_yaml(nodes: int, scope: str) -> str:
    gpus = {nodes // 2: 2, nodes - 1: 2}
    pods = []
    for index in range(11):
        gpu = ", nvidia.com/gpu: 1" if index == 10 else ""
        pods.append(
            f"  - admit: {{metadata: {{name: p{index}}}, spec: {{containers: [{{name: c, "
            f"resources: {{limits: {{cpu: '3', memory: 20Gi, hugepages-1Gi: 2Gi{gpu}}}}}}}]}}}}"
        )
    memory = "\n".join(f"  {n}: {{memory: 64Gi, hugepages-1Gi: 8Gi}}" for n in range(nodes))
    return f"""
name: bench-{nodes}
machine: {{shape: 2s{nodes // 2}n4c2t}}
kubelet:
  cpuManagerPolicy: static
  reservedSystemCPUs: "0"
  topologyManagerPolicy: restricted
  topologyManagerScope: {scope}
  topologyManagerPolicyOptions: {{max-allowable-numa-nodes: "64"}}
  memoryManagerPolicy: Static
  systemReserved: {{memory: 924Mi}}
  reservedMemory: [{{numaNode: 0, limits: {{memory: 1Gi}}}}]
devices:
  nvidia.com/gpu: {{{", ".join(f"{n}: {c}" for n, c in gpus.items())}}}
memory:
{memory}
events:
""" + "\n".join(pods)


def bench_node_admissions() -> None:
    from pathlib import Path

    import yaml

    from cpumanager.sim.scenario import parse_scenario
    from cpumanager.sim.simulate import simulate

    for nodes in (8, 16, 32, 64):
        for scope in ("container", "pod"):
            data = yaml.safe_load(_scenario_yaml(nodes, scope))
            scenario = parse_scenario(data, source=f"bench-{nodes}", base=Path("."))

            def run(scenario: Any = scenario) -> Any:
                return simulate(scenario)

            seconds, peak, report = measure(run, repeats=1 if QUICK else 3)
            last = report.events[-1]
            admitted = sum(1 for e in report.events[1:] if e.admitted)
            hint = last.containers.get("c", {}).get("hint")
            row(
                f"(e) {nodes:>2} NUMA, {scope:<9} scope, 11 admissions",
                seconds / 11,
                peak,
                f"per admission; {admitted}/11 admitted, last hint {hint}",
            )


# --- (f) ------------------------------------------------------------------------------------
def bench_explicit_worst_case() -> None:
    """Issue 12's slowest explicit-list row: 16 NUMA nodes, fragmented, n = 16.

    CPU hints as the kubelet lists them (every mask that fits, 65,519 here) and one GPU on
    node 15 (every mask containing it, preferred only alone): no preferred mask is common,
    so phase 2 tests masks such as {0, 1} against the 16,384 CPU hints containing them.
    """
    figure = figures()["merge_explicit_16numa_fragmented_n16_s"]
    topo = synthetic(sockets=2, numa_per_socket=8, cores_per_numa=8, threads=2)
    numa = numa_of(topo)
    available = CPUSet(cpu for cpu in topo.all_cpus if cpu % 7 not in (0, 3))
    start = time.perf_counter()
    cpu = generate_cpu_hints(topo, available=available, reusable=CPUSet(), count=16)
    hints_s = time.perf_counter() - start
    gpu = tuple(
        TopologyHint(NUMAMask.from_bits(bits), bits == 1 << 15) for bits in range(1 << 15, 1 << 16)
    )
    for policy in ("best-effort", "restricted"):

        def run(policy: str = policy) -> Any:
            return merge_fast(policy, numa, [{"cpu": cpu}, {"gpu": gpu}])

        seconds, peak, (hint, admit) = measure(run, 3)
        row(
            f"(f) 16 NUMA explicit lists, frag, n=16, {policy}",
            seconds,
            peak,
            f"hint={hint.mask} admit={admit}; {seconds / figure['low']:.3f}x the kubelet's "
            f"{figure['low']}-{figure['high']} s (listing the CPU hints: {hints_s:.2f} s more)",
        )
    # the CPU list alone: the kubelet's merge walks its 65,519 hints once
    for policy in ("best-effort", "restricted"):

        def cpu_only(policy: str = policy) -> Any:
            return merge_fast(policy, numa, [{"cpu": cpu}])

        us = best_call_us(cpu_only)
        hint, admit = cpu_only()
        print(
            f"{'(f) same, the CPU list alone, ' + policy:<58} {us / 1e3:>10.2f} ms"
            f"{'':>13}  hint={hint.mask} admit={admit} (thread CPU time, fastest call)"
        )


def main() -> None:
    KEEP.on = False  # each call does the work: no answers kept from an earlier call
    print("answers kept across calls: off (core/kept.py): every call does the work")
    print(load_note())
    print(f"{'case':<58} {'time':>13} {'peak':>12}  notes")
    if "--only-explicit" in sys.argv:
        bench_explicit_worst_case()
        return
    bench_explicit_worst_case()
    bench_many_hints()
    bench_cpu_gpu_memory()
    bench_cpu_hints_and_merge()
    bench_gb200()
    bench_node_admissions()


if __name__ == "__main__":
    main()
