"""topology_from_cadvisor reproduces the kubelet's Discover (vectors from topology_test.go)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cpumanager.core.discover import topology_from_cadvisor, unique_core_id
from cpumanager.errors import MachineError

VECTORS = json.loads((Path(__file__).parent.parent / "data/discover_vectors.json").read_text())
OK = [case for case in VECTORS["cases"] if "expected" in case]
FAIL = [case for case in VECTORS["cases"] if "expected_error" in case]


@pytest.mark.parametrize("case", OK, ids=[c["name"] for c in OK])
def test_discover_vectors(case: dict[str, Any]) -> None:
    topology = topology_from_cadvisor(case["machine_info"])
    expected = case["expected"]
    assert topology.num_cpus == expected["NumCPUs"]
    assert topology.num_sockets == expected["NumSockets"]
    assert topology.num_cores == expected["NumCores"]
    assert topology.num_numa_nodes == expected["NumNUMANodes"]
    assert topology.num_uncore_caches == expected["NumUncoreCache"]
    got = [
        {"cpu": r.cpu, "core": r.core, "socket": r.socket, "numa": r.numa, "uncore": r.l3}
        for r in topology.cpus.values()
    ]
    assert got == sorted(expected["cpus"], key=lambda r: r["cpu"])


@pytest.mark.parametrize("case", FAIL, ids=[c["name"] for c in FAIL])
def test_discover_error_vectors(case: dict[str, Any]) -> None:
    with pytest.raises(MachineError, match=case["expected_error"]):
        topology_from_cadvisor(case["machine_info"])


@pytest.mark.parametrize(
    "case", VECTORS["unique_core_id"], ids=[str(c["threads"]) for c in VECTORS["unique_core_id"]]
)
def test_unique_core_id_vectors(case: dict[str, Any]) -> None:
    if "expected_error" in case:
        with pytest.raises(MachineError, match=case["expected_error"]):
            unique_core_id(case["threads"])
    else:
        assert unique_core_id(case["threads"]) == case["expected"]


def _core(core_id: int, socket: int, threads: list[int], uncore: int | None = None) -> dict:
    caches = [] if uncore is None else [{"id": uncore}, {"id": 99}]
    return {"core_id": core_id, "socket_id": socket, "thread_ids": threads, "uncore_caches": caches}


def test_cadvisor_json_field_names_distances_and_memory() -> None:
    info = {
        "num_cores": 4,
        "num_sockets": 2,
        "topology": [
            {
                "node_id": 3,
                "memory": 1 << 30,
                "distances": [21, 10],
                "cores": [_core(0, 1, [3, 1], uncore=7)],
            },
            {"node_id": 0, "distances": [10, 21], "cores": [_core(0, 0, [0, 2])]},
        ],
    }
    topology = topology_from_cadvisor(info)
    assert topology.info(3).core == 1  # lowest thread id, not cadvisor's per-package id
    assert topology.info(1).l3 == 7  # the first uncore cache only
    assert topology.info(0).l3 == 0  # no uncore cache: the socket id stands in
    assert topology.num_cores == 2
    assert topology.num_uncore_caches == 2
    assert topology.numa_node(3).memory_bytes == 1 << 30
    assert topology.distance(0, 3) == 21  # rows are indexed by ascending node id
    assert topology.distance(3, 3) == 10


def test_memory_only_nodes_are_kept_without_cpus() -> None:
    info = {
        "num_cores": 2,
        "num_sockets": 1,
        "topology": [{"id": 0, "cores": [_core(0, 0, [0, 1])]}, {"id": 1, "cores": []}],
    }
    topology = topology_from_cadvisor(info)
    assert topology.numa_ids() == (0, 1)
    assert topology.cpu_numa_ids() == (0,)
    assert topology.num_numa_nodes == 1


@pytest.mark.parametrize(
    ("info", "message"),
    [
        ({"num_cores": 2, "topology": "x"}, "must be a list"),
        ({"num_cores": 2, "topology": [1]}, "must be a mapping"),
        ({"num_cores": 2, "topology": [{"id": 0, "cores": [{"threads": ["a"]}]}]}, "integers"),
        ({"num_cores": 2, "topology": [{"id": 0, "cores": [{"threads": 3}]}]}, "list of"),
        ({"num_cores": 2, "topology": [{"id": 0}, {"id": 0}]}, "twice"),
        ({"num_cores": 2, "topology": [{"id": 0, "cores": [{"threads": []}]}]}, "no cpus"),
    ],
)
def test_malformed_machine_info(info: dict, message: str) -> None:
    with pytest.raises(MachineError, match=message):
        topology_from_cadvisor(info)
