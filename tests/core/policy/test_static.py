"""Every static-policy vector of the kubelet's policy_static tests (tests/data/policy_static.json).

``expected_*`` fields are the kubelet's assertions. ``*_by_reference_model`` fields come from an
independent model, not from the kubelet; they are checked too (they agree with us).
"""

from __future__ import annotations

from typing import Any

import pytest

from cpumanager.core.allocation.options import StaticPolicyOptions
from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.ids import ContainerName, PodUID
from cpumanager.core.policy.base import ReusableCPUs
from cpumanager.core.policy.static import StaticPolicy
from cpumanager.core.state import StateSnapshot
from cpumanager.errors import CpuManagerError, SMTAlignmentError
from tests.kubelet_vectors import kubelet_topology, load, vector_pod

CASES: list[dict[str, Any]] = load("policy_static.json")["cases"]


def _ids(cases: list[dict[str, Any]]) -> list[str]:
    return [f"{c['test']}/{c['description']}/{sorted(c['options'].items())}" for c in cases]


def _of(action: str) -> list[dict[str, Any]]:
    return [c for c in CASES if c["action"] == action]


def _policy(case: dict[str, Any]) -> StaticPolicy:
    return StaticPolicy(
        kubelet_topology(case["topology"]),
        options=StaticPolicyOptions.parse(case["options"], alpha_enabled=True),
        num_reserved_cpus=case["num_reserved_cpus"],
        reserved_cpus=CPUSet.parse(case["reserved_cpus"]),
    )


def _snapshot(raw: dict[str, Any]) -> StateSnapshot:
    return StateSnapshot(
        "static",
        CPUSet.parse(raw["default"]),
        {
            PodUID(pod): {ContainerName(name): CPUSet.parse(s) for name, s in containers.items()}
            for pod, containers in raw["assignments"].items()
        },
    )


def _plain(snapshot: StateSnapshot) -> dict[str, Any]:
    return {
        "default": str(snapshot.default_cpuset),
        "assignments": {
            pod: {name: str(cpus) for name, cpus in containers.items()}
            for pod, containers in snapshot.assignments.items()
        },
    }


def _canonical(raw: dict[str, Any]) -> dict[str, Any]:
    return _plain(_snapshot(raw))


@pytest.mark.parametrize("case", _of("allocate"), ids=_ids(_of("allocate")))
def test_allocate_vector(case: dict[str, Any]) -> None:
    policy = _policy(case)
    before = _snapshot(case["state_before"])
    pod = vector_pod(case["pod"])
    container = pod.container(case["container"])
    hint = case["topology_hint"]
    mask = None if hint is None else NUMAMask(hint["numa"])
    if case["expected_error"]:
        kind = (
            SMTAlignmentError
            if case["expected_error"].startswith("SMT Alignment Error")
            else CpuManagerError
        )
        with pytest.raises(kind) as caught:
            policy.allocate(before, ReusableCPUs(), pod, container, mask)
        assert caught.value.message == case["expected_error"]
        after = before
    else:
        after = policy.allocate(before, ReusableCPUs(), pod, container, mask).snapshot
    held = after.cpuset_of(pod.uid, container.name)
    assert (held is not None) is case["expect_assignment"]
    if case["expect_assignment"]:
        assert str(held) == str(CPUSet.parse(case["expected_cpuset"]))
    assert _plain(after) == _canonical(case["state_after_by_reference_model"])


@pytest.mark.parametrize("case", _of("allocate_cpus"), ids=_ids(_of("allocate_cpus")))
def test_allocate_cpus_vector(case: dict[str, Any]) -> None:
    policy = _policy(case)
    mask = None if case["numa_affinity"] is None else NUMAMask(case["numa_affinity"])
    cpus = policy.allocate_cpus(
        _snapshot(case["state_before"]),
        case["num_cpus"],
        mask,
        CPUSet.parse(case["reusable_cpus"]),
    )
    assert str(cpus) == str(CPUSet.parse(case["expected_cpuset"]))


@pytest.mark.parametrize("case", _of("start"), ids=_ids(_of("start")))
def test_start_vector(case: dict[str, Any]) -> None:
    if case.get("error_stage") == "policy construction":
        with pytest.raises(CpuManagerError) as caught:
            _policy(case)
        assert caught.value.message == case["expected_error"]
        return
    policy = _policy(case)
    if case["expected_error"]:
        with pytest.raises(CpuManagerError) as caught:
            policy.start(_snapshot(case["state_before"]))
        assert case["expected_error"] in caught.value.message
    else:
        started = policy.start(_snapshot(case["state_before"]))
        assert str(started.default_cpuset) == str(CPUSet.parse(case["expected_default"]))


@pytest.mark.parametrize("case", _of("remove"), ids=_ids(_of("remove")))
def test_remove_vector(case: dict[str, Any]) -> None:
    policy = _policy(case)
    removal = policy.remove(
        _snapshot(case["state_before"]), PodUID(case["pod_uid"]), ContainerName(case["container"])
    )
    assert str(removal.snapshot.default_cpuset) == str(CPUSet.parse(case["expected_default"]))


def _allocate_all(
    policy: StaticPolicy, snapshot: StateSnapshot, raw_pod: dict[str, Any], *, apps_only: bool
) -> tuple[StateSnapshot, dict[str, CPUSet]]:
    pod = vector_pod(raw_pod)
    reuse = ReusableCPUs()
    given: dict[str, CPUSet] = {}
    containers = pod.containers if apps_only else tuple(pod.all_containers())
    for container in containers:
        allocation = policy.allocate(snapshot, reuse, pod, container, None)
        snapshot, reuse = allocation.snapshot, allocation.reuse
        given[container.name] = allocation.cpus
    return snapshot, given


REUSE = _of("allocate_all_containers_then_remove") + _of("allocate_all_containers")


@pytest.mark.parametrize("case", REUSE, ids=_ids(REUSE))
def test_init_container_reuse_vector(case: dict[str, Any]) -> None:
    policy = _policy(case)
    after, _ = _allocate_all(policy, _snapshot(case["state_before"]), case["pod"], apps_only=False)
    assert str(after.default_cpuset) == str(CPUSet.parse(case["expected_default_after_allocate"]))
    if "remove_container" in case:
        removal = policy.remove(
            after, PodUID(case["pod"]["uid"]), ContainerName(case["remove_container"])
        )
        assert str(removal.snapshot.default_cpuset) == str(
            CPUSet.parse(case["expected_default_after_remove"])
        )


UNCORE = _of("allocate_all_app_containers")


@pytest.mark.parametrize("case", UNCORE, ids=_ids(UNCORE))
def test_uncore_alignment_vector(case: dict[str, Any]) -> None:
    policy = _policy(case)
    topology = policy.topology
    _, given = _allocate_all(policy, _snapshot(case["state_before"]), case["pod"], apps_only=True)
    first = given[case["pod"]["containers"][0]["name"]]
    if case["expected_first_container_cpuset"] is not None:
        assert first == CPUSet.parse(case["expected_first_container_cpuset"])
    else:
        every = CPUSet().union(*given.values())
        assert list(topology.l3_of(every)) == case["expected_uncore_cache_ids"]
    assert {name: str(cpus) for name, cpus in given.items()} == {
        name: str(CPUSet.parse(s)) for name, s in case["allocations_by_reference_model"].items()
    }


def test_every_vector_is_run() -> None:
    handled = {
        "allocate",
        "allocate_cpus",
        "start",
        "remove",
        "allocate_all_containers_then_remove",
        "allocate_all_containers",
        "allocate_all_app_containers",
    }
    assert {c["action"] for c in CASES} == handled
    assert len(CASES) == 81
