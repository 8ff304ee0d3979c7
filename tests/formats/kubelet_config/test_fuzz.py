"""Bounded run of the configuration fuzzer (the full run is bench/fuzz_kubelet_config.py)."""

from __future__ import annotations

from tests.formats.kubelet_config import fuzzing


def test_random_sources_give_a_configuration_or_one_clean_error() -> None:
    tally = fuzzing.run(400, seed=13)
    assert tally.findings == []
    assert tally.accepted > 20  # the generator reaches valid configurations too
    assert tally.rejected > 20
