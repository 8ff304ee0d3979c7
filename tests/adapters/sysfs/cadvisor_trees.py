"""Small sysfs trees for the kubelet-view (cadvisor) reading, written whole: per CPU the
topology files both views read, caches with every file cadvisor needs, nodes with real
``cpuN`` links (``../../cpu/cpuN``), as a kernel writes them.

``CASES`` are the trees whose cadvisor + ``Discover`` answers were measured with cadvisor
v0.51 and the kubelet v1.32 (see ``test_cadvisor.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cpumanager.core.cpuset import CPUSet
from tests.adapters.sysfs_tree import hex_mask


@dataclass
class Cache:
    level: int
    kind: str
    shared: str
    id: int | None = 0
    size_kb: int = 32


@dataclass
class CPU:
    core_id: int | None
    package: int | None
    siblings: str
    package_cpus: str
    caches: Sequence[Cache] = ()
    extra: Mapping[str, str] = field(default_factory=dict)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def build(
    root: Path,
    cpus: Mapping[int, CPU],
    *,
    nodes: Mapping[int, str] | None = None,
    online: str | None = None,
    cpuinfo: str = "",
) -> Path:
    """Write the tree under ``root``; ``nodes`` maps node id -> CPU list (None: no node dir)."""
    system = root / "sys/devices/system"
    for cpu, spec in cpus.items():
        topo = system / f"cpu/cpu{cpu}/topology"
        topo.mkdir(parents=True, exist_ok=True)
        if spec.core_id is not None:
            write(topo / "core_id", f"{spec.core_id}\n")
        if spec.package is not None:
            write(topo / "physical_package_id", f"{spec.package}\n")
        write(topo / "thread_siblings_list", spec.siblings + "\n")
        write(topo / "core_siblings_list", spec.package_cpus + "\n")
        for name, value in spec.extra.items():
            write(topo / name, value + "\n")
        for index, cache in enumerate(spec.caches):
            base = system / f"cpu/cpu{cpu}/cache/index{index}"
            write(base / "level", f"{cache.level}\n")
            write(base / "type", f"{cache.kind}\n")
            write(base / "size", f"{cache.size_kb}K\n")
            if cache.id is not None:
                write(base / "id", f"{cache.id}\n")
            write(base / "shared_cpu_list", cache.shared + "\n")
            write(base / "shared_cpu_map", hex_mask(cache.shared) + "\n")
    if online is not None:
        write(system / "cpu/online", online + "\n")
    for node, listed in (nodes or {}).items():
        base = system / f"node/node{node}"
        base.mkdir(parents=True, exist_ok=True)
        write(base / "cpulist", listed + "\n")
        write(base / "meminfo", f"Node {node} MemTotal:       1048576 kB\n")
        write(base / "distance", " ".join("10" if n == node else "21" for n in nodes) + "\n")
        for cpu in CPUSet.parse(listed):
            (base / f"cpu{cpu}").symlink_to(f"../../cpu/cpu{cpu}")
    write(root / "proc/cpuinfo", cpuinfo)
    return root


def _core_caches(siblings: str, l3: str | None, l3_id: int | None) -> list[Cache]:
    caches = [
        Cache(1, "Data", siblings, 0),
        Cache(1, "Instruction", siblings, 0),
        Cache(2, "Unified", siblings, 0, 256),
    ]
    if l3 is not None:
        caches.append(Cache(3, "Unified", l3, l3_id, 8192))
    return caches


def regular(
    *,
    packages: int = 1,
    cores: int = 2,
    threads: int = 2,
    l3_split: int = 1,
    cache_id: bool = True,
    core_ids: Callable[[int, int], int] | None = None,
) -> dict[int, CPU]:
    """Linux numbering (thread t of core c is CPU c + t * all cores); core_id per package;
    ``l3_split`` L3 caches per package (ids 0, 1, ... machine-wide)."""
    total_cores = packages * cores
    per_l3 = cores // l3_split
    found = {}
    for index in range(total_cores):
        package, core = divmod(index, cores)
        siblings = CPUSet(index + t * total_cores for t in range(threads))
        package_cpus = CPUSet(
            c + t * total_cores
            for c in range(package * cores, (package + 1) * cores)
            for t in range(threads)
        )
        l3_index = package * l3_split + core // per_l3
        first = package * cores + (core // per_l3) * per_l3
        l3 = CPUSet(
            c + t * total_cores for c in range(first, first + per_l3) for t in range(threads)
        )
        core_id = core if core_ids is None else core_ids(package, core)
        for cpu in siblings:
            found[cpu] = CPU(
                core_id=core_id,
                package=package,
                siblings=str(siblings),
                package_cpus=str(package_cpus),
                caches=[
                    replace_id(c, None) if not cache_id else c
                    for c in _core_caches(str(siblings), str(l3), l3_index)
                ],
            )
    return dict(sorted(found.items()))


def replace_id(cache: Cache, new: int | None) -> Cache:
    return Cache(cache.level, cache.kind, cache.shared, new, cache.size_kb)


def _with(cpus: dict[int, CPU], cpu: int, **changes: object) -> dict[int, CPU]:
    spec = cpus[cpu]
    values = {**spec.__dict__, **changes}
    return {**cpus, cpu: CPU(**values)}  # type: ignore[arg-type]


CASES: dict[str, Callable[[Path], Path]] = {
    # two packages, no node directory: cadvisor's pseudo-node per package
    "nonuma-2pkg": lambda r: build(r, regular(packages=2)),
    # every cache lacks its id file: cadvisor reads no cache at all
    "cache-noid": lambda r: build(
        r, regular(cores=4, l3_split=2, cache_id=False), nodes={0: "0-7"}
    ),
    # one L3 per node: a node cache, no uncore cache (the kubelet falls back to the socket)
    "l3-per-node": lambda r: build(r, regular(cores=4), nodes={0: "0-7"}),
    # two L3 per node: uncore caches 0 and 1
    "l3-split": lambda r: build(r, regular(cores=4, l3_split=2), nodes={0: "0-7"}),
    # sub-NUMA clustering: one package, two nodes, one L3 per node (node caches)
    "snc": lambda r: build(r, regular(cores=4, l3_split=2), nodes={0: "0-1,4-5", 1: "2-3,6-7"}),
    # offline CPUs with a node directory, and without one
    "offline": lambda r: build(r, regular(cores=4), nodes={0: "0-7"}, online="0-5"),
    "offline-nonuma": lambda r: build(r, regular(packages=2), online="0-2,4-6"),
    # CPU 3 has no core_id: cadvisor skips it
    "no-core-id": lambda r: build(r, _with(regular(cores=4), 3, core_id=None), nodes={0: "0-7"}),
    # a core_id that is not an integer: cadvisor fails
    "bad-core-id": lambda r: build(r, _with(regular(cores=4), 3, core_id="x"), nodes={0: "0-7"}),
    # every CPU says core_id 0 (as on s390): cadvisor makes one core of them
    "core-id-reused": lambda r: build(
        r, regular(cores=4, threads=1, core_ids=lambda p, c: 0), nodes={0: "0-3"}
    ),
    # physical_package_id -1 and no node directory: socket, node and uncore id -1
    "package-minus-1": lambda r: build(
        r, {c: _with(regular(cores=4, threads=1), c, package=-1)[c] for c in range(4)}
    ),
    # node directories whose CPUs are listed but not linked: cadvisor finds no CPU
    "node-without-links": lambda r: _unlink(build(r, regular(), nodes={0: "0-3"})),
    # /proc/cpuinfo names two physical ids while sysfs has one package
    "cpuinfo-sockets": lambda r: build(
        r,
        regular(),
        nodes={0: "0-3"},
        cpuinfo="".join(
            f"processor\t: {c}\nphysical id\t: {c % 2}\ncore id\t\t: {c % 2}\n\n" for c in range(4)
        ),
    ),
}


def _unlink(root: Path) -> Path:
    for link in (root / "sys/devices/system/node/node0").glob("cpu[0-9]*"):
        link.unlink()
    return root
