"""Cold start of ``cpumanager --version`` (goal: 150 ms or less), and what it imports.

Runs the command in fresh interpreters, prints best and median wall time next to a bare
``python -c pass`` baseline, then the slowest imports from ``python -X importtime``.

    python bench/bench_coldstart.py [--repeat N]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time


def wall_ms(command: list[str], repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        times.append((time.perf_counter() - start) * 1000)
    return times


def show(label: str, times: list[float]) -> None:
    print(f"{label:42} best {min(times):6.1f} ms   median {statistics.median(times):6.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    show("python -c pass (baseline)", wall_ms([sys.executable, "-c", "pass"], args.repeat))
    module = [sys.executable, "-m", "cpumanager", "--version"]
    show("python -m cpumanager --version", wall_ms(module, args.repeat))
    script = shutil.which("cpumanager")
    if script is not None:
        show("cpumanager --version (console script)", wall_ms([script, "--version"], args.repeat))
    else:
        print("cpumanager console script not on PATH; install with pip install -e .")
    trace = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "cpumanager", "--version"],
        check=True,
        capture_output=True,
        text=True,
    ).stderr
    rows = []
    for line in trace.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]), parts[2].rstrip()))
    print("slowest imports (cumulative microseconds):")
    for cumulative, name in sorted(rows, reverse=True)[:8]:
        print(f"  {cumulative:8d}  {name}")


if __name__ == "__main__":
    main()
