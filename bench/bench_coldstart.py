"""Cold start of short commands against a bare interpreter (issue 12: at most 5x).

Runs each command in fresh interpreters (``python -m cpumanager ...`` with this checkout's
sources), prints the best and median wall time, the ratio of the bests to a bare
``python -c pass``, and the time added over it; then the slowest imports of each command
from ``python -X importtime``. Commands: ``--version``, ``compute take --batch`` on empty
input, ``state verify`` on a small V2 file.

    python bench/bench_coldstart.py [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kubelet import load_note

SRC = Path(__file__).resolve().parent.parent / "src"
SMALL_STATE = (
    b'{"policyName":"static","defaultCpuSet":"0-3","entries":{"pod":{"app":"4-5"}},'
    b'"checksum":54744154}'
)


def wall_ms(command: list[str], repeat: int, stdin: bytes = b"") -> list[float]:
    """Wall milliseconds per run; CPU milliseconds (user + system) of each run go to CPU."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    times = []
    CPU.clear()
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, input=stdin, env=env)
        times.append((time.perf_counter() - start) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        used = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        CPU.append(used * 1000)
    return times


CPU: list[float] = []


def slowest_imports(command: list[str], stdin: bytes) -> list[tuple[int, str]]:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    trace = subprocess.run(
        [sys.executable, "-X", "importtime", *command[1:]],
        check=True,
        capture_output=True,
        input=stdin,
        env=env,
    ).stderr.decode()
    rows = []
    for line in trace.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit() and "cpumanager" in parts[2]:
            rows.append((int(parts[1]), parts[2].rstrip()))
    return sorted(rows, reverse=True)[:5]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    base = wall_ms([sys.executable, "-c", "pass"], args.repeat)
    base_cpu = min(CPU)
    print(
        f"{'python -c pass (baseline)':40} wall best {min(base):6.1f} ms"
        f"  median {statistics.median(base):6.1f} ms  CPU best {base_cpu:6.1f} ms"
    )
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp) / "cpu_manager_state"
        state.write_bytes(SMALL_STATE)
        commands = (
            ("cpumanager --version", ["--version"], b""),
            ("cpumanager compute take --batch < empty", ["compute", "take", "--batch"], b""),
            ("cpumanager state verify small-file", ["state", "verify", str(state)], b""),
        )
        for label, extra, stdin in commands:
            command = [sys.executable, "-m", "cpumanager", *extra]
            times = wall_ms(command, args.repeat, stdin)
            best = min(times)
            cpu = min(CPU)
            print(
                f"{label:40} wall best {best:6.1f} ms  median {statistics.median(times):6.1f} ms"
                f"  CPU best {cpu:6.1f} ms = {cpu / base_cpu:3.1f}x baseline"
                f" (wall {best / min(base):3.1f}x)"
            )
            for cumulative, name in slowest_imports(command, stdin):
                print(f"    {cumulative:8d} us  {name}")
    print(load_note())


if __name__ == "__main__":
    main()
