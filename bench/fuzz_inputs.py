"""Full run of the input fuzzer: workload manifests, machine files, kubelet configurations.

Every mutated file must load or fail with a one-line CpuManagerError. Prints the outcome
counts per kind, the time, and every finding (any other exception) with its input.

    python bench/fuzz_inputs.py [--cases N] [--seed S]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.adapters import input_fuzzing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    outcomes: Counter[str] = Counter()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch) / "in"
        for kind, data in input_fuzzing.cases(args.seed, args.cases):
            try:
                outcomes[f"{kind} {input_fuzzing.run_one(kind, data, directory)}"] += 1
            except Exception:  # a finding: anything but a one-line CpuManagerError
                outcomes["finding"] += 1
                print("FINDING", kind, repr(data[:2000]))
                traceback.print_exc(limit=6)
    seconds = time.perf_counter() - start
    counts = " ".join(f"{key.replace(' ', ':')}={value}" for key, value in sorted(outcomes.items()))
    print(f"cases={args.cases} {counts} internal_errors={outcomes['finding']} ({seconds:.1f} s)")


if __name__ == "__main__":
    main()
