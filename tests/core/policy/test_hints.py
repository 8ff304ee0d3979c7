"""Every CPU-hint vector of the kubelet's topology_hints tests, through the static policy."""

from __future__ import annotations

from typing import Any

import pytest

from cpumanager.core.allocation.options import StaticPolicyOptions
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.hints.hint import TopologyHint
from cpumanager.core.ids import ContainerName, PodUID
from cpumanager.core.policy.base import ReusableCPUs
from cpumanager.core.policy.none import NonePolicy
from cpumanager.core.policy.static import StaticPolicy
from cpumanager.core.state import StateSnapshot
from tests.builders import container, pod
from tests.kubelet_vectors import kubelet_topology, load, vector_pod

CASES: list[dict[str, Any]] = [
    c for c in load("hints.json")["cases"] if c["api"] in ("container", "pod")
]


def _as_set(hints: object) -> set[tuple[tuple[int, ...], bool]]:
    assert isinstance(hints, tuple)
    found = set()
    for hint in hints:
        assert isinstance(hint, TopologyHint)
        assert hint.mask is not None
        found.add((hint.mask.ids(), hint.preferred))
    assert len(found) == len(hints)
    return found


@pytest.mark.parametrize("case", CASES, ids=[f"{c['test']}/{c['description']}" for c in CASES])
def test_hint_vector(case: dict[str, Any]) -> None:
    policy = StaticPolicy(
        kubelet_topology(case["topology"]),
        options=StaticPolicyOptions.parse(case["policy_options"], alpha_enabled=True),
        reserved_cpus=CPUSet.parse(case["reserved_cpus"]),
        num_reserved_cpus=len(CPUSet.parse(case["reserved_cpus"])),
    )
    snapshot = StateSnapshot(
        "static",
        CPUSet.parse(case["default_cpuset"]),
        {
            PodUID(p): {ContainerName(n): CPUSet.parse(s) for n, s in cs.items()}
            for p, cs in case["assignments"].items()
        },
    )
    the_pod = vector_pod(case["pod"])
    if case["api"] == "container":
        hints = policy.container_hints(
            snapshot, ReusableCPUs(), the_pod, the_pod.container(case["container"])
        )
    else:
        hints = policy.pod_hints(snapshot, ReusableCPUs(), the_pod)
    expected = {(tuple(h["numa"]), h["preferred"]) for h in case["expected_cpu_hints"]}
    assert _as_set(hints["cpu"]) == expected


def test_shared_container_has_no_preference() -> None:
    policy = StaticPolicy(kubelet_topology("topoDualSocketHT"))
    burstable = pod("p", container("c", "1", limit="2"))
    snapshot = StateSnapshot("static", CPUSet.parse("0-11"))
    assert (
        policy.container_hints(snapshot, ReusableCPUs(), burstable, burstable.containers[0]) == {}
    )
    assert policy.pod_hints(snapshot, ReusableCPUs(), burstable) == {}


def test_reusable_cpus_must_be_inside_every_hint() -> None:
    """CPUs lent by an init container narrow the hints to the nodes that hold them."""
    policy = StaticPolicy(kubelet_topology("hintsTestMachineDiscovered"))
    app = pod("p", container("c", "2"))
    snapshot = StateSnapshot("static", CPUSet.parse("0-2,4-5,6-8,10-11"))
    reuse = ReusableCPUs(PodUID("p"), CPUSet.parse("3,9"))
    hints = policy.container_hints(snapshot, reuse, app, app.containers[0])
    assert _as_set(hints["cpu"]) == {((1,), True), ((0, 1), False)}


def test_none_policy_has_no_opinion() -> None:
    policy = NonePolicy(kubelet_topology("topoDualSocketHT"))
    app = pod("p", container("c", "2"))
    snapshot = StateSnapshot("none")
    assert policy.container_hints(snapshot, ReusableCPUs(), app, app.containers[0]) == {}
    assert policy.pod_hints(snapshot, ReusableCPUs(), app) == {}
