"""A tiny builder of fake sysfs trees under tmp_path (``sys/devices/system/{cpu,node}``).

Tests describe only what a case needs; everything left out is simply absent from the tree,
which is itself a case the reader must handle.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from cpumanager.core.cpuset import CPUSet
from cpumanager.core.topology import CPUTopology


def hex_mask(cpus: str) -> str:
    """The kernel's cpumask text for a CPU list: 32-bit hex words, most significant first."""
    bits = CPUSet.parse(cpus).bits
    words = []
    while True:
        words.append(f"{bits & 0xFFFFFFFF:08x}")
        bits >>= 32
        if not bits:
            break
    return ",".join(reversed(words))


class SysfsTree:
    """Writes files of a fake sysfs rooted at ``root`` (the directory holding ``sys/``)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.cpu_dir = root / "sys/devices/system/cpu"
        self.node_dir = root / "sys/devices/system/node"
        self.cpu_dir.mkdir(parents=True, exist_ok=True)

    def write(self, relative: str, text: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def online(self, cpus: str) -> SysfsTree:
        self.write("sys/devices/system/cpu/online", cpus + "\n")
        return self

    def cpu(
        self,
        cpu: int,
        *,
        package: int | None = 0,
        core_id: int | None = None,
        siblings: str | None = None,
        package_cpus: str | None = None,
        online: int | None = None,
        masks: bool = False,
        modern: bool = False,
        die: int | None = None,
        cluster: int | None = None,
        caches: Sequence[tuple[int, str, str]] = (),
    ) -> SysfsTree:
        """One CPU directory; ``masks`` writes hex masks instead of lists (old kernels),
        ``modern`` uses core_cpus/package_cpus names; ``caches`` are (level, type, shared)."""
        base = f"sys/devices/system/cpu/cpu{cpu}"
        (self.root / base).mkdir(parents=True, exist_ok=True)
        if online is not None:
            self.write(f"{base}/online", f"{online}\n")
        topo = f"{base}/topology"
        if package is not None:
            self.write(f"{topo}/physical_package_id", f"{package}\n")
        if core_id is not None:
            self.write(f"{topo}/core_id", f"{core_id}\n")
        if die is not None:
            self.write(f"{topo}/die_id", f"{die}\n")
        if cluster is not None:
            self.write(f"{topo}/cluster_id", f"{cluster}\n")
        names = {
            "siblings": ("core_cpus" if modern else "thread_siblings", siblings),
            "package": ("package_cpus" if modern else "core_siblings", package_cpus),
        }
        for name, value in names.values():
            if value is None:
                continue
            if masks:
                self.write(f"{topo}/{name}", hex_mask(value) + "\n")
            else:
                self.write(f"{topo}/{name}_list", value + "\n")
        for index, (level, kind, shared) in enumerate(caches):
            cache = f"{base}/cache/index{index}"
            self.write(f"{cache}/level", f"{level}\n")
            self.write(f"{cache}/type", f"{kind}\n")
            # what cadvisor also needs (the kubelet's view): id, size and the hex map
            sharing = CPUSet.parse(shared) if shared.strip() else CPUSet()
            self.write(f"{cache}/id", f"{min(sharing, default=cpu)}\n")
            self.write(f"{cache}/size", "32K\n")
            if not masks:
                self.write(f"{cache}/shared_cpu_map", hex_mask(str(sharing)) + "\n")
            if masks:
                self.write(f"{cache}/shared_cpu_map", hex_mask(shared) + "\n")
            else:
                self.write(f"{cache}/shared_cpu_list", shared + "\n")
        return self

    def node(
        self,
        node: int,
        cpus: str | None,
        *,
        memory_kb: int | None = None,
        distance: Iterable[int] | None = None,
        cpumap: bool = False,
        links: bool = False,
    ) -> SysfsTree:
        """One NUMA node: its CPUs as cpulist (or cpumap, or cpuN links), meminfo, distance."""
        base = f"sys/devices/system/node/node{node}"
        (self.root / base).mkdir(parents=True, exist_ok=True)
        if cpus is not None:
            if links:
                for cpu in CPUSet.parse(cpus):
                    (self.root / base / f"cpu{cpu}").mkdir()
            else:
                if cpumap:
                    self.write(f"{base}/cpumap", hex_mask(cpus) + "\n")
                else:
                    self.write(f"{base}/cpulist", cpus + "\n")
                for cpu in CPUSet.parse(cpus):  # the kernel's links (all cadvisor reads)
                    link = self.root / base / f"cpu{cpu}"
                    if not link.is_symlink():
                        link.symlink_to(f"../../cpu/cpu{cpu}")
        if memory_kb is not None:
            self.write(
                f"{base}/meminfo",
                f"Node {node} MemTotal:       {memory_kb} kB\nNode {node} MemFree:  1 kB\n",
            )
        if distance is not None:
            self.write(f"{base}/distance", " ".join(map(str, distance)) + "\n")
        return self

    def node_online(self, nodes: str) -> SysfsTree:
        self.write("sys/devices/system/node/online", nodes + "\n")
        return self


def regular(
    root: Path,
    *,
    sockets: int = 2,
    cores: int = 2,
    threads: int = 2,
    l3_per_socket: int = 1,
    numa: bool = True,
) -> SysfsTree:
    """An ordinary x86 box: Linux numbering (siblings ``c`` and ``c + all cores``), core_id
    restarting at 0 in every socket, one NUMA node per socket with 1 GiB and SLIT 10/21."""
    tree = SysfsTree(root)
    total_cores = sockets * cores
    total = total_cores * threads
    tree.online(f"0-{total - 1}")
    per_l3 = cores // l3_per_socket
    for thread in range(threads):
        for index in range(total_cores):
            cpu = thread * total_cores + index
            socket, local = divmod(index, cores)
            sibling_ids = [t * total_cores + index for t in range(threads)]
            package_ids = [
                t * total_cores + socket * cores + c for t in range(threads) for c in range(cores)
            ]
            first = socket * cores + (local // per_l3) * per_l3
            l3_ids = [t * total_cores + first + c for t in range(threads) for c in range(per_l3)]
            tree.cpu(
                cpu,
                package=socket,
                core_id=local,
                siblings=str(CPUSet(sibling_ids)),
                package_cpus=str(CPUSet(package_ids)),
                caches=[
                    (1, "Data", str(CPUSet(sibling_ids))),
                    (1, "Instruction", str(CPUSet(sibling_ids))),
                    (2, "Unified", str(CPUSet(sibling_ids))),
                    (3, "Unified", str(CPUSet(l3_ids))),
                ],
            )
    if numa:
        for socket in range(sockets):
            socket_cpus = [
                t * total_cores + socket * cores + c for t in range(threads) for c in range(cores)
            ]
            row = [10 if other == socket else 21 for other in range(sockets)]
            tree.node(socket, str(CPUSet(socket_cpus)), memory_kb=1 << 20, distance=row)
        tree.node_online(f"0-{sockets - 1}")
    return tree


def tree_from_topology(root: Path, topology: CPUTopology, *, masks: bool = False) -> SysfsTree:
    """The sysfs a kernel would show for ``topology`` (core_id restarting per socket)."""
    tree = SysfsTree(root).online(str(topology.all_cpus))
    for rec in topology.cpus.values():
        core_cpus = topology.cpus_in_cores([rec.core])
        socket_cpus = topology.cpus_in_sockets([rec.socket])
        local_core = sorted(topology.cores_of(socket_cpus)).index(rec.core)
        tree.cpu(
            rec.cpu,
            package=rec.socket,
            core_id=local_core,
            siblings=str(core_cpus),
            package_cpus=str(socket_cpus),
            masks=masks,
            caches=[
                (1, "Data", str(core_cpus)),
                (2, "Unified", str(core_cpus)),
                (3, "Unified", str(topology.cpus_in_l3([rec.l3]))),
            ],
        )
    ids = topology.numa_ids()
    for node in topology.numa_nodes:
        memory = node.memory_bytes
        tree.node(
            node.id,
            str(topology.cpus_in_numa_nodes([node.id])),
            memory_kb=None if memory is None else memory // 1024,
            distance=[node.distances[other] for other in ids] if node.distances else None,
            cpumap=masks,
        )
    tree.node_online(str(CPUSet(ids)))
    return tree
