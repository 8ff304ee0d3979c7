"""v1beta1 defaulting: a zero value is unset, as SetDefaults_KubeletConfiguration reads it."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from cpumanager.formats.kubelet_config import DEFAULT_EVICTION_HARD, KubeletConfig, apply_defaults

ZEROS = [
    ("cpuManagerReconcilePeriod", "0s", "10s"),
    ("cpuManagerReconcilePeriod", "0", "10s"),
    ("cpuManagerReconcilePeriod", "0ms", "10s"),
    ("cpuManagerReconcilePeriod", None, "10s"),
    ("cpuManagerPolicy", "", "none"),
    ("memoryManagerPolicy", "", "None"),
    ("topologyManagerPolicy", "", "none"),
    ("topologyManagerScope", "", "container"),
    ("cgroupDriver", "", "cgroupfs"),
    ("maxPods", 0, 110),
    ("cgroupsPerQOS", None, True),
    ("enforceNodeAllocatable", None, ["pods"]),
    ("mergeDefaultEvictionSettings", None, False),
    ("evictionHard", None, dict(DEFAULT_EVICTION_HARD)),
]


@pytest.mark.parametrize(
    ("name", "zero", "default"), ZEROS, ids=[f"{z[0]}={z[1]!r}" for z in ZEROS]
)
def test_zero_value_is_unset(name: str, zero: object, default: object) -> None:
    out, defaulted = apply_defaults({name: zero})
    assert out[name] == default
    assert name in defaulted


KEPT = [
    ("cpuManagerReconcilePeriod", "5s"),
    ("cgroupsPerQOS", False),  # a nil pointer is unset, false is not
    ("enforceNodeAllocatable", []),  # an empty list is not nil
    ("evictionHard", {}),  # an empty map is not nil
    ("maxPods", 250),
]


@pytest.mark.parametrize(("name", "value"), KEPT, ids=[k[0] for k in KEPT])
def test_set_values_are_kept(name: str, value: object) -> None:
    out, defaulted = apply_defaults({name: value})
    assert out[name] == value
    assert name not in defaulted


def test_defaulting_does_not_touch_its_input() -> None:
    raw: dict[str, Any] = {"cpuManagerPolicy": ""}
    apply_defaults(raw)
    assert raw == {"cpuManagerPolicy": ""}


def test_zero_reconcile_period_in_a_file_is_the_default() -> None:
    # The kubeadm defect: "cpuManagerReconcilePeriod must be greater than zero" before.
    config = KubeletConfig.from_mapping({"cpuManagerReconcilePeriod": "0s"})
    assert config.cpu_manager_reconcile_period_seconds == Fraction(10)


def test_empty_eviction_map_reserves_no_memory() -> None:
    config = KubeletConfig.from_mapping({"evictionHard": {}, "kubeReserved": {"memory": "1Gi"}})
    assert config.memory_reservation_bytes() == 2**30
