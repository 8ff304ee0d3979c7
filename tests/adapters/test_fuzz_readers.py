"""A bounded slice of the sysfs-tree and configuration-source fuzzers (the full run:
bench/fuzz_hostile.py)."""

from __future__ import annotations

from pathlib import Path

from tests.adapters import source_fuzzing, sysfs_fuzzing


def test_damaged_sysfs_trees_are_read_or_refused(tmp_path: Path) -> None:
    tally = sysfs_fuzzing.run(25, seed=5, scratch=tmp_path)
    assert tally.findings == []
    assert tally.outcomes.get("read-with-warnings", 0) > 0


def test_damaged_configuration_sources_stay_inside_root(tmp_path: Path) -> None:
    tally = source_fuzzing.run(50, seed=5, scratch=tmp_path)
    assert tally.findings == []
    assert tally.outcomes.get("answered", 0) > 0
    assert tally.outcomes.get("refused", 0) > 0
