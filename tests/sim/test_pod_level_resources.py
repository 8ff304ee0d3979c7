"""Simulator: a pod with pod-level resources runs in the shared pool (PodLevelResources on,
the 1.34 default) and is refused with the kubelet's reason when the gate is off."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cpumanager.sim.scenario import parse_scenario
from cpumanager.sim.simulate import SimulationReport, simulate

MACHINE = {"shape": "2s1n8c2t"}
KUBELET = {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0,16"}
POD = {
    "metadata": {"name": "plr"},
    "spec": {
        "resources": {"limits": {"cpu": "2", "memory": "1Gi"}},
        "containers": [{"name": "c", "resources": {"limits": {"cpu": "2", "memory": "1Gi"}}}],
    },
}


def run(kubelet: dict[str, Any]) -> SimulationReport:
    data = {"machine": MACHINE, "kubelet": kubelet, "events": [{"admit": POD}]}
    return simulate(parse_scenario(data, source="test", base=Path()))


def test_pod_level_resources_run_in_the_shared_pool() -> None:
    report = run(KUBELET)
    assert report.events[1].admitted
    assert report.final_entries == {}
    assert report.final_default == "0-31"


def test_the_gate_off_refuses_pod_level_resources() -> None:
    report = run({**KUBELET, "featureGates": {"PodLevelResources": False}})
    assert report.events[1].admitted is False
    assert report.events[1].error == {
        "type": "PodLevelResourcesNotSupported",
        "message": "PodLevelResources feature gate is disabled",
    }


def test_the_scenarios_release_sets_the_gate_default() -> None:
    """PodLevelResources is alpha (off) in 1.32-1.33 and beta (on) from 1.34."""
    for version, admitted in (("1.33", False), ("1.34", True)):
        data = {
            "machine": MACHINE,
            "kubelet": KUBELET,
            "kubeletVersion": version,
            "events": [{"admit": POD}],
        }
        report = simulate(parse_scenario(data, source="test", base=Path()))
        assert report.events[1].admitted is admitted, version


def test_the_scenarios_release_refuses_an_option_it_does_not_accept() -> None:
    kubelet = {**KUBELET, "cpuManagerPolicyOptions": {"distribute-cpus-across-numa": "true"}}
    data = {"machine": MACHINE, "kubelet": kubelet, "kubeletVersion": "1.30", "events": []}
    report = simulate(parse_scenario(data, source="test", base=Path()))
    assert report.events[0].admitted is False
    assert report.events[0].error is not None
    assert report.events[0].error["message"] == (
        "new static policy error: CPU Manager Policy Alpha-level Options not enabled, but "
        'option "distribute-cpus-across-numa" provided'
    )
