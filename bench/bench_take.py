"""Take-by-topology on a 2-socket, 256-thread machine with 8 and 16 NUMA nodes (issue 4).

Rows: NUMA nodes x (all CPUs free | fragmented) x (packed | distributed) x n. Fragmented
takes CPUs whose id is 0 or 3 modulo 7 (about 29% of the machine, unevenly spread over the
NUMA nodes). Prints microseconds per call (the fastest call's CPU time, index built
beforehand), the speed-up over the kubelet's own Go figures quoted in issues 4 and 12 where
they give one, and the cold figure: index build plus the first take, as for a machine seen
once (issue 12: <= 0.3 ms), then the slowest cold row.

    python bench/bench_take.py [--budget SECONDS]
"""

from __future__ import annotations

import argparse

from kubelet import best_call_us, figures, load_note

from cpumanager.core.allocation import StaticPolicyOptions, take_by_topology
from cpumanager.core.allocation.index import forget_index, topology_index
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.kept import KEEP
from cpumanager.core.topology import CPUTopology
from cpumanager.presets import synthetic

COUNTS = (1, 4, 16, 32, 64, 100)
# The kubelet's figures from the issue (ms per call): packed 0.9-7 ms at 8 NUMA nodes (the
# ratio uses its fastest figure, 0.9 ms, for every row: a lower bound on the speed-up),
# distributed 258 ms (n=64) and 4.7 s (n=100) at 16 NUMA nodes.
KUBELET_MS = {
    (8, "packed"): dict.fromkeys(COUNTS, 0.9),
    (16, "distributed"): {64: 258.0, 100: 4700.0},
}


def machine(numa_nodes: int) -> CPUTopology:
    return synthetic(
        sockets=2, numa_per_socket=numa_nodes // 2, cores_per_numa=128 // numa_nodes, threads=2
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--budget", type=float, default=0.1, help="seconds of calls per figure (at least 5)"
    )
    args = parser.parse_args()
    KEEP.on = False  # each call does the work: no answers kept from an earlier call
    print("answers kept across calls: off (core/kept.py): every call does the work")
    worst = (0.0, "")
    header = f"{'NUMA':>4} {'CPUs':<5} {'algorithm':<11} {'n':>4} {'us/call':>10}"
    print(f"{header} {'kubelet ms':>10} {'x faster':>9} {'cold us':>8}")
    cold_kubelet = figures()["take_distributed_8numa_fragmented_n4_ms"]["value"]
    for numa_nodes in (8, 16):
        topology = machine(numa_nodes)
        topology_index(topology)
        fragmented = CPUSet(c for c in topology.all_cpus if c % 7 not in (0, 3))
        for label, available in (("free", topology.all_cpus), ("frag", fragmented)):
            for algorithm in ("packed", "distributed"):
                options = StaticPolicyOptions(
                    distribute_cpus_across_numa=algorithm == "distributed"
                )
                for n in COUNTS:
                    hot_us = best_call_us(
                        lambda t=topology, a=available, n=n, o=options: take_by_topology(
                            t, a, n, o
                        ),
                        budget_s=args.budget,
                    )
                    reference = KUBELET_MS.get((numa_nodes, algorithm), {}).get(n)
                    if (numa_nodes, label, algorithm, n) == (8, "frag", "distributed", 4):
                        reference = cold_kubelet
                    ratio = f"{reference * 1000 / hot_us:9.0f}" if reference else f"{'-':>9}"
                    shown = f"{reference:10.2f}" if reference else f"{'-':>10}"

                    def cold(
                        t: CPUTopology = topology,
                        a: CPUSet = available,
                        n: int = n,
                        o: StaticPolicyOptions = options,
                    ) -> None:
                        forget_index(t)  # a machine never seen: index + take, nothing kept
                        take_by_topology(t, a, n, o)

                    row = f"{numa_nodes:>4} {label:<5} {algorithm:<11} {n:>4}"
                    cold_us = best_call_us(cold, budget_s=args.budget)
                    worst = max(worst, (cold_us, row.strip()))
                    print(f"{row} {hot_us:10.0f} {shown} {ratio} {cold_us:8.0f}")
                    topology_index(topology)
    print(f"slowest cold row: {worst[1]}, {worst[0]:.0f} us (issue 12: <= 300 us)")
    print(f"CPU time of the fastest call; {load_note()}")


if __name__ == "__main__":
    main()
