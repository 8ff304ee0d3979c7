"""Presets: the kubelet's named machines (exact CPU maps and declared counters) and large shapes."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cpumanager.core.topology import CPUTopology
from cpumanager.errors import MachineError
from cpumanager.presets import GIB, get_preset, is_preset, list_presets, parse_shape, synthetic

# sha256 (first 16 hex digits) of "cpu:core:socket:numa:uncore;..." for each kubelet fixture,
# computed from the kubelet's test tables; guards the compact encoding of the preset data.
KUBELET_DIGESTS = {
    "topoSingleSocketHT": "185fa85841792340",
    "topoDualSocketHT": "683d17a20970552a",
    "topoUncoreDualSocketNoSMT": "111417eb4b904194",
    "topoUncoreSingleSocketMultiNuma": "bcce1a26bccb64d6",
    "topoUncoreSingleSocketSMT": "493ace90eea6a97a",
    "topoUncoreSingleSocketNoSMT": "c95dde747c3a7e98",
    "topoDualSocketNoHT": "162f829adca01f25",
    "topoTripleSocketHT": "133d8f8343ec95ec",
    "topoQuadSocketFourWayHT": "067f2c1dfd4cf596",
    "topoDualSocketMultiNumaPerSocketHT": "4b527e23b45937d9",
    "fakeTopoMultiSocketDualSocketPerNumaHT": "0a35fc255b9d6471",
    "topoDualSocketMultiNumaPerSocketHTLarge": "f6617f68d989412f",
    "topoDualSocketSingleNumaPerSocketSMTUncore": "c6b1508772378d6c",
    "topoSingleSocketSingleNumaPerSocketSMTSmallUncore": "88c2082a4b934065",
    "topoSingleSocketSingleNumaPerSocketNoSMTSmallUncore": "85e7520bafb6382c",
    "topoSmallDualSocketSingleNumaPerSocketNoSMTUncore": "2575c6bbf6ba7539",
    "topoSmallSingleSocketSingleNumaPerSocketNoSMTUncore": "5002efdcba9511bc",
    "topoLargeSingleSocketSingleNumaPerSocketSMTUncore": "ce993bcd4ece90d9",
    "topoDualSocketMultiNumaPerSocketUncore": "b97073b2dd9498f3",
    "topoDualSocketSubNumaPerSocketHTMonolithicUncore": "3d9a72bc257b9937",
    "topoSingleSocketSingleNumaPerSocketPCoreHTMonolithicUncore": "458065797b69e7c4",
    "topoSingleSocketSingleNumaPerSocketPCoreHTECoreST": "b352ec6f8c66c915",
    "topoLargeSingleSocketSingleNumaPerSocketUncore": "455e98164834cd5a",
    "topoSingleSocketSingleNumaPerSocketUncore": "a3f04ed9c22b506b",
    "hintsTestMachineDiscovered": "a1a308c0015bd37d",
}

# name -> declared (NumCPUs, NumCores, NumSockets, NumNUMANodes, NumUncoreCache), verbatim.
DECLARED = [
    ("topoSingleSocketHT", (8, 4, 1, 0, 0)),
    ("topoDualSocketHT", (12, 6, 2, 0, 1)),
    ("topoQuadSocketFourWayHT", (288, 72, 4, 0, 0)),
    ("fakeTopoMultiSocketDualSocketPerNumaHT", (80, 40, 4, 2, 0)),
    ("topoSingleSocketSingleNumaPerSocketNoSMTSmallUncore", (128, 64, 1, 1, 16)),
    ("topoSingleSocketSingleNumaPerSocketPCoreHTECoreST", (28, 20, 1, 1, 0)),
    ("hintsTestMachineDiscovered", (12, 6, 0, 2, 2)),
]


def digest(topology: CPUTopology) -> str:
    text = ";".join(f"{r.cpu}:{r.core}:{r.socket}:{r.numa}:{r.l3}" for r in topology.cpus.values())
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@pytest.mark.parametrize("name", sorted(KUBELET_DIGESTS))
def test_kubelet_fixture_cpu_maps_are_exact(name: str) -> None:
    assert digest(get_preset(name)) == KUBELET_DIGESTS[name]


@pytest.mark.parametrize(("name", "counters"), DECLARED, ids=[n for n, _ in DECLARED])
def test_kubelet_fixture_counters_are_verbatim(name: str, counters: tuple[int, ...]) -> None:
    assert get_preset(name).counters() == counters


ALIASES = [
    ("dual-socket-ht", "topoDualSocketHT"),
    ("DUAL-SOCKET-HT", "topoDualSocketHT"),
    ("topodualsocketht", "topoDualSocketHT"),
    ("fake-multi-socket-dual-socket-per-numa-ht", "fakeTopoMultiSocketDualSocketPerNumaHT"),
    ("single-socket-single-numa-per-socket-p-core-ht-e-core-st",
     "topoSingleSocketSingleNumaPerSocketPCoreHTECoreST"),
    ("gb200", "gb200-tray"),
    ("8-socket", "xeon-8380h-8s"),
    ("amd-epyc-nps4", "epyc-7763-2s-nps4"),
    ("intel-xeon-6900p-snc3", "xeon-6972p-2s-snc3"),
    ("ia64-64-numa", "ia64-4s-64n"),
]  # fmt: skip


@pytest.mark.parametrize(("alias", "name"), ALIASES)
def test_aliases(alias: str, name: str) -> None:
    assert is_preset(alias)
    assert get_preset(alias) is get_preset(name)
    assert get_preset(alias).name == name


def test_listing_is_complete_and_unique() -> None:
    presets = list_presets()
    names = [p.name for p in presets]
    assert len(names) == len(set(names)) == 30
    assert set(KUBELET_DIGESTS) <= set(names)
    every = [n.lower() for p in presets for n in (p.name, *p.aliases)]
    assert len(every) == len(set(every))
    assert all(p.summary for p in presets)


def test_unknown_name_lists_the_choices() -> None:
    with pytest.raises(MachineError) as info:
        get_preset("no-such-box")
    message = str(info.value)
    assert "'no-such-box'" in message
    assert "dual-socket-ht" in message
    assert "gb200-tray" in message
    assert "\n" not in message
    assert not is_preset("no-such-box")


# name -> (CPUs, cores, sockets, NUMA nodes with CPUs, all NUMA nodes, L3 groups, threads)
LARGE = [
    ("epyc-7763-2s-nps4", (256, 128, 2, 8, 8, 16, 2)),
    ("xeon-6972p-2s-snc3", (384, 192, 2, 6, 6, 2, 2)),
    ("xeon-8380h-8s", (448, 224, 8, 8, 8, 8, 2)),
    ("ia64-4s-64n", (256, 256, 4, 64, 64, 64, 1)),
    ("gb200-tray", (144, 144, 2, 2, 34, 2, 1)),
]


@pytest.mark.parametrize(("name", "shape"), LARGE, ids=[n for n, _ in LARGE])
def test_large_shapes(name: str, shape: tuple[int, ...]) -> None:
    t = get_preset(name)
    cpus, cores, sockets, cpu_nodes, nodes, l3, threads = shape
    assert len(t.all_cpus) == cpus == t.num_cpus
    assert len(t.core_ids()) == cores
    assert len(t.socket_ids()) == sockets
    assert len(t.cpu_numa_ids()) == cpu_nodes
    assert len(t.numa_ids()) == nodes
    assert len(t.l3_ids()) == l3
    assert t.cpus_per_core == threads
    assert t.has_distances()
    for a in t.numa_ids():
        assert t.distance(a, a) == 10
        for b in t.numa_ids():
            assert t.distance(a, b) == t.distance(b, a)
            if a != b:
                assert t.distance(a, b) > 10


def test_gb200_has_grace_cpus_and_gpu_memory_nodes() -> None:
    t = get_preset("gb200-tray")
    assert t.cpus_in_numa_nodes([0]) == t.cpus_in_sockets([0])
    assert len(t.cpus_in_numa_nodes([0])) == 72
    assert t.numa_node(0).memory_bytes == 480 * GIB
    assert t.numa_node(2).memory_bytes == 186 * GIB
    assert t.numa_node(3).memory_bytes == 0
    assert not t.cpus_in_numa_nodes(range(2, 34))
    assert t.distance(0, 1) == 40
    assert t.distance(0, 2) == 80  # Grace 0 to its own GPU
    assert t.distance(0, 33) == 120  # to a GPU of the other Grace


def test_epyc_l3_groups_are_eight_core_ccds() -> None:
    t = get_preset("epyc-7763-2s-nps4")
    for l3 in t.l3_ids():
        group = t.cpus_in_l3([l3])
        assert len(group) == 16  # 8 cores x 2 threads
        assert len(t.numa_of(group)) == 1
    assert t.distance(0, 1) == 12
    assert t.distance(0, 4) == 32


def test_snc3_l3_spans_the_socket() -> None:
    t = get_preset("xeon-6972p-2s-snc3")
    assert t.l3_in_numa_nodes([0, 1, 2]) == (0,)
    assert t.numa_nodes_in_sockets([1]) == (3, 4, 5)


def test_linux_numbering_puts_siblings_a_machine_apart() -> None:
    t = synthetic(sockets=2, numa_per_socket=1, cores_per_numa=4, threads=2)
    assert t.siblings(0) == t.cpus_in_cores([0])
    assert list(t.siblings(3)) == [3, 11]
    assert t.info(4).socket == 1
    assert t.info(12).socket == 1


SHAPES = [
    ("2s4n16c2t2l", (256, 2, 8, 16)),
    ("2s/4n/16c/2t", (256, 2, 8, 8)),
    ("1s1n4c1t", (4, 1, 1, 1)),
    (" 1S2N2C2T ", (8, 1, 2, 2)),
]


@pytest.mark.parametrize(("text", "shape"), SHAPES)
def test_shape_strings(text: str, shape: tuple[int, int, int, int]) -> None:
    assert is_preset(text)
    t = get_preset(text)
    assert (len(t.all_cpus), len(t.socket_ids()), len(t.numa_ids()), len(t.l3_ids())) == shape
    assert parse_shape("dual-socket-ht") is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"sockets": 0}, "sockets must be at least 1"),
        ({"threads": 0}, "threads must be at least 1"),
        ({"cores_per_numa": 6, "l3_per_numa": 4}, "equal L3 groups"),
    ],
)
def test_synthetic_rejects_bad_shapes(kwargs: dict[str, int], message: str) -> None:
    with pytest.raises(MachineError, match=message):
        synthetic(**kwargs)


@settings(max_examples=40)
@given(
    st.integers(1, 4),
    st.integers(1, 4),
    st.sampled_from([1, 2, 4, 8]),
    st.integers(1, 4),
    st.sampled_from([1, 2]),
)
def test_synthetic_counts(sockets: int, numa: int, cores: int, threads: int, l3: int) -> None:
    if cores % l3:
        l3 = 1
    t = synthetic(
        sockets=sockets, numa_per_socket=numa, cores_per_numa=cores, threads=threads, l3_per_numa=l3
    )
    assert t.counters() == (
        sockets * numa * cores * threads,
        sockets * numa * cores,
        sockets,
        sockets * numa,
        sockets * numa * l3,
    )
    assert t.all_cpus == type(t.all_cpus).range(0, sockets * numa * cores * threads)
    for core in t.core_ids():
        assert t.cpus_in_cores([core]).min() == core
