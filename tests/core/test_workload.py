"""QoS class and the exclusive-CPU counts (podGuaranteedCPUs vectors from hints.json)."""

from __future__ import annotations

from typing import Any

import pytest

from cpumanager.core.workload import (
    ContainerKind,
    QoSClass,
    guaranteed_cpus,
    pod_guaranteed_cpus,
    qos_class,
)
from tests.builders import container, pod
from tests.kubelet_vectors import load, vector_pod

POD_CASES: list[dict[str, Any]] = [
    c for c in load("hints.json")["cases"] if c["api"] == "pod_guaranteed_cpus"
]


@pytest.mark.parametrize("case", POD_CASES, ids=[c["description"] for c in POD_CASES])
def test_pod_guaranteed_cpus_vector(case: dict[str, Any]) -> None:
    assert pod_guaranteed_cpus(vector_pod(case["pod"])) == case["expected"]


@pytest.mark.parametrize(
    ("the_pod", "expected"),
    [
        (pod("p", container("c", "2")), QoSClass.GUARANTEED),
        (pod("p", container("c", "2", limit="3")), QoSClass.BURSTABLE),
        (pod("p", container("c", None, memory=None)), QoSClass.BEST_EFFORT),
        (pod("p", container("c", "1"), container("d", None)), QoSClass.BURSTABLE),
        (pod("p", container("c", "0")), QoSClass.BURSTABLE),
        (pod("p", container("c", "2"), init=(container("i", "1"),)), QoSClass.GUARANTEED),
    ],
    ids=["equal", "limit-above", "nothing", "one-unset", "zero-cpu", "with-init"],
)
def test_qos_class(the_pod: Any, expected: QoSClass) -> None:
    assert qos_class(the_pod) is expected


@pytest.mark.parametrize(
    ("cpu", "expected"),
    [("2", 2), ("2000m", 2), ("1500m", 0), ("977m", 0), ("1.0", 1), ("0.5", 0)],
)
def test_guaranteed_cpus_needs_an_integral_request(cpu: str, expected: int) -> None:
    the_pod = pod("p", container("c", cpu))
    assert guaranteed_cpus(the_pod, the_pod.containers[0]) == expected


def test_burstable_pod_gets_no_exclusive_cpus() -> None:
    the_pod = pod("p", container("c", "2"), container("d", "1", limit="2"))
    assert guaranteed_cpus(the_pod, the_pod.containers[0]) == 0
    assert pod_guaranteed_cpus(the_pod) == 0


def test_sidecars_count_for_the_whole_pod_life() -> None:
    the_pod = pod(
        "p",
        container("app", "2"),
        init=(container("side", "1", kind=ContainerKind.SIDECAR), container("init", "4")),
    )
    assert pod_guaranteed_cpus(the_pod) == 5
