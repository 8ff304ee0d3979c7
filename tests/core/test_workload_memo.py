"""The per-pod memo of QoS class, exclusive CPUs and aggregated requests changes no answer."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from cpumanager.core import workload
from cpumanager.core.ids import ContainerName, PodUID
from cpumanager.core.workload import (
    Container,
    ContainerKind,
    Pod,
    QoSClass,
    aggregate_container_requests,
    guaranteed_cpus,
    qos_class,
)

AMOUNTS = st.none() | st.sampled_from([Fraction(0), Fraction(1, 2), Fraction(1), Fraction(2)])


def _resources(draw: st.DrawFn) -> tuple[dict[str, Fraction], dict[str, Fraction]]:
    requests: dict[str, Fraction] = {}
    limits: dict[str, Fraction] = {}
    for name in ("cpu", "memory"):
        request, limit = draw(AMOUNTS), draw(AMOUNTS)
        if request is not None:
            requests[name] = request
        if limit is not None:
            limits[name] = limit
    return requests, limits


@st.composite
def containers(draw: st.DrawFn, name: str, kind: ContainerKind) -> Container:
    requests, limits = _resources(draw)
    return Container(ContainerName(name), requests, limits, kind)


@st.composite
def pods(draw: st.DrawFn) -> Pod:
    apps = tuple(
        draw(containers(f"c{i}", ContainerKind.APP)) for i in range(draw(st.integers(1, 3)))
    )
    kinds = st.sampled_from([ContainerKind.INIT, ContainerKind.SIDECAR])
    inits = tuple(draw(containers(f"i{i}", draw(kinds))) for i in range(draw(st.integers(0, 2))))
    requests, limits = _resources(draw) if draw(st.booleans()) else ({}, {})
    return Pod(PodUID("p"), "p", "default", inits, apps, requests, limits)


def _fresh_guaranteed(pod: Pod, container: Container, gate: bool) -> int:
    if workload._qos_class(pod, pod_level_resources=gate) is not QoSClass.GUARANTEED:
        return 0
    return workload._integral_cpus(container)


@settings(max_examples=300, deadline=None)
@given(pods(), st.booleans())
def test_memoised_answers_equal_fresh_ones(pod: Pod, gate: bool) -> None:
    fresh_requests = workload._aggregate(pod, lambda c: c.requests)
    for _ in range(2):  # the second round reads the memo
        assert qos_class(pod, pod_level_resources=gate) is workload._qos_class(
            pod, pod_level_resources=gate
        )
        for container in pod.all_containers():
            assert guaranteed_cpus(pod, container, pod_level_resources=gate) == _fresh_guaranteed(
                pod, container, gate
            )
        got = aggregate_container_requests(pod)
        assert got == fresh_requests
        got["cpu"] = Fraction(99)  # callers own the dict they get


def test_a_container_not_of_the_pod_gets_its_own_answer() -> None:
    def make(cpus: int) -> Container:
        amounts = {"cpu": Fraction(cpus), "memory": Fraction(1 << 30)}
        return Container(ContainerName("c"), amounts, amounts)

    two = make(2)
    the_pod = Pod(PodUID("p"), containers=(two,))
    assert guaranteed_cpus(the_pod, two) == 2
    three = make(3)
    assert guaranteed_cpus(the_pod, three) == 3  # same name, another object: not the memo's
    assert guaranteed_cpus(the_pod, two) == 2


def test_the_memo_is_not_part_of_the_value() -> None:
    c = Container(ContainerName("c"), {"cpu": Fraction(1)}, {"cpu": Fraction(1)})
    used, unused = Pod(PodUID("p"), containers=(c,)), Pod(PodUID("p"), containers=(c,))
    assert qos_class(used) is QoSClass.BURSTABLE  # no memory: not Guaranteed
    assert used == unused
    assert repr(used) == repr(unused)
    resized = dataclasses.replace(
        used, containers=(Container(ContainerName("c"), {"cpu": Fraction(1)}, {}),)
    )
    assert resized._memo == {}
    assert qos_class(resized) is QoSClass.BURSTABLE
