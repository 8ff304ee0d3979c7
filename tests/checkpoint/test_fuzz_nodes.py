"""The memory/device mutation fuzzer finds no traceback (bounded slice; full run in bench/)."""

from __future__ import annotations

from pathlib import Path

from tests.checkpoint import fuzzing_nodes


def test_fuzz_slice(tmp_path: Path) -> None:
    tally = fuzzing_nodes.run(400, seed=3, directory=tmp_path, cli_every=25)
    assert tally.tracebacks == []
    assert tally.accepted > 0
    assert tally.rejected > 0


def test_mutations_are_deterministic() -> None:
    assert list(fuzzing_nodes.cases(20, seed=5)) == list(fuzzing_nodes.cases(20, seed=5))
