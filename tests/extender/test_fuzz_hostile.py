"""A bounded slice of the snapshot and request fuzzers (the full run: bench/fuzz_hostile.py)."""

from __future__ import annotations

from tests.extender import fuzzing


def test_mutated_snapshots_are_answered_or_refused_in_one_line() -> None:
    tally = fuzzing.run_snapshots(150, seed=5)
    assert tally.findings == []
    assert tally.outcomes.get("judged", 0) > 0  # the mutations also reach admission
    assert tally.outcomes.get("refused", 0) > 0


def test_hostile_requests_never_get_a_500() -> None:
    tally = fuzzing.run_requests(200, seed=5)
    assert tally.findings == []
    assert tally.outcomes.get("filter:200", 0) > 0
    assert tally.outcomes.get("snapshot:200", 0) > 0
