"""Full run of the kubelet configuration fuzzer: random files, drop-ins and flags.

Every case must give an effective configuration (whose v1beta1 rendering decodes back to
it) or one clean one-line error; findings are printed with their input.

    python bench/fuzz_kubelet_config.py [--cases N] [--seed S]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.formats.kubelet_config import fuzzing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args()
    start = time.perf_counter()
    tally = fuzzing.run(args.cases, args.seed)
    elapsed = time.perf_counter() - start
    print(
        f"cases={tally.cases} accepted={tally.accepted} rejected={tally.rejected} "
        f"findings={len(tally.findings)} ({elapsed:.1f} s, {tally.cases / elapsed:.0f} cases/s)"
    )
    for what, detail in tally.findings[:20]:
        print(f"  input: {what}\n  {detail}")


if __name__ == "__main__":
    main()
