"""NUMA nodes from sysfs: which CPUs each holds, its memory and its distances.

``nodeN`` directories (restricted to ``node/online`` when present); CPUs from ``cpulist``,
else ``cpumap``, else the ``cpuM`` links. A CPU in several nodes goes to the lowest; a CPU in
none goes to node 0 (or the lowest node), both with a warning. Nodes without CPUs (memory
tiers, GPU memory) are kept. No node directory: one node 0 holding every CPU and
``proc/meminfo``'s MemTotal. Distances come from ``nodeN/distance``, one entry per online
node in ascending order.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import MappingProxyType

from cpumanager.adapters.sysfs.files import CPU_DIR, NODE_DIR, SysfsFiles
from cpumanager.core import limits
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.topology import NUMANodeInfo
from cpumanager.errors import MachineError

__all__ = ["read_memory", "read_numa"]

_MAX_BYTES = (1 << 63) - 1
_MAX_DISTANCE = (1 << 31) - 1  # the kernel prints node_distance() as an int
_MEMTOTAL = re.compile(r"MemTotal:\s*(\d+)\s*(kB)?", re.IGNORECASE)


def read_memory(files: SysfsFiles, path: Path) -> int | None:
    """MemTotal of a ``meminfo`` file in bytes; None when absent or absurd."""
    text = files.text(path)
    if text is None:
        return None
    match = _MEMTOTAL.search(text)
    if match is None:
        files.file_warn(path, "has no MemTotal line; memory left unknown")
        return None
    value = int(match.group(1))
    size = value * 1024 if match.group(2) else value
    if size > _MAX_BYTES:
        files.file_warn(path, "reports more memory than 2^63 bytes; memory left unknown")
        return None
    return size


def read_numa(
    files: SysfsFiles, system: Path, online: CPUSet
) -> tuple[dict[int, int], list[NUMANodeInfo]]:
    """CPU -> NUMA node, and the nodes with their memory and distances."""
    node_root = system / "node"
    dirs = files.listdir(node_root, NODE_DIR)
    if len(dirs) > limits.MAX_NUMA_NODES:
        msg = (
            f"{str(node_root)!r} has {len(dirs):,} NUMA nodes, over the limit of "
            f"{limits.MAX_NUMA_NODES:,}; refused"
        )
        raise MachineError(msg)
    if not dirs:
        memory = read_memory(files, files.root / "proc/meminfo")
        return dict.fromkeys(online, 0), [NUMANodeInfo(id=0, memory_bytes=memory)]
    node_online = files.cpulist(node_root / "online")
    if node_online is not None and not any(node in node_online for node in dirs):
        files.warn(
            f"node/online lists {str(node_online)!r}, none of the nodeN directories; ignored it"
        )
        node_online = None
    if node_online is not None:
        dropped = [node for node in dirs if node not in node_online]
        if dropped:
            files.warn(f"NUMA nodes {dropped} are not in node/online; left them out")
        dirs = {node: path for node, path in dirs.items() if node in node_online}
    node_cpus: dict[int, CPUSet] = {}
    for node, path in dirs.items():
        cpus = files.cpus_from(path, ("cpulist", "cpumap"))
        if cpus is None:
            cpus = CPUSet(files.listdir(path, CPU_DIR))
        node_cpus[node] = cpus & online
    numa_of: dict[int, int] = {}
    for node, cpus in node_cpus.items():
        for cpu in cpus:
            if cpu in numa_of:
                files.warn(
                    "CPUs {cpus} are listed in several NUMA nodes; kept each in the "
                    "lowest-numbered one",
                    cpu=cpu,
                )
            else:
                numa_of[cpu] = node
    homeless = online - CPUSet(numa_of)
    if homeless:
        home = 0 if 0 in dirs else min(dirs)
        files.warn(f"CPUs {homeless} are in no NUMA node; put them in node {home}")
        for cpu in homeless:
            numa_of[cpu] = home
    order = sorted(node_online) if node_online else sorted(dirs)
    nodes = []
    for node, path in dirs.items():
        distances: dict[int, int] = {}
        text = files.text(path / "distance")
        if text is not None:
            try:
                row = [int(word) for word in text.split()]
            except ValueError:
                row = []
                files.file_warn(path / "distance", "is not a row of integers; ignored it")
            if any(not 0 <= value <= _MAX_DISTANCE for value in row):
                row = []
                files.file_warn(
                    path / "distance", f"has values outside 0..{_MAX_DISTANCE}; ignored it"
                )
            if len(row) == len(order):
                distances = dict(zip(order, row, strict=True))
            elif len(row) == len(dirs):
                distances = dict(zip(dirs, row, strict=True))
            elif row:
                files.warn(
                    f"{files.rel(path / 'distance')} has {len(row)} entries for "
                    f"{len(order)} nodes; distances of node {node} left unknown"
                )
        nodes.append(
            NUMANodeInfo(
                id=node,
                memory_bytes=read_memory(files, path / "meminfo"),
                distances=MappingProxyType(distances),
            )
        )
    return numa_of, nodes
