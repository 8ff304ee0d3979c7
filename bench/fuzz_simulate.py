"""Full run of the scenario fuzzer: random scenarios must simulate or fail with a typed error.

Prints the outcome counts, the time, and every finding (an exception that is not a
CpuManagerError) with the scenario that caused it.

    python bench/fuzz_simulate.py [--cases N] [--seed S]
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.sim import fuzzing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    start = time.perf_counter()
    outcomes: Counter[str] = Counter()
    for data in fuzzing.scenarios(args.seed, args.cases):
        try:
            outcomes[fuzzing.run_one(data)] += 1
        except Exception:  # a finding: any exception that is not a CpuManagerError
            outcomes["finding"] += 1
            print("FINDING", repr(data)[:2000])
            traceback.print_exc(limit=6)
    seconds = time.perf_counter() - start
    print(
        f"cases={args.cases} simulated={outcomes['ok']} refused={outcomes['refused']} "
        f"findings={outcomes['finding']} ({seconds:.1f} s, {args.cases / seconds:.0f} cases/s)"
    )


if __name__ == "__main__":
    main()
