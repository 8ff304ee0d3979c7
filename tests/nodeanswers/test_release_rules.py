"""A node is restored and judged by its own kubelet release's rules (the snapshot's
``kubeletVersion``): options and gates that release refuses stop it, and its managers see
that release's gate defaults (PodLevelResources: alpha and off in 1.32-1.33, beta and on
from 1.34)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from cpumanager.core.versions import parse_release
from cpumanager.core.workload import Pod
from cpumanager.errors import ConfigError, CpuManagerError
from cpumanager.extender.judge import admits, judge
from cpumanager.extender.prepared import prepare
from cpumanager.formats.manifest import pod_from_manifest
from cpumanager.nodeanswers.restore import restore_node
from cpumanager.nodeanswers.whatif import what_if
from tests.extender.nodes import make_snapshot, pod_json


def level_pod(uid: str) -> Pod:
    doc = pod_json(uid, "2")
    doc["spec"]["resources"] = {"limits": {"cpu": "2", "memory": "1Gi"}}
    return pod_from_manifest({"kind": "Pod", "apiVersion": "v1", **doc})


@pytest.mark.parametrize(
    ("version", "admitted"), [("v1.33.4", False), ("v1.34.0", True), (None, True)]
)
def test_pod_level_resources_follow_the_recorded_release(
    version: str | None, admitted: bool
) -> None:
    snapshot = replace(make_snapshot("n"), kubelet_version=version)
    verdict = what_if(snapshot, [level_pod("p")]).verdicts[-1]
    assert verdict.admitted is admitted
    if not admitted:
        assert verdict.reason == "PodLevelResourcesNotSupported"
        assert verdict.message == "PodLevelResources feature gate is disabled"
    # the extender's two paths agree with the what-if
    assert admits(snapshot, level_pod("p")).admitted is admitted
    assert judge(prepare(snapshot), level_pod("p")).admitted is admitted


def test_an_explicit_release_overrides_the_recorded_one() -> None:
    snapshot = replace(make_snapshot("n"), kubelet_version="v1.33.4")
    answer = what_if(snapshot, [level_pod("p")], release=parse_release("1.35"))
    assert answer.verdicts[-1].admitted


def test_a_gate_set_in_the_configuration_wins_over_the_release_default() -> None:
    snapshot = make_snapshot("n", config={"featureGates": {"PodLevelResources": True}})
    snapshot = replace(snapshot, kubelet_version="1.33")
    assert what_if(snapshot, [level_pod("p")]).verdicts[-1].admitted


def test_an_option_the_release_refuses_stops_the_node() -> None:
    """distribute-cpus-across-numa was alpha until 1.32: without CPUManagerPolicyAlphaOptions
    a 1.30 kubelet does not start; the extender gives the node NodeNotRestorable."""
    snapshot = make_snapshot("n", options={"distribute-cpus-across-numa": "true"})
    restore_node(snapshot)  # the newest release: beta, on by default
    old = replace(snapshot, kubelet_version="v1.30.1")
    with pytest.raises(ConfigError) as refused:
        restore_node(old)
    assert refused.value.message.startswith(
        "kubelet 1.30 would not start on this node: "
        "distribute-cpus-across-numa is alpha in kubelet 1.30"
    )
    verdict = admits(
        old, pod_from_manifest({"kind": "Pod", "apiVersion": "v1", **pod_json("p", "2")})
    )
    assert verdict.reason == "NodeNotRestorable"
    assert verdict.unresolvable
    gated = make_snapshot(
        "n",
        options={"distribute-cpus-across-numa": "true"},
        config={"featureGates": {"CPUManagerPolicyAlphaOptions": True}},
    )
    restore_node(replace(gated, kubelet_version="v1.30.1"))


def test_a_locked_gate_turned_off_stops_the_node() -> None:
    snapshot = make_snapshot("n", config={"featureGates": {"CPUManager": False}})
    with pytest.raises(CpuManagerError, match="feature is locked to true"):
        restore_node(replace(snapshot, kubelet_version="1.30"))


def test_a_release_outside_the_modelled_ones_is_an_input_error() -> None:
    snapshot = replace(make_snapshot("n"), kubelet_version="v1.17.0")
    with pytest.raises(CpuManagerError, match="outside the releases modelled"):
        restore_node(snapshot)
