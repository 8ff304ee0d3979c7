"""Kubelet audit of cpu_assignment_test.go through the public entry point.

Every non-resize case of the newest kubelet cpu_assignment_test.go (accumulator helpers,
TestTakeByTopologyNUMAPacked incl. uncore cache, ...WithSpreadPhysicalCPUsPreferredOption,
TestTakeByTopologyNUMADistributed) is already a vector in tests/data/take_by_topology.json,
where test_take_by_topology.py runs it against the inner algorithms. Here the same facts go
through ``take_by_topology`` with the static policy options the kubelet's
``staticPolicy.takeByTopology`` turns into those algorithm arguments:

* distribute-cpus-across-numa selects the distributed algorithm; its group size is the
  machine's CPUs per core with full-pcpus-only, else 1;
* distribute-cpus-across-cores selects the spread CPU order;
* prefer-align-cpus-by-uncorecache turns on the uncore step of the packed algorithm.

The resize cases of the newest file (takeByTopology...ForResize) are out of scope: we do not
implement in-place resize of exclusive CPUs.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from cpumanager.core.allocation import StaticPolicyOptions, take_by_topology
from cpumanager.core.cpuset import CPUSet
from cpumanager.errors import NotEnoughCPUsError
from tests.kubelet_vectors import kubelet_topology, load

CASES: list[dict[str, Any]] = load("take_by_topology.json")["cases"]
ACCUMULATOR_CASES: list[dict[str, Any]] = load("take_by_topology.json")["accumulator_cases"]


def _options(case: dict[str, Any]) -> StaticPolicyOptions | None:
    """The policy options that reach this case's algorithm call (None: none can)."""
    opts = case["options"]
    spread = opts["cpu_sorting"] == "spread"
    if case["algorithm"] == "packed":
        return StaticPolicyOptions(
            distribute_cpus_across_cores=spread,
            prefer_align_cpus_by_uncorecache=opts["prefer_align_by_uncore_cache"],
        )
    group = opts["cpu_group_size"]
    per_core = kubelet_topology(case["topology"]).cpus_per_core
    if group not in (1, per_core):
        return None
    return StaticPolicyOptions(
        distribute_cpus_across_numa=True,
        full_pcpus_only=group != 1,
        distribute_cpus_across_cores=spread,
        align_by_socket=opts["align_by_socket"],
    )


REACHABLE = [c for c in CASES if _options(c) is not None]


@pytest.mark.parametrize("case", REACHABLE, ids=[c["id"] for c in REACHABLE])
def test_kubelet_case_through_take_by_topology(case: dict[str, Any]) -> None:
    options = _options(case)
    assert options is not None
    topology = kubelet_topology(case["topology"])
    available = CPUSet.parse(case["available"])
    if case["expected_error"]:
        with pytest.raises(NotEnoughCPUsError) as caught:
            take_by_topology(topology, available, case["num_cpus"], options)
        assert caught.value.message == case["expected_error"]
    else:
        got = take_by_topology(topology, available, case["num_cpus"], options)
        assert got == CPUSet.parse(case["expected"])


def test_every_case_reaches_the_entry_point() -> None:
    """Group sizes in the kubelet tests are 1 or the machine's CPUs per core."""
    assert len(REACHABLE) == len(CASES)


# Case counts per kubelet test function in the newest cpu_assignment_test.go (non-resize).
# TestTakeByTopologyNUMADistributed lists "allocate 8 full cores with 2 distributed across
# each NUMA node" twice with identical facts; it is ported once (30 listed, 29 distinct).
EXPECTED_COUNTS = {
    "TestTakeByTopologyNUMAPacked": 25,
    "TestTakeByTopologyWithSpreadPhysicalCPUsPreferredOption": 8,
    "TestTakeByTopologyNUMADistributed": 29,
}
EXPECTED_ACCUMULATOR_COUNTS = {
    "TestCPUAccumulatorFreeSockets": 13,
    "TestCPUAccumulatorFreeNUMANodes": 13,
    "TestCPUAccumulatorFreeSocketsAndNUMANodes": 4,
    "TestCPUAccumulatorFreeCores": 8,
    "TestCPUAccumulatorFreeCPUs": 6,
    "TestCPUAccumulatorTake": 6,
}


def test_every_kubelet_case_is_ported() -> None:
    counts = Counter(case["id"].split("/", 1)[0] for case in CASES)
    assert dict(counts) == EXPECTED_COUNTS
    accumulator = Counter(case["test"] for case in ACCUMULATOR_CASES)
    assert dict(accumulator) == EXPECTED_ACCUMULATOR_COUNTS


def test_ported_ids_are_unique() -> None:
    ids = [case["id"] for case in CASES]
    assert len(ids) == len(set(ids))
