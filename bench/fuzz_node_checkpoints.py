"""Full run of the memory/device checkpoint fuzzer (issue 13): cases, outcomes, tracebacks.

Every case mutates a golden memory_manager_state or kubelet_internal_checkpoint and checks
that decode_any (and the re-encoded bytes), both restores, verify, rewrite and, every
``--cli-every`` cases, ``cpumanager state rewrite`` (exit 0 with a file, or exit 1 with one
line and no file) behave. Findings are printed with the input that caused them.

    python bench/fuzz_node_checkpoints.py [--cases N] [--seed S] [--cli-every K]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.fuzz_checkpoint import main
from tests.checkpoint import fuzzing_nodes

if __name__ == "__main__":
    main(fuzzing_nodes.run, default_cases=5_000, doc=__doc__)
