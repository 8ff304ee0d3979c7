"""A scenario's device and memory tables become typed node resources when it is parsed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cpumanager.core.devices import Device
from cpumanager.errors import ScenarioError
from cpumanager.manager.node import NodeResources
from cpumanager.sim.resources import parse_devices, parse_memory
from cpumanager.sim.scenario import parse_scenario
from cpumanager.sim.simulate import simulate

GI = 2**30


def parse(**extra: Any) -> NodeResources:
    data = {"machine": {"shape": "2s1n4c2t"}, **extra}
    return parse_scenario(data, source="t", base=Path()).resources


def test_tables_are_parsed_with_the_scenario() -> None:
    resources = parse(
        devices={"nvidia.com/gpu": {0: 1, "1": 2}, "fpga": [{"id": "f", "numa": [0, 1]}]},
        memory={0: {"memory": "64Gi", "hugepages-1Gi": "2Gi"}, "1": {"memory": "32Gi"}},
    )
    assert resources.devices == {
        "nvidia.com/gpu": (
            Device("gpu-0-0", (0,)),
            Device("gpu-1-0", (1,)),
            Device("gpu-1-1", (1,)),
        ),
        "fpga": (Device("f", (0, 1)),),
    }
    assert resources.memory == {0: 64 * GI, 1: 32 * GI}
    assert resources.hugepages == {0: {"hugepages-1Gi": 2 * GI}}


def test_no_tables_mean_no_devices_and_the_machines_memory() -> None:
    assert parse() == NodeResources()
    assert parse_memory({}) == (None, {})


@pytest.mark.parametrize(
    ("devices", "message"),
    [
        ({"gpu": 3}, "devices.gpu: give {node: count} or a list of {id, numa}"),
        ({"gpu": ["x"]}, "devices.gpu[0]: expected {id, numa: [nodes]}"),
        ({"gpu": {0: True}}, "devices.gpu.0: True is not a device count"),
    ],
)
def test_bad_device_tables_are_refused_at_parse_time(devices: Any, message: str) -> None:
    with pytest.raises(ScenarioError, match="^" + message.replace("[", r"\[").replace("{", r"\{")):
        parse_devices(devices)
    with pytest.raises(ScenarioError):
        parse(devices=devices)  # before any simulation runs


def test_devices_survive_a_restart() -> None:
    gpu = {"resources": {"limits": {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "1"}}}
    doc = {
        "machine": {"shape": "2s1n4c2t"},
        "kubelet": {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0"},
        "devices": {"nvidia.com/gpu": {1: 2}},
        "events": [
            {"admit": {"metadata": {"name": n}, "spec": {"containers": [{"name": "c", **gpu}]}}}
            for n in ("a", "b")
        ]
        + [{"exit": "a"}, {"restart": {"running": ["b"]}}],
    }
    events = simulate(parse_scenario(doc, source="t", base=Path())).events
    assert events[2].containers["c"]["devices"] == {"nvidia.com/gpu": ["gpu-1-1"]}
    # b keeps its GPU across the restart (a fresh device state would hand it gpu-1-0).
    assert events[4].containers["b/c"]["devices"] == {"nvidia.com/gpu": ["gpu-1-1"]}
