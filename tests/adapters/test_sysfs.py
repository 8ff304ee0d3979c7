"""SysfsReader on fixture trees built under tmp_path: one test per messy real-world case."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cpumanager.adapters.sysfs import SysfsReader, parse_hex_mask
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.topology import CPUTopology
from cpumanager.errors import MachineError
from tests.adapters.sysfs_tree import SysfsTree, hex_mask, regular


def read(root: Path) -> CPUTopology:
    return SysfsReader(root, view="kernel").read()


def groups(topology: CPUTopology, query: str, ids: tuple[int, ...]) -> list[str]:
    return [str(getattr(topology, query)([i])) for i in ids]


def sockets(t: CPUTopology) -> list[str]:
    return groups(t, "cpus_in_sockets", t.socket_ids())


def cores(t: CPUTopology) -> list[str]:
    return groups(t, "cpus_in_cores", t.core_ids())


def l3s(t: CPUTopology) -> list[str]:
    return groups(t, "cpus_in_l3", t.l3_ids())


def nodes(t: CPUTopology) -> dict[int, str]:
    return {n: str(t.cpus_in_numa_nodes([n])) for n in t.numa_ids()}


# --- ordinary machines ------------------------------------------------------------------------


def test_regular_two_socket_box(tmp_path: Path) -> None:
    t = read(regular(tmp_path, sockets=2, cores=2, threads=2).root)
    assert t.all_cpus == CPUSet.parse("0-7")
    assert sockets(t) == ["0-1,4-5", "2-3,6-7"]
    assert t.socket_ids() == (0, 1)  # physical_package_id
    assert cores(t) == ["0,4", "1,5", "2,6", "3,7"]
    assert t.core_ids() == (0, 1, 2, 3)  # lowest thread id, although core_id restarts at 0
    assert l3s(t) == ["0-1,4-5", "2-3,6-7"]
    assert nodes(t) == {0: "0-1,4-5", 1: "2-3,6-7"}
    assert t.numa_node(1).memory_bytes == 1 << 30
    assert t.distance(0, 1) == 21
    assert t.distance(1, 1) == 10
    assert t.warnings == ()
    assert t.name == tmp_path.name


def test_l3_split_per_ccx(tmp_path: Path) -> None:
    t = read(regular(tmp_path, sockets=1, cores=8, threads=2, l3_per_socket=2).root)
    assert l3s(t) == ["0-3,8-11", "4-7,12-15"]
    assert t.l3_ids() == (0, 1)  # dense, in order of lowest CPU


def test_root_may_be_the_sys_directory_itself(tmp_path: Path) -> None:
    regular(tmp_path, sockets=1, cores=2, threads=1)
    assert read(tmp_path / "sys").all_cpus == CPUSet.parse("0-1")


# --- cores -----------------------------------------------------------------------------------


def test_core_ids_reused_within_a_socket_follow_the_sibling_masks(tmp_path: Path) -> None:
    # s390 / POWER style: every CPU says core_id 1, but each is its own SMT group.
    tree = SysfsTree(tmp_path).online("0-3")
    for cpu in range(4):
        tree.cpu(cpu, package=-1, core_id=1, siblings=str(cpu), package_cpus="0-3")
    t = read(tmp_path)
    assert cores(t) == ["0", "1", "2", "3"]
    assert t.warnings == ()


def test_amd_compute_units_are_one_core_by_their_sibling_mask(tmp_path: Path) -> None:
    # Bulldozer: the two integer cores of a compute unit report different core_ids but the
    # kernel lists them as siblings; the scheduler treats them as one core, and so do we.
    tree = SysfsTree(tmp_path).online("0-3")
    for cpu in range(4):
        pair = "0-1" if cpu < 2 else "2-3"
        tree.cpu(cpu, core_id=cpu, siblings=pair, package_cpus="0-3")
    assert cores(read(tmp_path)) == ["0-1", "2-3"]


def test_without_sibling_masks_package_and_core_id_group_threads(tmp_path: Path) -> None:
    tree = SysfsTree(tmp_path).online("0-3")
    for cpu in range(4):
        tree.cpu(cpu, package=cpu % 2, core_id=0)
    t = read(tmp_path)
    assert cores(t) == ["0,2", "1,3"]
    assert sockets(t) == ["0,2", "1,3"]


def test_without_any_topology_every_cpu_is_a_core(tmp_path: Path) -> None:
    tree = SysfsTree(tmp_path).online("0-1")
    tree.cpu(0, package=None)
    tree.cpu(1, package=None)
    t = read(tmp_path)
    assert cores(t) == ["0", "1"]
    assert sockets(t) == ["0-1"]
    assert any("no package information" in w for w in t.warnings)


def test_contradictory_sibling_masks_follow_the_lowest_cpu(tmp_path: Path) -> None:
    tree = SysfsTree(tmp_path).online("0-2")
    tree.cpu(0, siblings="0-1", package_cpus="0-2")
    tree.cpu(1, siblings="1-2", package_cpus="0-2")
    tree.cpu(2, siblings="1-2", package_cpus="0-2")
    t = read(tmp_path)
    assert cores(t) == ["0-1", "2"]
    assert any("SMT sibling masks disagree" in w for w in t.warnings)


def test_hybrid_cores_with_different_smt_widths(tmp_path: Path) -> None:
    tree = SysfsTree(tmp_path).online("0-5")
    for cpu in range(4):  # P-cores 0/1 with siblings 0,1 and 2,3
        tree.cpu(cpu, core_id=cpu // 2, siblings="0-1" if cpu < 2 else "2-3", package_cpus="0-5")
    for cpu in (4, 5):  # E-cores, one thread each
        tree.cpu(cpu, core_id=cpu * 4, siblings=str(cpu), package_cpus="0-5")
    t = read(tmp_path)
    assert cores(t) == ["0-1", "2-3", "4", "5"]
    assert {len(t.siblings(c)) for c in t.all_cpus} == {1, 2}


# --- online and offline CPUs --------------------------------------------------------------------


def test_offline_cpus_with_stale_topology_are_left_out(tmp_path: Path) -> None:
    tree = SysfsTree(tmp_path).online("0-2")
    for cpu in range(4):  # cpu3 is offline but its stale files still name it a sibling
        tree.cpu(cpu, siblings="0,3" if cpu in (0, 3) else str(cpu), package_cpus="0-3")
    tree.node(0, "0-3", memory_kb=4)
    t = read(tmp_path)
    assert t.all_cpus == CPUSet.parse("0-2")
    assert cores(t) == ["0", "1", "2"]
    assert sockets(t) == ["0-2"]
    assert nodes(t) == {0: "0-2"}


def test_without_cpu_online_file_per_cpu_flags_decide(tmp_path: Path) -> None:
    tree = SysfsTree(tmp_path)
    tree.cpu(0, siblings="0", package_cpus="0-3")  # cpu0 has no online file: online
    tree.cpu(1, online=1, siblings="1", package_cpus="0-3")
    tree.cpu(2, online=0, package=None)  # offline, no topology at all
    tree.cpu(3, online=0, siblings="3", package_cpus="0-3")  # offline with stale files
    t = read(tmp_path)
    assert t.all_cpus == CPUSet.parse("0-1")
    assert sockets(t) == ["0-1"]


def test_online_cpus_without_a_directory_are_reported(tmp_path: Path) -> None:
    tree = SysfsTree(tmp_path).online("0-3")
    tree.cpu(0, siblings="0", package_cpus="0")
    t = read(tmp_path)
    assert t.all_cpus == CPUSet([0])
    assert any("1-3" in w and "no cpuN directory" in w for w in t.warnings)


def test_sparse_cpu_ids(tmp_path: Path) -> None:
    tree = SysfsTree(tmp_path).online("0,2,8-9")
    for cpu in (0, 2, 8, 9):
        tree.cpu(cpu, siblings="0,8" if cpu in (0, 8) else "2,9", package_cpus="0,2,8-9")
    t = read(tmp_path)
    assert cores(t) == ["0,8", "2,9"]
    assert t.core_ids() == (0, 2)


def test_numbering_that_alternates_between_sockets(tmp_path: Path) -> None:
    tree = SysfsTree(tmp_path).online("0-7")
    for cpu in range(8):
        socket = cpu % 2
        tree.cpu(
            cpu,
            package=socket,
            core_id=(cpu // 2) % 2,
            siblings=str(CPUSet([cpu % 4, cpu % 4 + 4])),
            package_cpus="0,2,4,6" if socket == 0 else "1,3,5,7",
        )
    t = read(tmp_path)
    assert sockets(t) == ["0,2,4,6", "1,3,5,7"]
    assert cores(t) == ["0,4", "1,5", "2,6", "3,7"]


# --- packages ---------------------------------------------------------------------------------


def test_package_id_minus_one_is_derived_from_package_masks(tmp_path: Path) -> None:
    tree = SysfsTree(tmp_path).online("0-5")
    for cpu in range(6):
        tree.cpu(cpu, package=-1, siblings=str(cpu), package_cpus="0-2" if cpu < 3 else "3-5")
    t = read(tmp_path)
    assert sockets(t) == ["0-2", "3-5"]
    assert t.socket_ids() == (0, 1)
    assert t.warnings == ()  # -1 is how s390 and POWER say "unknown"; nothing odd


def test_package_ids_that_contradict_the_masks_are_renumbered(tmp_path: Path) -> None:
    tree = SysfsTree(tmp_path).online("0-3")
    for cpu in range(4):  # ia64 style: ids in pairs, masks say one CPU per package
        tree.cpu(cpu, package=512 * (cpu // 2), siblings=str(cpu), package_cpus=str(cpu))
    t = read(tmp_path)
    assert sockets(t) == ["0", "1", "2", "3"]
    assert t.socket_ids() == (0, 1, 2, 3)
    assert any("physical_package_id does not match" in w for w in t.warnings)


def test_sparse_package_ids_are_kept(tmp_path: Path) -> None:
    tree = SysfsTree(tmp_path).online("0-1")
    tree.cpu(0, package=3, siblings="0", package_cpus="0")
    tree.cpu(1, package=7, siblings="1", package_cpus="1")
    assert read(tmp_path).socket_ids() == (3, 7)


def test_missing_package_masks_fall_back_to_package_ids(tmp_path: Path) -> None:
    tree = SysfsTree(tmp_path).online("0-3")
    for cpu in range(4):
        tree.cpu(cpu, package=cpu // 2, siblings=str(cpu))
    assert sockets(read(tmp_path)) == ["0-1", "2-3"]


def test_old_kernels_with_hex_masks_only(tmp_path: Path) -> None:
    tree = SysfsTree(tmp_path)  # no cpu/online file either
    for cpu in range(40):
        tree.cpu(
            cpu,
            package=cpu // 20,
            siblings=str(CPUSet([cpu % 20 // 10 * 10 + cpu % 10, cpu])),
            package_cpus="0-19" if cpu < 20 else "20-39",
            masks=True,
            caches=[(3, "Unified", "0-19" if cpu < 20 else "20-39")],
        )
    tree.node(0, "0-39", cpumap=True, memory_kb=8)
    t = read(tmp_path)
    assert sockets(t) == ["0-19", "20-39"]
    assert l3s(t) == ["0-19", "20-39"]
    assert nodes(t) == {0: "0-39"}


def test_modern_file_names_and_die_cluster_facts(tmp_path: Path) -> None:
    tree = SysfsTree(tmp_path).online("0-3")
    for cpu in range(4):
        tree.cpu(
            cpu,
            siblings="0-1" if cpu < 2 else "2-3",
            package_cpus="0-3",
            modern=True,
            die=0,
            cluster=cpu // 2,
        )
    reader = SysfsReader(tmp_path, view="kernel")
    facts = reader.read_facts()
    assert facts[3].cluster_id == 1
    assert facts[3].die_id == 0
    assert cores(reader.read()) == ["0-1", "2-3"]


# --- caches -----------------------------------------------------------------------------------


def test_without_l3_a_shared_l2_is_the_llc(tmp_path: Path) -> None:
    tree = SysfsTree(tmp_path).online("0-3")
    for cpu in range(4):  # Core 2 style: L2 shared by two single-thread cores
        pair = "0-1" if cpu < 2 else "2-3"
        tree.cpu(cpu, siblings=str(cpu), package_cpus="0-3", caches=[(2, "Unified", pair)])
    assert l3s(read(tmp_path)) == ["0-1", "2-3"]


def test_private_caches_only_mean_one_group_per_socket(tmp_path: Path) -> None:
    tree = SysfsTree(tmp_path).online("0-3")
    for cpu in range(4):
        package = "0-1" if cpu < 2 else "2-3"
        tree.cpu(cpu, siblings=str(cpu), package_cpus=package, caches=[(2, "Unified", str(cpu))])
    assert l3s(read(tmp_path)) == ["0-1", "2-3"]


def test_no_cache_information_means_one_group_per_socket(tmp_path: Path) -> None:
    t = read(regular(tmp_path, sockets=2, cores=1, threads=1).root)
    assert l3s(t) == ["0", "1"]
    tree = SysfsTree(tmp_path / "bare").online("0-3")
    for cpu in range(4):
        tree.cpu(cpu, package=cpu // 2, siblings=str(cpu), package_cpus="0-1" if cpu < 2 else "2-3")
    assert l3s(read(tree.root)) == ["0-1", "2-3"]


def test_empty_shared_map_means_the_cores_threads(tmp_path: Path) -> None:
    tree = SysfsTree(tmp_path)  # old ia64 kernels print an all-zero shared_cpu_map for L3
    for cpu in range(4):
        pair = "0-1" if cpu < 2 else "2-3"
        tree.cpu(cpu, siblings=pair, package_cpus="0-3", masks=True, caches=[(3, "Unified", "")])
    assert l3s(read(tmp_path)) == ["0-1", "2-3"]


def test_a_cache_that_does_not_contain_its_cpu_is_ignored(tmp_path: Path) -> None:
    tree = SysfsTree(tmp_path).online("0-3")
    for cpu in range(4):  # a copied tree: every CPU claims cpu0's caches
        tree.cpu(cpu, siblings=str(cpu), package_cpus="0-3", caches=[(3, "Unified", "0-1")])
    t = read(tmp_path)
    assert l3s(t) == ["0-1", "2-3"]  # CPUs 2-3 fall back to their socket, minus CPUs 0-1
    assert any("CPUs 2-3" in w and "without the CPU itself" in w for w in t.warnings)


def test_instruction_caches_are_not_llcs(tmp_path: Path) -> None:
    tree = SysfsTree(tmp_path).online("0-1")
    for cpu in range(2):
        tree.cpu(cpu, siblings=str(cpu), package_cpus="0-1", caches=[(2, "Instruction", "0-1")])
    assert l3s(read(tmp_path)) == ["0-1"]  # socket fallback, same grouping by chance
    tree2 = SysfsTree(tmp_path / "two").online("0-3")
    for cpu in range(4):
        tree2.cpu(cpu, siblings=str(cpu), package_cpus="0-3", caches=[(2, "Instruction", "0-1")])
    assert l3s(read(tree2.root)) == ["0-3"]


# --- NUMA -------------------------------------------------------------------------------------


def test_no_numa_directory_means_one_node_with_proc_meminfo(tmp_path: Path) -> None:
    tree = regular(tmp_path, sockets=2, cores=1, threads=2, numa=False)
    tree.write("proc/meminfo", "MemTotal:        2048 kB\nMemFree: 1 kB\n")
    t = read(tmp_path)
    assert nodes(t) == {0: "0-3"}
    assert t.numa_node(0).memory_bytes == 2048 * 1024
    assert t.warnings == ()


def test_memory_only_nodes_are_kept(tmp_path: Path) -> None:
    tree = regular(tmp_path, sockets=1, cores=2, threads=1, numa=False)
    tree.node(0, "0-1", memory_kb=100, distance=[10, 20])
    tree.node(1, "", memory_kb=300, distance=[20, 10])  # CXL / HBM / GPU memory
    t = read(tmp_path)
    assert t.numa_ids() == (0, 1)
    assert t.cpu_numa_ids() == (0,)
    assert t.numa_node(1).memory_bytes == 300 * 1024
    assert t.distance(1, 0) == 20


def test_sparse_node_ids_map_distance_rows_through_node_online(tmp_path: Path) -> None:
    tree = regular(tmp_path, sockets=2, cores=1, threads=1, numa=False)
    tree.node(0, "0", distance=[10, 20, 30])
    tree.node(2, "1", distance=[20, 10, 30])
    tree.node(9, "", distance=[30, 30, 10], memory_kb=1)
    tree.write("sys/devices/system/node/online", "0,2,9\n\x00")  # some kernels pad with NUL
    t = read(tmp_path)
    assert nodes(t) == {0: "0", 2: "1", 9: ""}
    assert t.distance(2, 9) == 30
    assert t.distance(9, 2) == 30
    assert t.distance(2, 0) == 20
    assert t.warnings == ()


def test_nodes_not_online_are_left_out(tmp_path: Path) -> None:
    tree = regular(tmp_path, sockets=1, cores=2, threads=1, numa=False)
    tree.node(0, "0-1", distance=[10])
    tree.node(1, "", distance=[10])
    tree.node_online("0")
    t = read(tmp_path)
    assert t.numa_ids() == (0,)
    assert any("not in node/online" in w for w in t.warnings)


def test_node_online_naming_no_directory_is_ignored(tmp_path: Path) -> None:
    tree = regular(tmp_path, sockets=1, cores=2, threads=1, numa=False)
    tree.node(0, "0-1", distance=[10])
    tree.node_online("5")
    t = read(tmp_path)
    assert nodes(t) == {0: "0-1"}
    assert any("none of the nodeN directories" in w for w in t.warnings)


def test_huge_ids_in_a_list_file_are_a_warning_not_a_memory_blowup(tmp_path: Path) -> None:
    tree = regular(tmp_path, sockets=1, cores=2, threads=1)
    tree.write("sys/devices/system/node/node0/cpulist", "0-4294967296\n")
    t = read(tmp_path)
    assert nodes(t) == {0: "0-1"}  # the unusable list is ignored; CPUs fall back to node 0
    assert any("node0/cpulist is not a CPU list" in w for w in t.warnings)


def test_cpus_in_no_node_go_to_node_0(tmp_path: Path) -> None:
    tree = regular(tmp_path, sockets=1, cores=4, threads=1, numa=False)
    tree.node(0, "0-1")
    tree.node(1, "2")
    t = read(tmp_path)
    assert nodes(t) == {0: "0-1,3", 1: "2"}
    assert any("CPUs 3 are in no NUMA node" in w for w in t.warnings)


def test_cpus_in_several_nodes_stay_in_the_lowest(tmp_path: Path) -> None:
    tree = regular(tmp_path, sockets=1, cores=4, threads=1, numa=False)
    tree.node(0, "0-2")
    tree.node(1, "2-3")
    t = read(tmp_path)
    assert nodes(t) == {0: "0-2", 1: "3"}
    assert any("CPUs 2 are listed in several NUMA nodes" in w for w in t.warnings)


def test_node_cpus_from_cpumap_or_cpu_links(tmp_path: Path) -> None:
    tree = regular(tmp_path, sockets=1, cores=4, threads=1, numa=False)
    tree.node(0, "0-1", cpumap=True)
    tree.node(1, "2-3", links=True)
    assert nodes(read(tmp_path)) == {0: "0-1", 1: "2-3"}


def test_bad_distance_rows_and_meminfo_are_warnings(tmp_path: Path) -> None:
    tree = regular(tmp_path, sockets=1, cores=2, threads=1, numa=False)
    tree.node(0, "0", distance=[10, 20, 30])
    tree.node(1, "1")
    tree.write("sys/devices/system/node/node1/distance", "10 x\n")
    tree.write("sys/devices/system/node/node1/meminfo", "nothing useful\n")
    t = read(tmp_path)
    assert t.distance(0, 1) is None
    assert t.numa_node(1).memory_bytes is None
    assert len(t.warnings) == 3


# --- malformed files --------------------------------------------------------------------------


def test_garbage_in_per_cpu_files_is_one_warning_for_all_cpus(tmp_path: Path) -> None:
    tree = SysfsTree(tmp_path).online("0-3")
    for cpu in range(4):
        tree.cpu(cpu, siblings=str(cpu), package_cpus="0-3")
        tree.write(f"sys/devices/system/cpu/cpu{cpu}/topology/core_id", "abc\n")
        tree.write(f"sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list", "x\n")
    t = read(tmp_path)
    assert cores(t) == ["0", "1", "2", "3"]
    assert "cpuN/topology/core_id is not an integer; ignored it (CPUs 0-3)" in t.warnings[0]
    assert len(t.warnings) == 2


def test_unreadable_file_is_a_warning(tmp_path: Path) -> None:
    tree = SysfsTree(tmp_path).online("0-1")
    tree.cpu(0, siblings="0", package_cpus="0-1")
    tree.cpu(1, siblings="1", package_cpus="0-1")
    (tree.cpu_dir / "cpu1/topology/core_id").mkdir()  # a directory where a file should be
    t = read(tmp_path)
    assert t.all_cpus == CPUSet.parse("0-1")
    assert any("core_id cannot be read" in w for w in t.warnings)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unlistable_cpu_directory_is_an_error(tmp_path: Path) -> None:
    tree = SysfsTree(tmp_path).online("0")
    tree.cpu(0)
    tree.cpu_dir.chmod(0o000)
    try:
        with pytest.raises(MachineError, match="cannot list"):
            read(tmp_path)
    finally:
        tree.cpu_dir.chmod(0o755)


def test_bad_online_list_falls_back_to_per_cpu_flags(tmp_path: Path) -> None:
    tree = SysfsTree(tmp_path).online("0-")
    tree.cpu(0, siblings="0", package_cpus="0-1")
    tree.cpu(1, online=0)
    t = read(tmp_path)
    assert t.all_cpus == CPUSet([0])
    assert any("cpu/online is not a CPU list" in w for w in t.warnings)


# --- errors -----------------------------------------------------------------------------------


def test_missing_root(tmp_path: Path) -> None:
    with pytest.raises(MachineError, match="does not exist") as info:
        read(tmp_path / "nope")
    assert "\n" not in str(info.value)


def test_root_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(MachineError, match="not a directory"):
        read(tmp_path / "file")


def test_root_without_cpu_tree(tmp_path: Path) -> None:
    (tmp_path / "sys/devices/system").mkdir(parents=True)
    with pytest.raises(MachineError, match="no sys/devices/system/cpu"):
        read(tmp_path)


def test_no_online_cpu(tmp_path: Path) -> None:
    SysfsTree(tmp_path).online("")
    with pytest.raises(MachineError, match="no online CPU"):
        read(tmp_path)


def test_cpu_and_node_directories_with_absurd_ids_are_left_out(tmp_path: Path) -> None:
    regular(tmp_path, sockets=1, cores=2, threads=1)
    for name in ("cpu/cpu99999999999/topology", "node/node77777777777"):
        (tmp_path / "sys/devices/system" / name).mkdir(parents=True)
    topology = read(tmp_path)
    assert str(topology.all_cpus) == "0-1"
    assert topology.numa_ids() == (0,)
    assert any("cpu99999999999 has an id above" in w for w in topology.warnings)
    assert any("node77777777777 has an id above" in w for w in topology.warnings)


# --- helpers --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "cpus"),
    [
        ("00000000,00000101", "0,8"),
        ("0x0000000f,0x0", "32-35"),
        ("ff", "0-7"),
        ("", ""),
        (",,1", "0"),
    ],
)
def test_parse_hex_mask(text: str, cpus: str) -> None:
    assert parse_hex_mask(text) == CPUSet.parse(cpus)


@pytest.mark.parametrize("text", ["zz", "123456789", "0x1g"])
def test_parse_hex_mask_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="hex CPU mask"):
        parse_hex_mask(text)


def test_hex_mask_builder_round_trips() -> None:
    for cpus in ("0", "0-31", "31-32", "0,64,100", "8190-8191"):
        assert parse_hex_mask(hex_mask(cpus)) == CPUSet.parse(cpus)


def test_absurd_package_ids_distances_and_memory_are_warned_and_dropped(tmp_path: Path) -> None:
    regular(tmp_path, sockets=1, cores=2, threads=1)
    system = tmp_path / "sys/devices/system"
    for cpu in (0, 1):
        (system / f"cpu/cpu{cpu}/topology/physical_package_id").write_text("99999999999999\n")
    (system / "node/node0/distance").write_text("99999999999999999999\n")
    (system / "node/node0/meminfo").write_text("Node 0 MemTotal: 99999999999999999999 kB\n")
    topology = read(tmp_path)
    assert topology.socket_ids() == (0,)
    assert not topology.has_distances()
    assert topology.numa_nodes[0].memory_bytes is None
    text = " | ".join(topology.warnings)
    assert "physical_package_id 99999999999999 is above" in text
    assert "distance has values outside" in text
    assert "more memory than 2^63 bytes" in text
