"""Full run of the checkpoint mutation fuzzer (issue 3): prints cases, outcomes, tracebacks.

Every case mutates a valid kubelet file and checks that the codec, restore, diagnose, the
store (no save over a file that failed to load, no stray file) and, every ``--cli-every``
cases, ``cpumanager state rewrite`` (exit 0 with a valid file, or exit 1 with one line and
no file) behave. Findings are printed with the input that caused them.

    python bench/fuzz_checkpoint.py [--cases N] [--seed S] [--cli-every K]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.checkpoint import fuzzing


def main(
    run: Callable[..., fuzzing.Tally] = fuzzing.run,
    *,
    default_cases: int = 20_000,
    doc: str = __doc__,
) -> None:
    """Parse the flags, run ``run`` and print the figures (shared by the checkpoint fuzzers)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--cases", type=int, default=default_cases)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--cli-every", type=int, default=10)
    args = parser.parse_args()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        tally = run(args.cases, args.seed, Path(tmp), cli_every=args.cli_every)
    elapsed = time.perf_counter() - start
    print(
        f"cases={tally.cases} accepted={tally.accepted} rejected={tally.rejected} "
        f"cli_runs={tally.cli_runs} tracebacks={len(tally.tracebacks)} "
        f"({elapsed:.1f} s, {tally.cases / elapsed:.0f} cases/s)"
    )
    for data, what in tally.tracebacks[:20]:
        print(f"  {what}\n    input: {data!r}")


if __name__ == "__main__":
    main()
