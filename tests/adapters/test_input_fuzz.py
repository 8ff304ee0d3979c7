"""A bounded slice of the input fuzzer (bench/fuzz_inputs.py runs the full one)."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from tests.adapters import input_fuzzing

_CASES = 3000 if os.environ.get("CPUMANAGER_SLOW") else 300


def test_mutated_inputs_load_or_fail_typed_on_one_line(tmp_path: Path) -> None:
    outcomes: Counter[str] = Counter()
    for kind, data in input_fuzzing.cases(seed=11, count=_CASES):
        outcomes[f"{kind}:{input_fuzzing.run_one(kind, data, tmp_path / 'in')}"] += 1
    for kind in input_fuzzing.KINDS:  # the fuzzer reaches both outcomes for every kind
        assert outcomes[f"{kind}:ok"] > 0, outcomes
        assert outcomes[f"{kind}:refused"] > 0, outcomes
