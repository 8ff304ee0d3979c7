"""Full run of the memory/device checkpoint fuzzer (issue 13): cases, outcomes, tracebacks.

Every case mutates a golden memory_manager_state or kubelet_internal_checkpoint and checks
that decode_any (and the re-encoded bytes), both restores, verify, rewrite and, every
``--cli-every`` cases, ``cpumanager state rewrite`` (exit 0 with a file, or exit 1 with one
line and no file) behave. Findings are printed with the input that caused them.

    python bench/fuzz_node_checkpoints.py [--cases N] [--seed S] [--cli-every K]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.checkpoint import fuzzing_nodes as fuzzing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=5_000)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--cli-every", type=int, default=10)
    args = parser.parse_args()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        tally = fuzzing.run(args.cases, args.seed, Path(tmp), cli_every=args.cli_every)
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
