"""Kubelet audit: topology_test.go and alignment_test.go cases not covered elsewhere.

Facts only (inputs and expected outputs) from the kubelet's tests of ``topology.Discover``,
the ``CPUDetails`` queries, ``CPUCoreID``/``CPUSocketID``/``CPUNUMANodeID``,
``CPUsPerUncore``, ``getUncoreCacheID`` and ``CheckAlignment``. Each row id keeps the
kubelet test's name. The discover cases already in tests/data/discover_vectors.json
(EmptyUncoreCache, FailNumCores, OneSocketHT, DualSocketMultiNumaPerSocketHT) are not
repeated here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from cpumanager.core.cpuset import CPUSet
from cpumanager.core.discover import topology_from_cadvisor
from cpumanager.core.topology import CPUInfo, CPUTopology
from cpumanager.errors import MachineError

# --- Test_Discover ----------------------------------------------------------------------

# A core as cadvisor reports it: (NUMA node, socket, cadvisor core id, threads, uncore ids).
CoreRow = tuple[int, int, int, list[int], list[int]]


def _machine_info(num_cores: int, num_sockets: int, cores: Sequence[CoreRow]) -> dict[str, Any]:
    """A cadvisor MachineInfo with the nodes in order of first appearance."""
    nodes: dict[int, list[dict[str, Any]]] = {}
    for node, socket, core_id, threads, uncores in cores:
        nodes.setdefault(node, []).append(
            {
                "socket_id": socket,
                "id": core_id,
                "threads": threads,
                "uncore_caches": [{"id": u} for u in uncores],
            }
        )
    return {
        "num_cores": num_cores,
        "num_sockets": num_sockets,
        "topology": [{"id": node, "cores": listed} for node, listed in nodes.items()],
    }


# cadvisor core ids of the dual Xeon Gold 6230 fixture, per 10-core group
_IDS_A = [0, 1, 2, 8, 9, 16, 17, 18, 24, 25]
_IDS_B = [3, 4, 10, 11, 12, 19, 20, 26, 27, 28]

# DualNumaMultiSocketPerNumaHT: 4 sockets of 10 cores, 2 per NUMA node, threads c and c+40
_DUAL_NUMA_MULTI_SOCKET = [
    (socket // 2, socket, (_IDS_A if socket % 2 == 0 else _IDS_B)[i], [c, c + 40], [1])
    for socket in range(4)
    for i, c in enumerate(range(socket * 10, socket * 10 + 10))
]
# UncoreOneSocketNoSMT (EPYC 7452, 4 cores per LLC): core i has thread i and LLC i // 4
_UNCORE_ONE_SOCKET = [(0, 0, i, [i], [i // 4]) for i in range(32)]
# UncoreDualSocketSMT (EPYC 24-core, NPS=2): core i on node i // 12, socket i // 24, LLC i // 4
_UNCORE_DUAL_SOCKET = [(i // 12, i // 24, i, [i, i + 48], [i // 4]) for i in range(48)]

# Expected CPU map: cpu -> (core, socket, NUMA node, uncore cache)
Expected = dict[int, tuple[int, int, int, int]]

DISCOVER_OK: list[tuple[str, dict[str, Any], tuple[int, int, int, int, int], Expected]] = [
    (
        "Test_Discover/DualNumaMultiSocketPerNumaHT",
        _machine_info(80, 4, _DUAL_NUMA_MULTI_SOCKET),
        (80, 40, 4, 2, 1),
        {cpu: (cpu % 40, (cpu % 40) // 10, (cpu % 40) // 20, 1) for cpu in range(80)},
    ),
    (
        "Test_Discover/DualSocketNoHT",
        _machine_info(
            4,
            2,
            [
                (0, 0, 0, [0], [0]),
                (0, 0, 2, [2], [0]),
                (1, 1, 1, [1], [0]),
                (1, 1, 3, [3], [0]),
            ],
        ),
        (4, 4, 2, 2, 1),
        {0: (0, 0, 0, 0), 1: (1, 1, 1, 0), 2: (2, 0, 0, 0), 3: (3, 1, 1, 0)},
    ),
    (
        "Test_Discover/DualSocketHT - non unique Core'ID's",
        _machine_info(
            12,
            2,
            [
                (0, 0, 0, [0, 6], [0]),
                (0, 0, 1, [1, 7], [0]),
                (0, 0, 2, [2, 8], [0]),
                (1, 1, 0, [3, 9], [0]),
                (1, 1, 1, [4, 10], [0]),
                (1, 1, 2, [5, 11], [0]),
            ],
        ),
        (12, 6, 2, 2, 1),
        {cpu: (cpu % 6, (cpu % 6) // 3, (cpu % 6) // 3, 0) for cpu in range(12)},
    ),
    (
        "Test_Discover/UncoreOneSocketNoSMT",
        _machine_info(32, 1, _UNCORE_ONE_SOCKET),
        (32, 32, 1, 1, 8),
        {cpu: (cpu, 0, 0, cpu // 4) for cpu in range(32)},
    ),
    (
        "Test_Discover/UncoreDualSocketSMT",
        _machine_info(96, 2, _UNCORE_DUAL_SOCKET),
        (96, 48, 2, 4, 12),
        {cpu: (cpu % 48, (cpu % 48) // 24, (cpu % 48) // 12, (cpu % 48) // 4) for cpu in range(96)},
    ),
]


@pytest.mark.parametrize(
    ("machine_info", "counters", "expected"),
    [row[1:] for row in DISCOVER_OK],
    ids=[row[0] for row in DISCOVER_OK],
)
def test_discover(
    machine_info: dict[str, Any], counters: tuple[int, ...], expected: Expected
) -> None:
    topology = topology_from_cadvisor(machine_info)
    assert topology.counters() == counters
    got = {r.cpu: (r.core, r.socket, r.numa, r.l3) for r in topology.cpus.values()}
    assert got == expected


def _one_socket_ht_with(bad_threads: list[int], position: int) -> dict[str, Any]:
    cores: list[CoreRow] = [(0, 0, i, [i, i + 4], [1]) for i in range(4)]
    node, socket, core_id, _, uncores = cores[position]
    cores[position] = (node, socket, core_id, bad_threads, uncores)
    return _machine_info(8, 1, cores)


DISCOVER_FAIL = [
    (
        "Test_Discover/OneSocketHT fail (repeated thread)",
        _one_socket_ht_with([2, 2], 2),
        "cpus provided are not unique",
    ),
    (
        "Test_Discover/OneSocketHT fail (core without threads)",
        _one_socket_ht_with([], 3),
        "no cpus provided",
    ),
]


@pytest.mark.parametrize(
    ("machine_info", "message"),
    [row[1:] for row in DISCOVER_FAIL],
    ids=[row[0] for row in DISCOVER_FAIL],
)
def test_discover_errors(machine_info: dict[str, Any], message: str) -> None:
    with pytest.raises(MachineError) as caught:
        topology_from_cadvisor(machine_info)
    assert caught.value.message == message


# --- Test_getUncoreCacheID ---------------------------------------------------------------

UNCORE_ID = [
    ("Test_getUncoreCacheID/Core with uncore cache info", 1, [{"id": 5}, {"id": 6}], 5),
    ("Test_getUncoreCacheID/Core with empty uncore cache info", 2, [], 2),
    ("Test_getUncoreCacheID/Core with nil uncore cache info", 1, None, 1),
]


@pytest.mark.parametrize(
    ("socket", "caches", "expected"),
    [row[1:] for row in UNCORE_ID],
    ids=[row[0] for row in UNCORE_ID],
)
def test_uncore_cache_id(socket: int, caches: list[dict[str, int]] | None, expected: int) -> None:
    core: dict[str, Any] = {"socket_id": socket, "id": 0, "threads": [0]}
    if caches is not None:
        core["uncore_caches"] = caches
    info = {"num_cores": 1, "num_sockets": 1, "topology": [{"id": 0, "cores": [core]}]}
    assert topology_from_cadvisor(info).info(0).l3 == expected


# --- CPUDetails queries --------------------------------------------------------------------

# A CPU map as the kubelet's table tests write it: cpu -> fields (missing fields are 0).
Details = dict[int, dict[str, int]]


def _topology(details: Details) -> CPUTopology:
    return CPUTopology(
        CPUInfo(
            cpu=cpu,
            core=fields.get("core", 0),
            socket=fields.get("socket", 0),
            numa=fields.get("numa", 0),
            l3=fields.get("l3", 0),
        )
        for cpu, fields in details.items()
    )


def _s(*ids: int) -> dict[str, int]:
    return {"socket": ids[0]} if len(ids) == 1 else {"socket": ids[0], "numa": ids[1]}


_SOCKET_NUMA_1 = {0: _s(0, 0), 1: _s(1, 0), 2: _s(2, 1), 3: _s(3, 1)}
_SOCKET_NUMA_2 = {0: _s(0, 0), 1: _s(0, 1), 2: _s(1, 2), 3: _s(1, 3)}  # poorly designed boards
_NUMA_SOCKET = {0: _s(0, 0), 1: _s(1, 0), 2: _s(2, 1), 3: _s(3, 2)}
_NUMA_CORE = {
    0: {"numa": 0, "core": 0},
    1: {"numa": 0, "core": 1},
    2: {"numa": 1, "core": 2},
    3: {"numa": 2, "core": 3},
}
_SOCKET_CORE = {
    0: {"socket": 0, "core": 0},
    1: {"socket": 0, "core": 1},
    2: {"socket": 1, "core": 2},
    3: {"socket": 2, "core": 3},
}

Query = Callable[[CPUTopology, list[int]], Sequence[int]]
QUERIES: dict[str, Query] = {
    "KeepOnly": lambda t, ids: sorted(t.restricted_to(CPUSet(ids)).cpus),
    "NUMANodes": lambda t, _: t.cpu_numa_ids(),
    "NUMANodesInSockets": lambda t, ids: t.numa_nodes_in_sockets(ids),
    "Sockets": lambda t, _: t.socket_ids(),
    "CPUsInSockets": lambda t, ids: list(t.cpus_in_sockets(ids)),
    "SocketsInNUMANodes": lambda t, ids: t.sockets_in_numa_nodes(ids),
    "Cores": lambda t, _: t.core_ids(),
    "CoresInNUMANodes": lambda t, ids: t.cores_in_numa_nodes(ids),
    "CoresInSockets": lambda t, ids: t.cores_in_sockets(ids),
    "CPUs": lambda t, _: list(t.all_cpus),
    "CPUsInNUMANodes": lambda t, ids: list(t.cpus_in_numa_nodes(ids)),
    "CPUsInCores": lambda t, ids: list(t.cpus_in_cores(ids)),
    "CPUsInUncoreCaches": lambda t, ids: list(t.cpus_in_l3(ids)),
    "UncoreInNUMANodes": lambda t, ids: t.l3_in_numa_nodes(ids),
    "UncoreCaches": lambda t, _: t.l3_ids(),
}

_ZEROS = {0: {}, 1: {}, 2: {}}
DETAIL_ROWS: list[tuple[str, str, Details, list[int], list[int]]] = [
    ("TestCPUDetailsKeepOnly/cpus is in CPUDetails.", "KeepOnly", _ZEROS, [0, 1], [0, 1]),
    ("TestCPUDetailsKeepOnly/cpus is not in CPUDetails.", "KeepOnly", _ZEROS, [3], []),
    (
        "TestCPUDetailsNUMANodes/Get CPUset of NUMANode IDs",
        "NUMANodes",
        {0: {"numa": 0}, 1: {"numa": 0}, 2: {"numa": 1}, 3: {"numa": 1}},
        [],
        [0, 1],
    ),
    (
        "TestCPUDetailsNUMANodesInSockets/Socket IDs is in CPUDetails.",
        "NUMANodesInSockets",
        _SOCKET_NUMA_1,
        [0, 1, 2],
        [0, 1],
    ),
    (
        "TestCPUDetailsNUMANodesInSockets/Socket IDs is not in CPUDetails.",
        "NUMANodesInSockets",
        _SOCKET_NUMA_1,
        [4],
        [],
    ),
    (
        "TestCPUDetailsNUMANodesInSockets/Socket IDs is in CPUDetails. "
        "(poorly designed mainboards)",
        "NUMANodesInSockets",
        _SOCKET_NUMA_2,
        [0],
        [0, 1],
    ),
    (
        "TestCPUDetailsNUMANodesInSockets/Socket IDs is not in CPUDetails. "
        "(poorly designed mainboards)",
        "NUMANodesInSockets",
        _SOCKET_NUMA_2,
        [3],
        [],
    ),
    (
        "TestCPUDetailsSockets/Get CPUset of Socket IDs",
        "Sockets",
        {0: _s(0), 1: _s(0), 2: _s(1), 3: _s(1)},
        [],
        [0, 1],
    ),
    (
        "TestCPUDetailsCPUsInSockets/Socket IDs is in CPUDetails.",
        "CPUsInSockets",
        {0: _s(0), 1: _s(0), 2: _s(1), 3: _s(2)},
        [0, 1],
        [0, 1, 2],
    ),
    (
        "TestCPUDetailsCPUsInSockets/Socket IDs is not in CPUDetails.",
        "CPUsInSockets",
        {0: _s(0), 1: _s(0), 2: _s(1), 3: _s(2)},
        [3],
        [],
    ),
    (
        "TestCPUDetailsSocketsInNUMANodes/NUMANodes IDs is in CPUDetails.",
        "SocketsInNUMANodes",
        _NUMA_SOCKET,
        [0, 1],
        [0, 1, 2],
    ),
    (
        "TestCPUDetailsSocketsInNUMANodes/NUMANodes IDs is not in CPUDetails.",
        "SocketsInNUMANodes",
        _NUMA_SOCKET,
        [3],
        [],
    ),
    (
        "TestCPUDetailsCores/Get CPUset of Cores",
        "Cores",
        {0: {"core": 0}, 1: {"core": 0}, 2: {"core": 1}, 3: {"core": 1}},
        [],
        [0, 1],
    ),
    (
        "TestCPUDetailsCoresInNUMANodes/NUMANodes IDs is in CPUDetails.",
        "CoresInNUMANodes",
        _NUMA_CORE,
        [0, 1],
        [0, 1, 2],
    ),
    (
        "TestCPUDetailsCoresInNUMANodes/NUMANodes IDs is not in CPUDetails.",
        "CoresInNUMANodes",
        _NUMA_CORE,
        [3],
        [],
    ),
    (
        "TestCPUDetailsCoresInSockets/Socket IDs is in CPUDetails.",
        "CoresInSockets",
        _SOCKET_CORE,
        [0, 1],
        [0, 1, 2],
    ),
    (
        "TestCPUDetailsCoresInSockets/Socket IDs is not in CPUDetails.",
        "CoresInSockets",
        _SOCKET_CORE,
        [3],
        [],
    ),
    ("TestCPUDetailsCPUs/Get CPUset of CPUs", "CPUs", {0: {}, 1: {}}, [], [0, 1]),
    (
        "TestCPUDetailsCPUsInNUMANodes/NUMANode IDs is in CPUDetails.",
        "CPUsInNUMANodes",
        {0: {"numa": 0}, 1: {"numa": 0}, 2: {"numa": 1}, 3: {"numa": 2}},
        [0, 1],
        [0, 1, 2],
    ),
    (
        "TestCPUDetailsCPUsInNUMANodes/NUMANode IDs is not in CPUDetails.",
        "CPUsInNUMANodes",
        {0: {"numa": 0}, 1: {"numa": 0}, 2: {"numa": 1}, 3: {"numa": 2}},
        [3],
        [],
    ),
    (
        "TestCPUDetailsCPUsInCores/Core IDs is in CPUDetails.",
        "CPUsInCores",
        {0: {"core": 0}, 1: {"core": 0}, 2: {"core": 1}, 3: {"core": 2}},
        [0, 1],
        [0, 1, 2],
    ),
    (
        "TestCPUDetailsCPUsInCores/Core IDs is not in CPUDetails.",
        "CPUsInCores",
        {0: {"core": 0}, 1: {"core": 0}, 2: {"core": 1}, 3: {"core": 2}},
        [3],
        [],
    ),
    (
        "TestCPUsInUncoreCaches/Single Uncore Cache",
        "CPUsInUncoreCaches",
        {0: {"l3": 0}, 1: {"l3": 0}},
        [0],
        [0, 1],
    ),
    (
        "TestCPUsInUncoreCaches/Multiple Uncore Caches",
        "CPUsInUncoreCaches",
        {0: {"l3": 0}, 1: {"l3": 0}, 2: {"l3": 1}},
        [0, 1],
        [0, 1, 2],
    ),
    (
        "TestCPUsInUncoreCaches/Uncore Cache does not exist",
        "CPUsInUncoreCaches",
        {0: {"l3": 0}},
        [1],
        [],
    ),
    (
        "TestUncoreInNUMANodes/Single NUMA Node",
        "UncoreInNUMANodes",
        {0: {"numa": 0, "l3": 0}, 1: {"numa": 0, "l3": 1}},
        [0],
        [0, 1],
    ),
    (
        "TestUncoreInNUMANodes/Multiple NUMANode",
        "UncoreInNUMANodes",
        {
            0: {"numa": 0, "l3": 0},
            1: {"numa": 0, "l3": 0},
            20: {"numa": 1, "l3": 1},
            21: {"numa": 1, "l3": 1},
        },
        [0, 1],
        [0, 1],
    ),
    (
        "TestUncoreInNUMANodes/Non-Existent NUMANode",
        "UncoreInNUMANodes",
        {0: {"numa": 1, "l3": 0}},
        [0],
        [],
    ),
    (
        "TestUncoreCaches/Get CPUSet of UncoreCache IDs",
        "UncoreCaches",
        {0: {"l3": 0}, 1: {"l3": 1}, 2: {"l3": 2}},
        [],
        [0, 1, 2],
    ),
    ("TestUncoreCaches/Empty CPUDetails", "UncoreCaches", {}, [], []),
    (
        "TestUncoreCaches/Shared UncoreCache",
        "UncoreCaches",
        {0: {"l3": 0}, 1: {"l3": 0}, 2: {"l3": 0}},
        [],
        [0],
    ),
]


@pytest.mark.parametrize(
    ("query", "details", "ids", "expected"),
    [row[1:] for row in DETAIL_ROWS],
    ids=[row[0] for row in DETAIL_ROWS],
)
def test_cpu_details_query(
    query: str, details: Details, ids: list[int], expected: list[int]
) -> None:
    assert list(QUERIES[query](_topology(details), ids)) == expected


# --- TestCPUCoreID / TestCPUSocketID / TestCPUNUMANodeID -----------------------------------

# topoDualSocketHT as these tests declare it: core c % 6, socket and NUMA node c % 2
_DUAL_SOCKET_HT = _topology(
    {cpu: {"core": cpu % 6, "socket": cpu % 2, "numa": cpu % 2} for cpu in range(12)}
)

CPU_LOOKUPS: list[tuple[str, str, int, int | None]] = [
    ("TestCPUCoreID/Known Core ID", "core", 2, 2),
    ("TestCPUCoreID/Known Core ID (core sibling).", "core", 8, 2),
    ("TestCPUCoreID/Unknown Core ID.", "core", -2, None),
    ("TestCPUSocketID/Known Core ID", "socket", 3, 1),
    ("TestCPUSocketID/Known Core ID (core sibling).", "socket", 9, 1),
    ("TestCPUSocketID/Unknown Core ID.", "socket", 1000, None),
    ("TestCPUNUMANodeID/Known Core ID", "numa", 0, 0),
    ("TestCPUNUMANodeID/Known Core ID (core sibling).", "numa", 6, 0),
    ("TestCPUNUMANodeID/Unknown Core ID.", "numa", 1000, None),
]


@pytest.mark.parametrize(
    ("field", "cpu", "expected"),
    [row[1:] for row in CPU_LOOKUPS],
    ids=[row[0] for row in CPU_LOOKUPS],
)
def test_cpu_lookup(field: str, cpu: int, expected: int | None) -> None:
    if expected is None:
        with pytest.raises(MachineError) as caught:
            _DUAL_SOCKET_HT.info(cpu)
        assert caught.value.message == f"unknown CPU ID: {cpu}"
    else:
        assert getattr(_DUAL_SOCKET_HT.info(cpu), field) == expected


# --- TestCPUsPerUncore -------------------------------------------------------------------

PER_UNCORE = [
    ("TestCPUsPerUncore/Zero Number of UncoreCache", 8, 0, 0),
    ("TestCPUsPerUncore/Normal case", 16, 2, 8),
    ("TestCPUsPerUncore/Single shared UncoreCache", 8, 1, 8),
]


@pytest.mark.parametrize(
    ("num_cpus", "num_uncore", "expected"),
    [row[1:] for row in PER_UNCORE],
    ids=[row[0] for row in PER_UNCORE],
)
def test_cpus_per_uncore(num_cpus: int, num_uncore: int, expected: int) -> None:
    topology = CPUTopology((), num_cpus=num_cpus, num_uncore_caches=num_uncore)
    assert topology.cpus_per_uncore_cache == expected


# --- alignment_test.go: TestNewAlignment -------------------------------------------------

# 32 CPUs, one socket, no SMT, 8 uncore caches of 4 CPUs (cache = cpu // 4)
_UNCORE_32 = _topology({cpu: {"core": cpu, "l3": cpu // 4} for cpu in range(32)})

ALIGNMENT = [
    ("TestNewAlignment/empty cpuset", "", True),
    ("TestNewAlignment/single random CPU", "11", True),
    ("TestNewAlignment/less CPUs than a uncore cache group", "29-31", True),
    ("TestNewAlignment/enough CPUs to fill a uncore cache group", "8-11", True),
    ("TestNewAlignment/more CPUs than a full a uncore cache group", "9-11,23", False),
    (
        "TestNewAlignment/enough CPUs to exactly fill multiple uncore cache groups",
        "8-11,16-19",
        False,
    ),
]


@pytest.mark.parametrize(
    ("cpus", "aligned"), [row[1:] for row in ALIGNMENT], ids=[row[0] for row in ALIGNMENT]
)
def test_uncore_alignment(cpus: str, aligned: bool) -> None:
    assert _UNCORE_32.uncore_aligned(CPUSet.parse(cpus)) is aligned


def test_uncore_alignment_with_a_cpu_the_machine_lacks() -> None:
    """The kubelet treats an unknown CPU as unaligned once two CPUs are checked."""
    assert _UNCORE_32.uncore_aligned(CPUSet.parse("0,99")) is False
    assert _UNCORE_32.uncore_aligned(CPUSet.parse("99")) is True
