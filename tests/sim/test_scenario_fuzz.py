"""Malformed and random scenarios never end in anything but a typed, one-line error."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from cpumanager.errors import CpuManagerError
from cpumanager.sim.scenario import parse_scenario
from cpumanager.sim.simulate import simulate
from tests.sim import fuzzing

_CASES = 3000 if os.environ.get("CPUMANAGER_SLOW") else 300


def test_random_scenarios_simulate_or_fail_typed() -> None:
    outcomes = [fuzzing.run_one(data) for data in fuzzing.scenarios(seed=7, count=_CASES)]
    assert "ok" in outcomes
    assert "refused" in outcomes


@pytest.mark.parametrize(
    ("resources", "message"),
    [
        ({"devices": {"gpu": {"x": 1}}}, "devices.gpu: 'x' is not a NUMA node id"),
        ({"devices": {"gpu": {0: "many"}}}, "devices.gpu.0: 'many' is not a device count"),
        ({"devices": {"gpu": {0: -1}}}, "is not a device count"),
        ({"devices": {"gpu": {0: 10**9}}}, "devices on one node (at most"),
        ({"devices": {"gpu": [{"id": "a", "numa": ["z"]}]}}, "devices.gpu[0].numa: 'z'"),
        ({"memory": {"x": {"memory": "1Gi"}}}, "memory: 'x' is not a NUMA node id"),
        ({"memory": {0: {"cpu": "1"}}}, "memory.0.cpu: only memory and hugepages"),
        ({"memory": {0: {"memory": True}}}, "memory.0.memory: expected a quantity"),
    ],
)
def test_bad_device_and_memory_tables_are_named(resources: dict[str, Any], message: str) -> None:
    data = {"machine": {"shape": "2s1n4c2t"}, **resources}
    with pytest.raises(CpuManagerError) as caught:
        simulate(parse_scenario(data, source="t", base=Path(".")))
    assert message in str(caught.value)
