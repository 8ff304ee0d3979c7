"""Full run of the scenario fuzzer: random scenarios must simulate or fail with a typed error.

Prints the outcome counts, the time, and every finding (an exception that is not a
CpuManagerError) with the scenario that caused it.

    python bench/fuzz_simulate.py [--cases N] [--seed S] [--dump FILE]

``--dump`` writes one JSON line per scenario (the ``--explain`` report, or the typed error)
so two versions of the code can be compared line by line.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.sim import fuzzing

from cpumanager.errors import CpuManagerError
from cpumanager.sim.scenario import parse_scenario
from cpumanager.sim.simulate import simulate


def report_line(data: dict[str, object]) -> str:
    """The scenario's ``--explain`` JSON report, or its typed error, as one line."""
    try:
        body: object = simulate(parse_scenario(data, source="fuzz", base=Path("."))).to_json(
            explain=True
        )
    except CpuManagerError as err:
        body = {"error": type(err).__name__, "message": str(err)}
    return json.dumps(body, sort_keys=True, default=str)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--dump", type=Path, help="write each report as a JSON line")
    args = parser.parse_args()
    if args.dump:
        with args.dump.open("w", encoding="utf-8") as out:
            for data in fuzzing.scenarios(args.seed, args.cases):
                out.write(report_line(data) + "\n")
        print(f"cases={args.cases} written to {args.dump}")
        return
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
