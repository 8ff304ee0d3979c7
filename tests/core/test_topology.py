"""CPUTopology: declared counters, ANY-of queries and the kubelet's fixture quirks."""

from __future__ import annotations

from types import MappingProxyType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cpumanager.core.cpuset import CPUSet
from cpumanager.core.topology import CPUInfo, CPUTopology, NUMANodeInfo
from cpumanager.errors import MachineError
from cpumanager.presets import get_preset, synthetic


def cpus(text: str) -> CPUSet:
    return CPUSet.parse(text)


DUAL = get_preset("topoDualSocketHT")  # CPUs 0-11, sockets alternate, siblings c and c+6
MULTI = get_preset("topoDualSocketMultiNumaPerSocketHT")  # 2 sockets x 2 NUMA, 80 CPUs
UNCORE_REUSED = get_preset("topoDualSocketMultiNumaPerSocketUncore")  # core ids repeat


def test_declared_counters_are_kept_verbatim() -> None:
    assert DUAL.counters() == (12, 6, 2, 0, 1)
    assert DUAL.cpus_per_core == 2
    assert DUAL.cpus_per_socket == 6
    assert DUAL.cpus_per_uncore_cache == 12
    odd = get_preset("topoSingleSocketSingleNumaPerSocketNoSMTSmallUncore")
    assert len(odd.all_cpus) == 64
    assert odd.num_cpus == 128
    assert odd.cpus_per_core == 2  # declared 128 / 64, although every core has one thread
    hybrid = get_preset("topoSingleSocketSingleNumaPerSocketPCoreHTMonolithicUncore")
    assert hybrid.cpus_per_core == 1  # 24 // 16


def test_counters_default_to_the_cpu_map() -> None:
    t = CPUTopology([CPUInfo(0, 0, 0, 0, 0), CPUInfo(1, 0, 0, 0, 0), CPUInfo(2, 2, 1, 1, 5)])
    assert t.counters() == (3, 2, 2, 2, 2)
    assert CPUTopology([]).cpus_per_core == 0
    assert CPUTopology([]).cpus_per_socket == 0
    assert CPUTopology([]).cpus_per_uncore_cache == 0


QUERIES = [
    ("cpus_in_sockets", [0], "0,2,4,6,8,10"),
    ("cpus_in_sockets", [1], "1,3,5,7,9,11"),
    ("cpus_in_sockets", [0, 1], "0-11"),
    ("cpus_in_sockets", [7], ""),
    ("cpus_in_numa_nodes", [1], "1,3,5,7,9,11"),
    ("cpus_in_cores", [0, 1], "0-1,6-7"),
    ("cpus_in_l3", [0], "0-11"),
]


@pytest.mark.parametrize(("query", "ids", "expected"), QUERIES)
def test_cpu_queries_on_dual_socket_ht(query: str, ids: list[int], expected: str) -> None:
    assert getattr(DUAL, query)(ids) == cpus(expected)


def test_id_queries_on_multi_numa() -> None:
    assert MULTI.socket_ids() == (0, 1)
    assert MULTI.numa_ids() == (0, 1, 2, 3)
    assert MULTI.cpu_numa_ids() == (0, 1, 2, 3)
    assert MULTI.numa_nodes_in_sockets([0]) == (0, 1)
    assert MULTI.numa_nodes_in_sockets([1]) == (2, 3)
    assert MULTI.sockets_in_numa_nodes([1, 2]) == (0, 1)
    assert MULTI.are_numa_nodes_in_same_socket([0, 1])
    assert not MULTI.are_numa_nodes_in_same_socket([1, 2])
    assert not MULTI.are_numa_nodes_in_same_socket([0, 9])  # unknown id
    assert MULTI.are_numa_nodes_in_same_socket([])
    assert len(MULTI.cores_in_numa_nodes([0])) == 10
    assert len(MULTI.cores_in_sockets([0, 1])) == 40
    assert MULTI.l3_in_numa_nodes([0]) == (0,)
    assert MULTI.numa_of(cpus("0,10")) == (0, 1)
    assert MULTI.cores_of(cpus("0,40")) == (0,)
    assert MULTI.l3_of(CPUSet()) == ()


def test_core_ids_that_repeat_across_sockets_match_every_cpu() -> None:
    # The kubelet's lookups by core id are topology-wide: core 0 is on both sockets here.
    core0 = UNCORE_REUSED.cpus_in_cores([0])
    assert len(core0) == 2
    assert len(UNCORE_REUSED.sockets_of(core0)) == 2
    assert UNCORE_REUSED.siblings(core0.min()) == core0


def test_lookups_and_unknown_ids() -> None:
    assert DUAL.info(7) == CPUInfo(cpu=7, core=1, socket=1, numa=1, l3=0)
    assert DUAL.siblings(7) == cpus("1,7")
    with pytest.raises(MachineError, match="unknown CPU ID: 12"):
        DUAL.info(12)
    with pytest.raises(MachineError, match="unknown NUMA node 5"):
        DUAL.numa_node(5)
    assert DUAL.distance(0, 1) is None
    assert DUAL.distance(7, 0) is None
    assert DUAL.has_distances() is False


def test_restricted_to_keeps_counters_and_nodes() -> None:
    part = MULTI.restricted_to(cpus("0-9"))
    assert part.all_cpus == cpus("0-9")
    assert part.counters() == MULTI.counters()
    assert part.numa_ids() == MULTI.numa_ids()
    assert part.cpu_numa_ids() == (0,)


def test_invalid_cpu_maps() -> None:
    with pytest.raises(MachineError, match="described twice"):
        CPUTopology([CPUInfo(0, 0, 0, 0, 0), CPUInfo(0, 1, 0, 0, 0)])
    with pytest.raises(MachineError, match="negative"):
        CPUTopology([CPUInfo(0, 0, -1, 0, 0)])


def test_value_behaviour() -> None:
    again = get_preset("dual-socket-ht")
    assert again == DUAL
    assert hash(again) == hash(DUAL)
    assert DUAL != MULTI
    assert DUAL != "topology"
    assert "cpus=12" in repr(DUAL)
    with pytest.raises(AttributeError, match="immutable"):
        DUAL.name = "x"


def test_memory_only_nodes_and_distances() -> None:
    nodes = [
        NUMANodeInfo(0, 1 << 30, MappingProxyType({0: 10, 1: 20})),
        NUMANodeInfo(1, 1 << 34, MappingProxyType({0: 20, 1: 10})),
    ]
    t = CPUTopology([CPUInfo(0, 0, 0, 0, 0)], numa_nodes=nodes)
    assert t.numa_ids() == (0, 1)
    assert t.cpu_numa_ids() == (0,)
    assert t.num_numa_nodes == 1  # like the kubelet: nodes that hold CPUs
    assert t.has_distances()
    assert t.distance(1, 0) == 20
    assert t.numa_node(1).memory_bytes == 1 << 34


shapes = st.tuples(
    st.integers(1, 3), st.integers(1, 3), st.sampled_from([1, 2, 4]), st.integers(1, 4)
)


@settings(max_examples=40)
@given(shapes, st.data())
def test_queries_partition_the_cpus(shape: tuple[int, int, int, int], data: st.DataObject) -> None:
    sockets, numa, cores, threads = shape
    t = synthetic(sockets=sockets, numa_per_socket=numa, cores_per_numa=cores, threads=threads)
    socket_sets = [t.cpus_in_sockets([s]) for s in t.socket_ids()]
    assert CPUSet().union(*socket_sets) == t.all_cpus
    assert sum(len(s) for s in socket_sets) == len(t.all_cpus)
    for node in t.cpu_numa_ids():
        node_cpus = t.cpus_in_numa_nodes([node])
        assert len(t.sockets_of(node_cpus)) == 1
        assert t.cpus_in_cores(t.cores_of(node_cpus)) == node_cpus
    cpu = data.draw(st.sampled_from(sorted(t.all_cpus)))
    assert len(t.siblings(cpu)) == threads
    assert cpu in t.cpus_in_numa_nodes(t.numa_of(CPUSet([cpu])))


def _records(draw: st.DrawFn) -> list[CPUInfo]:
    count = draw(st.integers(1, 6))
    ids = st.integers(0, 2)
    return [CPUInfo(cpu, draw(ids), draw(ids), draw(ids), draw(ids)) for cpu in range(count)]


@st.composite
def topologies(draw: st.DrawFn) -> CPUTopology:
    records = _records(draw)
    nodes = [
        NUMANodeInfo(
            n, draw(st.sampled_from([None, 1 << 30])), {n: 10, 3: draw(st.sampled_from([20, 21]))}
        )
        for n in sorted({r.numa for r in records} | set(draw(st.sets(st.integers(0, 3)))))
    ]
    declared = draw(st.sampled_from([None, 8]))
    return CPUTopology(records, numa_nodes=nodes, num_cores=declared)


@settings(max_examples=300, deadline=None)
@given(topologies(), topologies())
def test_equality_and_hash_compare_the_whole_value(a: CPUTopology, b: CPUTopology) -> None:
    same = (
        dict(a.cpus) == dict(b.cpus)
        and a.counters() == b.counters()
        and a.numa_nodes == b.numa_nodes
    )
    twin = CPUTopology(a.cpus.values(), numa_nodes=a.numa_nodes, num_cores=a.num_cores)
    assert (a == b) is same
    assert a == twin
    assert hash(a) == hash(twin)
    if same:
        assert hash(a) == hash(b)


def test_derived_tables_are_built_once_per_topology() -> None:
    topo = synthetic(sockets=1, numa_per_socket=2, cores_per_numa=2)
    calls: list[int] = []

    def build(t: CPUTopology) -> int:
        calls.append(1)
        return len(t.all_cpus)

    assert topo.derived("test-count", build) == topo.derived("test-count", build) == 8
    assert calls == [1]
    assert (
        synthetic(sockets=1, numa_per_socket=2, cores_per_numa=2).derived("test-count", build) == 8
    )
    assert calls == [1, 1]  # an equal machine is another object: its own tables
