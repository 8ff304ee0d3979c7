"""Static policy invariants over random machines and admission/removal sequences."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from cpumanager.core.allocation import StaticPolicyOptions
from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.ids import ContainerName, PodUID
from cpumanager.core.policy.base import ReusableCPUs
from cpumanager.core.policy.static import StaticPolicy
from cpumanager.core.state import StateSnapshot
from cpumanager.core.workload import ContainerKind, Pod
from cpumanager.errors import AllocationError
from cpumanager.presets import synthetic
from tests.builders import container

OPTIONS = [
    StaticPolicyOptions(),
    StaticPolicyOptions(strict_cpu_reservation=True),
    StaticPolicyOptions(full_pcpus_only=True),
    StaticPolicyOptions(distribute_cpus_across_numa=True),
    StaticPolicyOptions(prefer_align_cpus_by_uncorecache=True),
    StaticPolicyOptions(distribute_cpus_across_cores=True, strict_cpu_reservation=True),
]


@st.composite
def policies(draw: st.DrawFn) -> StaticPolicy:
    topology = synthetic(
        sockets=draw(st.integers(1, 2)),
        numa_per_socket=draw(st.integers(1, 2)),
        cores_per_numa=draw(st.integers(1, 4)),
        threads=draw(st.integers(1, 2)),
    )
    reserved = draw(st.integers(0, min(2, len(topology.all_cpus) - 1)))
    return StaticPolicy(
        topology, options=draw(st.sampled_from(OPTIONS)), num_reserved_cpus=reserved
    )


@st.composite
def pods(draw: st.DrawFn, index: int) -> Pod:
    guaranteed = draw(st.booleans())
    init = tuple(
        container(
            f"init{i}",
            str(draw(st.integers(1, 3))),
            kind=draw(st.sampled_from([ContainerKind.INIT, ContainerKind.SIDECAR])),
        )
        for i in range(draw(st.integers(0, 1)))
    )
    apps = tuple(
        container(f"app{i}", str(draw(st.integers(1, 3))), limit=None if guaranteed else "4")
        for i in range(draw(st.integers(1, 2)))
    )
    return Pod(PodUID(f"pod{index}"), name=f"pod{index}", init_containers=init, containers=apps)


def _check(policy: StaticPolicy, snapshot: StateSnapshot) -> None:
    assert (
        snapshot.invariant_violations(
            policy.topology.all_cpus,
            reserved=policy.reserved_cpus,
            strict_reservation=policy.options.strict_cpu_reservation,
        )
        == ()
    )


@settings(max_examples=150, deadline=None)
@given(policies(), st.data())
def test_admission_and_removal_keep_the_invariants(
    policy: StaticPolicy, data: st.DataObject
) -> None:
    snapshot = policy.start(StateSnapshot("static"))
    reuse = ReusableCPUs()
    admitted: list[Pod] = []
    for step in range(data.draw(st.integers(1, 8))):
        if admitted and data.draw(st.booleans()):
            pod = admitted.pop(data.draw(st.integers(0, len(admitted) - 1)))
            for one in pod.all_containers():
                snapshot = policy.remove(snapshot, pod.uid, one.name).snapshot
                _check(policy, snapshot)
            assert pod.uid not in snapshot.assignments
            continue
        pod = data.draw(pods(step))
        before = snapshot
        try:
            for one in pod.all_containers():
                mask = data.draw(
                    st.none()
                    | st.sampled_from([NUMAMask.of(n) for n in policy.topology.cpu_numa_ids()])
                )
                allocation = policy.allocate(snapshot, reuse, pod, one, mask)
                snapshot, reuse = allocation.snapshot, allocation.reuse
                _check(policy, snapshot)
        except AllocationError:
            for one in pod.all_containers():
                snapshot = policy.remove(snapshot, pod.uid, one.name).snapshot
            assert snapshot == before
            continue
        admitted.append(pod)


@settings(max_examples=150, deadline=None)
@given(policies(), st.integers(1, 4))
def test_remove_after_allocate_restores_the_state(policy: StaticPolicy, count: int) -> None:
    snapshot = policy.start(StateSnapshot("static"))
    pod = Pod(PodUID("p"), containers=(container("c", str(count)),))
    try:
        allocation = policy.allocate(snapshot, ReusableCPUs(), pod, pod.containers[0], None)
    except AllocationError:
        return
    assert len(allocation.cpus) == count
    assert not allocation.cpus & policy.reserved_cpus
    removal = policy.remove(allocation.snapshot, pod.uid, ContainerName("c"))
    assert removal.snapshot == snapshot
    assert removal.returned_to_default == allocation.cpus
