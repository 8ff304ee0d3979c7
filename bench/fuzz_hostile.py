"""Full run of the hostile-input fuzzers of issue 21: snapshots, extender requests, kubelet
configuration sources on disk, sysfs trees.

Every case must end in an answer or a one-line CpuManagerError (an HTTP status under 500,
with a one-line body, for requests); a configuration read from outside --root, or a reader
that does not answer within its time limit, is a finding too. Prints, per fuzzer, the
outcome counts, the findings (with their input) and the time.

    python bench/fuzz_hostile.py [--snapshots N] [--requests N] [--sources N] [--sysfs N]
                                 [--seed S]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.adapters import source_fuzzing, sysfs_fuzzing
from tests.extender import fuzzing


def _scratch() -> tempfile.TemporaryDirectory[str]:
    shm = "/dev/shm"  # tmpfs when there is one: the tree fuzzers write many small files
    return tempfile.TemporaryDirectory(dir=shm if os.access(shm, os.W_OK) else None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshots", type=int, default=30_000)
    parser.add_argument("--requests", type=int, default=40_000)
    parser.add_argument("--sources", type=int, default=20_000)
    parser.add_argument("--sysfs", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=21)
    args = parser.parse_args()
    runs = {
        "snapshots": lambda: fuzzing.run_snapshots(args.snapshots, args.seed),
        "requests": lambda: fuzzing.run_requests(args.requests, args.seed),
    }
    total_cases = total_findings = 0
    total_seconds = 0.0
    with _scratch() as scratch:
        runs["sources"] = lambda: source_fuzzing.run(args.sources, args.seed, Path(scratch))
        runs["sysfs"] = lambda: sysfs_fuzzing.run(args.sysfs, args.seed, Path(scratch))
        for name, run in runs.items():
            start = time.perf_counter()
            tally = run()
            seconds = time.perf_counter() - start
            total_cases += tally.cases
            total_findings += len(tally.findings)
            total_seconds += seconds
            counts = " ".join(f"{k}={v}" for k, v in sorted(tally.outcomes.items()))
            print(
                f"{name}: cases={tally.cases} internal_errors={len(tally.findings)} "
                f"({seconds:.1f} s) {counts}",
                flush=True,
            )
            for what, why in tally.findings[:10]:
                print(f"  FINDING {what[:300]}\n  {why[-1200:]}")
    print(f"total: cases={total_cases} internal_errors={total_findings} ({total_seconds:.1f} s)")


if __name__ == "__main__":
    main()
