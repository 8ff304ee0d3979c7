"""The mutation fuzzer finds no traceback and no written file (bounded slice + slow run)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.checkpoint import fuzzing


def test_fuzz_slice(tmp_path: Path) -> None:
    tally = fuzzing.run(600, seed=1, directory=tmp_path, cli_every=20)
    assert tally.tracebacks == []
    assert tally.accepted > 0
    assert tally.rejected > 0


@pytest.mark.slow
def test_fuzz_ten_thousand(tmp_path: Path) -> None:
    tally = fuzzing.run(10_000, seed=2, directory=tmp_path, cli_every=10)
    assert tally.cases == 10_000
    assert tally.tracebacks == []


def test_mutations_are_deterministic() -> None:
    assert list(fuzzing.cases(20, seed=5)) == list(fuzzing.cases(20, seed=5))
