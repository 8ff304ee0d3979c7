"""Random KubeletConfiguration files through the kubelet-release reader: a bounded slice of
the differential run (bench/diff_kubelet_config.py compares each with the kubelet's own
code; here, without it, every file must give a configuration or the kubelet's refusal at a
named stage, never another error)."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

from cpumanager.adapters.kubelet_config_file import load_effective_config
from cpumanager.errors import KubeletConfigInvalidError
from tests.formats.kubelet_config.kubelet_files import generate


def _stage(path: Path) -> str:
    """``ok``, or the stage that refuses (any other exception fails the test)."""
    try:
        load_effective_config(config=path, release=(1, 32))
    except KubeletConfigInvalidError as err:
        refusal = err
    else:
        return "ok"
    empty = [message for message in refusal.errors if not message]
    return refusal.stage if refusal.errors and not empty else f"bad refusal {refusal!r}"


def test_random_files_load_or_are_refused_at_a_stage(tmp_path: Path) -> None:
    rng = random.Random(32)
    stages: Counter[str] = Counter()
    for index in range(300):
        path = tmp_path / f"c{index}.yaml"
        path.write_text(generate(rng), encoding="utf-8")
        stages[_stage(path)] += 1
    assert set(stages) == {"ok", "loads", "validates", "starts"}, stages
    # the generator reaches every stage (seed 32's first 300 files)
    assert min(stages.values()) > 10, stages
