"""CPUSet at 4,096 CPUs: parse, format, union / intersection / difference, len, iteration.

Three shapes: one range (``0-4095``), every other CPU (2,048 singles, the worst case for the
list format) and a fixed pseudo-random half. Prints microseconds per call (best of 5 runs).

    python bench/bench_cpuset.py
"""

from __future__ import annotations

import timeit
from collections.abc import Callable

from cpumanager.core.cpuset import CPUSet

N = 4096


def _random_half() -> CPUSet:
    state, chosen = 12345, []
    for cpu in range(N):  # a small LCG keeps the set identical from run to run
        state = (state * 1103515245 + 12345) % (1 << 31)
        if state >> 30:
            chosen.append(cpu)
    return CPUSet(chosen)


def best_us(fn: Callable[[], object]) -> float:
    timer = timeit.Timer(fn)
    number, _ = timer.autorange()
    return min(timer.repeat(repeat=5, number=number)) / number * 1e6


def main() -> None:
    shapes = {
        "range 0-4095": CPUSet.range(0, N),
        "every other CPU": CPUSet(range(0, N, 2)),
        "random half": _random_half(),
    }
    other = CPUSet(range(1, N, 3))
    print(f"CPUSet at {N} CPUs (microseconds per call, best of 5)")
    header = f"{'shape':18} {'text':>7} {'parse':>9} {'format':>9} {'union':>7} {'and':>7}"
    header += f" {'minus':>7} {'len':>6} {'iterate':>9}"
    print(header)
    for name, cpus in shapes.items():
        text = str(cpus)
        row = [
            best_us(lambda text=text: CPUSet.parse(text)),
            best_us(lambda cpus=cpus: str(cpus)),
            best_us(lambda cpus=cpus: cpus | other),
            best_us(lambda cpus=cpus: cpus & other),
            best_us(lambda cpus=cpus: cpus - other),
            best_us(lambda cpus=cpus: len(cpus)),
            best_us(lambda cpus=cpus: list(cpus)),
        ]
        print(
            f"{name:18} {len(text):7} {row[0]:9.1f} {row[1]:9.1f} {row[2]:7.2f} {row[3]:7.2f}"
            f" {row[4]:7.2f} {row[5]:6.2f} {row[6]:9.1f}"
        )


if __name__ == "__main__":
    main()
