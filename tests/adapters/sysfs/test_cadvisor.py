"""The kubelet-view reading (cadvisor + Discover) on small trees built here.

``MEASURED`` is what cadvisor v0.51 (``sysinfo.GetNodesInfo``, ``machine.GetSockets`` /
``GetPhysicalCores``) and the kubelet v1.32's ``topology.Discover`` returned, run with chroot
on exactly the trees ``cadvisor_trees.CASES`` writes (amd64): NumCores, NumSockets,
NumPhysicalCores, per node (id, node caches, core caches, uncore caches), Discover's
counters (cpus, cores, sockets, NUMA nodes, uncore caches) and per CPU (cpu, core, socket,
NUMA node, uncore cache); None where cadvisor or Discover failed. The cadvisor answers the
other tests state (a malformed online list, a cache without id, node order, the s390 tree read
with amd64 rules) were measured the same way; only the s390x rule comes from reading
cadvisor's code, the harness running on amd64.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cpumanager.adapters.sysfs import SysfsReader, discover
from cpumanager.adapters.sysfs.cadvisor import read_machine_info
from cpumanager.core.discover import topology_from_cadvisor
from cpumanager.errors import MachineError
from tests.adapters.sysfs.cadvisor_trees import CASES, CPU, build, regular, write

Row = tuple[int, int, int, int, int]

# name: (NumCores, NumSockets, NumPhysicalCores, nodes, Discover counters, CPU details)
MEASURED: dict[str, tuple[Any, ...]] = {
    "bad-core-id": (0, 1, 5, None, None, None),
    "cache-noid": (8, 1, 4, [(0, 0, 0, 0)], (8, 4, 1, 1, 1), (
        (0, 0, 0, 0, 0), (1, 1, 0, 0, 0), (2, 2, 0, 0, 0), (3, 3, 0, 0, 0),
        (4, 0, 0, 0, 0), (5, 1, 0, 0, 0), (6, 2, 0, 0, 0), (7, 3, 0, 0, 0))),
    "core-id-reused": (4, 1, 1, [(0, 1, 0, 0)], (4, 1, 1, 1, 1), (
        (0, 0, 0, 0, 0), (1, 0, 0, 0, 0), (2, 0, 0, 0, 0), (3, 0, 0, 0, 0))),
    "cpuinfo-sockets": (4, 2, 2, [(0, 1, 6, 0)], (4, 2, 2, 1, 1), (
        (0, 0, 0, 0, 0), (1, 1, 0, 0, 0), (2, 0, 0, 0, 0), (3, 1, 0, 0, 0))),
    "l3-per-node": (8, 1, 4, [(0, 1, 12, 0)], (8, 4, 1, 1, 1), (
        (0, 0, 0, 0, 0), (1, 1, 0, 0, 0), (2, 2, 0, 0, 0), (3, 3, 0, 0, 0),
        (4, 0, 0, 0, 0), (5, 1, 0, 0, 0), (6, 2, 0, 0, 0), (7, 3, 0, 0, 0))),
    "l3-split": (8, 1, 4, [(0, 0, 12, 4)], (8, 4, 1, 1, 2), (
        (0, 0, 0, 0, 0), (1, 1, 0, 0, 0), (2, 2, 0, 0, 1), (3, 3, 0, 0, 1),
        (4, 0, 0, 0, 0), (5, 1, 0, 0, 0), (6, 2, 0, 0, 1), (7, 3, 0, 0, 1))),
    "no-core-id": (7, 1, 4, [(0, 1, 9, 1)], (7, 4, 1, 1, 1), (
        (0, 0, 0, 0, 0), (1, 1, 0, 0, 0), (2, 2, 0, 0, 0), (4, 0, 0, 0, 0),
        (5, 1, 0, 0, 0), (6, 2, 0, 0, 0), (7, 7, 0, 0, 0))),
    "node-without-links": (0, 1, 2, [(0, 0, 0, 0)], None, None),
    "nonuma-2pkg": (8, 2, 4, [(0, 1, 6, 0), (1, 1, 6, 0)], (8, 4, 2, 2, 2), (
        (0, 0, 0, 0, 0), (1, 1, 0, 0, 0), (2, 2, 1, 1, 1), (3, 3, 1, 1, 1),
        (4, 0, 0, 0, 0), (5, 1, 0, 0, 0), (6, 2, 1, 1, 1), (7, 3, 1, 1, 1))),
    "offline": (6, 1, 4, [(0, 1, 6, 2)], (6, 4, 1, 1, 1), (
        (0, 0, 0, 0, 0), (1, 1, 0, 0, 0), (2, 2, 0, 0, 0), (3, 3, 0, 0, 0),
        (4, 0, 0, 0, 0), (5, 1, 0, 0, 0))),
    "offline-nonuma": (8, 2, 3, [(0, 1, 6, 0), (1, 0, 3, 1)], (8, 3, 2, 2, 2), (
        (0, 0, 0, 0, 0), (1, 1, 0, 0, 0), (2, 2, 1, 1, 1), (4, 0, 0, 0, 0),
        (5, 1, 0, 0, 0), (6, 2, 1, 1, 1))),
    "package-minus-1": (4, 1, 4, [(-1, 1, 12, 0)], (4, 4, 1, 1, 1), (
        (0, 0, -1, -1, -1), (1, 1, -1, -1, -1), (2, 2, -1, -1, -1), (3, 3, -1, -1, -1))),
    "snc": (8, 1, 4, [(0, 1, 6, 0), (1, 1, 6, 0)], (8, 4, 1, 2, 1), (
        (0, 0, 0, 0, 0), (1, 1, 0, 0, 0), (2, 2, 0, 1, 0), (3, 3, 0, 1, 0),
        (4, 0, 0, 0, 0), (5, 1, 0, 0, 0), (6, 2, 0, 1, 0), (7, 3, 0, 1, 0))),
}  # fmt: skip


def test_every_case_is_measured() -> None:
    assert sorted(MEASURED) == sorted(CASES)


def _shift(rows: tuple[Row, ...]) -> dict[int, tuple[int, int, int, int]]:
    """Our ids are non-negative: each level raised by its lowest negative id, as documented."""
    low = [min(0, *(row[level] for row in rows)) for level in range(1, 5)]
    return {row[0]: tuple(row[i + 1] - low[i] for i in range(4)) for row in rows}  # type: ignore[misc]


@pytest.mark.parametrize("name", sorted(MEASURED))
def test_cadvisor_reading_matches_the_measured_answer(tmp_path: Path, name: str) -> None:
    num_cores, num_sockets, num_physical, nodes, counters, cpus = MEASURED[name]
    root = CASES[name](tmp_path)
    if nodes is None:  # cadvisor itself failed
        with pytest.raises(MachineError, match="cadvisor cannot read"):
            read_machine_info(root)
        return
    info, _ = read_machine_info(root)
    assert (info["num_cores"], info["num_sockets"], info["num_physical_cores"]) == (
        num_cores,
        num_sockets,
        num_physical,
    )
    assert [
        (
            node["node_id"],
            len(node["caches"]),
            sum(len(core["caches"]) for core in node["cores"]),
            sum(len(core["uncore_caches"]) for core in node["cores"]),
        )
        for node in info["topology"]
    ] == nodes
    if counters is None:  # Discover failed
        with pytest.raises(MachineError, match="could not detect number of cpus"):
            topology_from_cadvisor(info)
        return
    topology = topology_from_cadvisor(info)
    assert topology.counters() == counters
    got = {cpu: (r.core, r.socket, r.numa, r.l3) for cpu, r in topology.cpus.items()}
    assert got == _shift(cpus)


def test_the_default_view_is_the_kubelets(tmp_path: Path) -> None:
    root = CASES["nonuma-2pkg"](tmp_path)
    kubelet = discover(root)
    kernel = discover(root, view="kernel")
    assert kubelet.numa_ids() == (0, 1)  # cadvisor's pseudo-node per package
    assert kernel.numa_ids() == (0,)
    assert SysfsReader(root).read() == kubelet
    assert any("pseudo-node per physical package" in w for w in kubelet.warnings)
    assert any("the kubelet sees NUMA nodes node 0 = CPUs 0-1,4-5" in w for w in kubelet.warnings)


def test_core_id_reuse_is_explained(tmp_path: Path) -> None:
    topology = discover(CASES["core-id-reused"](tmp_path))
    assert topology.core_ids() == (0,)
    assert (
        "cadvisor groups CPUs 0-3 into one core (all say core_id 0 on package 0); the kubelet "
        "allocates them as one core where the kernel has 4"
    ) in topology.warnings


def test_skipped_cpus_are_explained(tmp_path: Path) -> None:
    topology = discover(CASES["no-core-id"](tmp_path))
    assert 3 not in topology.all_cpus
    assert "cadvisor skips CPUs 3: no core_id file" in topology.warnings
    assert any(w.startswith("the kubelet does not know CPUs 3 ") for w in topology.warnings)


def test_uncore_fallback_is_explained(tmp_path: Path) -> None:
    topology = discover(CASES["snc"](tmp_path))
    assert topology.l3_ids() == (0,)
    assert any(
        "so the kubelet uses the socket id): uncore cache 0 = CPUs 0-7 (the kernel: "
        "0-1,4-5 | 2-3,6-7)" in w
        for w in topology.warnings
    )


def test_negative_ids_are_raised_with_a_warning(tmp_path: Path) -> None:
    topology = discover(CASES["package-minus-1"](tmp_path))
    assert (topology.socket_ids(), topology.numa_ids(), topology.l3_ids()) == ((0,), (0,), (0,))
    assert any("negative socket id (down to -1)" in w for w in topology.warnings)


def test_offline_cpus_are_counted_without_a_node_directory(tmp_path: Path) -> None:
    topology = discover(CASES["offline-nonuma"](tmp_path))
    assert (topology.num_cpus, len(topology.all_cpus)) == (8, 6)
    assert any(
        w.startswith("the kubelet counts 8 CPUs (cadvisor's NumCores: without a node directory")
        and w.endswith("but places 6")
        for w in topology.warnings
    )


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("bad-core-id", "cadvisor cannot read this node's topology"),
        ("node-without-links", r"cadvisor finds no CPU in NUMA node\(s\) 0 "),
    ],
)
def test_a_failing_kubelet_view_says_why(tmp_path: Path, name: str, words: str) -> None:
    root = CASES[name](tmp_path)
    with pytest.raises(MachineError, match=words):
        discover(root)
    assert len(discover(root, view="kernel").all_cpus) == 8 if name == "bad-core-id" else 4


def test_a_huge_value_is_cut_in_the_message(tmp_path: Path) -> None:
    """A hostile tree's value is quoted short: the error stays one readable line."""
    root = CASES["bad-core-id"](tmp_path)
    write(root / "sys/devices/system/cpu/cpu3/topology/core_id", "9" * 100_000 + "\n")
    with pytest.raises(MachineError) as caught:
        discover(root)
    message = str(caught.value)
    assert "'9999999999" in message
    assert len(message) < 400
    assert "\n" not in message


def test_an_unknown_view_is_refused(tmp_path: Path) -> None:
    with pytest.raises(MachineError, match="unknown topology view 'hwloc'"):
        SysfsReader(tmp_path, view="hwloc")


def _s390(root: Path) -> Path:
    """Four CPUs, all core_id 0 on package -1, in two books (s390's layout)."""
    cpus = {}
    for cpu in range(4):
        cpus[cpu] = CPU(
            core_id=0,
            package=-1,
            siblings=str(cpu),
            package_cpus=str(cpu),
            extra={"book_id": str(cpu // 2), "drawer_id": "0"},
        )
    return build(root, cpus, online="0-3")


def test_s390_rules_are_decided_from_the_tree(tmp_path: Path) -> None:
    """cadvisor on s390x also keys cores by book and drawer (a rule of its code: the harness
    that measured the rest runs on amd64, where the same tree gives one core)."""
    root = _s390(tmp_path)
    info, _ = read_machine_info(root)
    assert [core["thread_ids"] for core in info["topology"][0]["cores"]] == [[0, 1], [2, 3]]
    amd64, _ = read_machine_info(root, s390=False)
    assert [core["thread_ids"] for core in amd64["topology"][0]["cores"]] == [[0, 1, 2, 3]]


def test_node_order_is_the_names_order(tmp_path: Path) -> None:
    """cadvisor globs node*[0-9]: node10 comes before node2 (ids stay the directories')."""
    cpus = regular(packages=1, cores=3, threads=1)
    root = build(tmp_path, cpus, nodes={2: "0", 10: "1", 1: "2"})
    info, _ = read_machine_info(root)
    assert [node["node_id"] for node in info["topology"]] == [1, 10, 2]
    assert discover(root).numa_ids() == (1, 2, 10)


def test_a_malformed_online_list_stops_where_cadvisor_stops(tmp_path: Path) -> None:
    """runc's parser returns at the first bad item: CPUs listed before it stay online."""
    root = build(tmp_path, regular(cores=4, threads=1), nodes={0: "0-3"}, online="0-1,,3")
    info, _ = read_machine_info(root)
    assert info["num_cores"] == 2


def test_a_cache_without_id_ends_that_nodes_cache_reading(tmp_path: Path) -> None:
    root = CASES["l3-split"](tmp_path)
    (root / "sys/devices/system/cpu/cpu2/cache/index3/id").unlink()
    info, notes = read_machine_info(root)
    cores = info["topology"][0]["cores"]
    # cores are read in link order (cpu0, cpu1, cpu2, ...): cpu0's and cpu1's caches stay
    assert [len(core["uncore_caches"]) for core in cores] == [1, 1, 0, 0]
    assert (
        "cadvisor reads no cache (or stops reading them) in NUMA node(s) 0: "
        "/sys/devices/system/cpu/cpuN/cache/index3/id does not exist"
    ) in notes
    write(root / "sys/devices/system/cpu/cpu2/cache/index3/id", "1\n")
    assert discover(root).num_uncore_caches == 2


@pytest.mark.parametrize(
    ("file", "text", "uncore", "size"),
    [
        # an id beyond an int: Sscanf fails, cadvisor stops reading caches at that core
        ("cpu2/cache/index1/id", "99999999999999999999999999", [1, 1, 0, 0], 8 << 20),
        # 2^54 K: the byte count wraps around 2^64 to 0, as Go's uint64 product does
        ("cpu0/cache/index3/size", "18014398509481984K", [1, 1, 1, 1], 0),
    ],
)
def test_go_number_rules(
    tmp_path: Path, file: str, text: str, uncore: list[int], size: int
) -> None:
    root = CASES["l3-split"](tmp_path)
    write(root / "sys/devices/system/cpu" / file, text + "\n")
    info, _ = read_machine_info(root)
    cores = info["topology"][0]["cores"]
    assert [len(core["uncore_caches"]) for core in cores] == uncore
    assert cores[0]["uncore_caches"][0]["size"] == size


def test_an_s390_cpuinfo_without_book_ids_leaves_the_kubelet_no_cpu(tmp_path: Path) -> None:
    """On s390x cadvisor needs book_id and drawer_id and skips a CPU without them (rule of
    its code); the tree says s390 through /proc/cpuinfo's vendor."""
    cpus = regular(cores=2, threads=1)
    root = build(tmp_path, cpus, nodes={0: "0-1"}, cpuinfo="vendor_id       : IBM/S390\n")
    with pytest.raises(MachineError, match="cadvisor skips CPUs 0-1: no book_id file"):
        discover(root)
    info, _ = read_machine_info(root, s390=False)
    assert info["num_cores"] == 2


def test_socket_counts_from_cpuinfo_are_explained(tmp_path: Path) -> None:
    topology = discover(CASES["cpuinfo-sockets"](tmp_path))
    assert topology.num_sockets == 2  # two 'physical id' values in /proc/cpuinfo
    assert any(
        w.startswith("the kubelet counts 2 sockets (cadvisor counts distinct 'physical id'")
        and w.endswith("where the kernel has 1")
        for w in topology.warnings
    )


def test_agreeing_views_say_nothing(tmp_path: Path) -> None:
    root = CASES["l3-split"](tmp_path)
    kubelet, kernel = discover(root), discover(root, view="kernel")
    assert kubelet.warnings == ()
    assert kubelet.counters() == kernel.counters()
    assert dict(kubelet.cpus) == dict(kernel.cpus)
