"""Every take-by-topology vector of the kubelet's cpu_assignment tests, and the orders."""

from __future__ import annotations

from typing import Any

import pytest

from cpumanager.core.allocation.accumulator import Accumulator
from cpumanager.core.allocation.distribute import take_distributed
from cpumanager.core.allocation.index import topology_index
from cpumanager.core.allocation.packed import take_packed
from cpumanager.core.cpuset import CPUSet
from cpumanager.errors import NotEnoughCPUsError
from tests.kubelet_vectors import kubelet_topology, load

CASES: list[dict[str, Any]] = load("take_by_topology.json")["cases"]
ACCUMULATOR_CASES: list[dict[str, Any]] = load("take_by_topology.json")["accumulator_cases"]


def _run(case: dict[str, Any]) -> CPUSet:
    ix = topology_index(kubelet_topology(case["topology"]))
    available = CPUSet.parse(case["available"]).bits
    opts = case["options"]
    spread = opts["cpu_sorting"] == "spread"
    if case["algorithm"] == "packed":
        bits = take_packed(
            ix,
            available,
            case["num_cpus"],
            spread=spread,
            uncore=opts["prefer_align_by_uncore_cache"],
        )
    else:
        bits = take_distributed(
            ix,
            available,
            case["num_cpus"],
            group=opts["cpu_group_size"],
            spread=spread,
            align_by_socket=opts["align_by_socket"],
        )
    return CPUSet.from_bits(bits)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_take_by_topology_vector(case: dict[str, Any]) -> None:
    if case["expected_error"]:
        with pytest.raises(NotEnoughCPUsError) as caught:
            _run(case)
        assert caught.value.message == case["expected_error"]
    else:
        assert str(_run(case)) == str(CPUSet.parse(case["expected"]))


@pytest.mark.parametrize(
    "case",
    [c for c in CASES if c["algorithm"] == "distributed"],
    ids=[c["id"] for c in CASES if c["algorithm"] == "distributed"],
)
def test_literal_distributed_evaluation_agrees(case: dict[str, Any]) -> None:
    """The memoized combo evaluation and the step-by-step one pick the same CPUs."""
    ix = topology_index(kubelet_topology(case["topology"]))
    kwargs = {
        "group": case["options"]["cpu_group_size"],
        "align_by_socket": case["options"]["align_by_socket"],
    }
    available = CPUSet.parse(case["available"]).bits
    if case["expected_error"]:
        return
    fast = take_distributed(ix, available, case["num_cpus"], **kwargs)
    literal = take_distributed(ix, available, case["num_cpus"], literal=True, **kwargs)
    assert fast == literal


def _order(case: dict[str, Any]) -> Any:
    ix = topology_index(kubelet_topology(case["topology"]))
    acc = Accumulator(ix, CPUSet.parse(case["available"]).bits, case.get("num_cpus", 0), None)
    free = acc.free

    def whole(order: list[int], table: dict[int, int]) -> list[int]:
        return [e for e in order if free & table[e] == table[e]]

    function = case["function"]
    if function == "freeSockets":
        return sorted(whole(acc.socket_order(), ix.socket_bits))
    if function == "freeNUMANodes":
        return whole(acc.numa_order(), ix.numa_bits)
    if function == "freeSocketsAndNUMANodes":
        return {
            "sockets": whole(acc.socket_order(), ix.socket_bits),
            "numa_nodes": whole(acc.numa_order(), ix.numa_bits),
        }
    if function == "freeCores":
        return whole(acc.core_order(), ix.core_bits)
    if function == "freeCPUs":
        return acc.cpu_order(spread=False)
    raise AssertionError(function)


ORDER_CASES = [c for c in ACCUMULATOR_CASES if c["function"] != "take"]
TAKE_CASES = [c for c in ACCUMULATOR_CASES if c["function"] == "take"]


@pytest.mark.parametrize("case", ORDER_CASES, ids=[c["description"] for c in ORDER_CASES])
def test_accumulator_order_vector(case: dict[str, Any]) -> None:
    assert _order(case) == case["expected_ordered"]


@pytest.mark.parametrize("case", TAKE_CASES, ids=[c["description"] for c in TAKE_CASES])
def test_accumulator_take_vector(case: dict[str, Any]) -> None:
    ix = topology_index(kubelet_topology(case["topology"]))
    acc = Accumulator(ix, CPUSet.parse(case["available"]).bits, case["num_cpus"], None)
    for step in case["take_sequence"]:
        acc.take(CPUSet.parse(step).bits, "step")
    assert acc.satisfied() is case["expect_satisfied"]
    assert acc.failed() is case["expect_failed"]
    assert acc.need == case["expect_num_cpus_needed"]
