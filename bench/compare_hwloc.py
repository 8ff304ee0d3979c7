"""Compare SysfsReader with hwloc's lstopo on every machine of the shared sysfs dumps.

For each tree: online CPUs, sockets, cores, L3 groups (as partitions of the CPUs) and NUMA
nodes (id -> CPUs, CPU-less nodes included) as read by ``SysfsReader`` and as reported by
``lstopo-no-graphics --of xml --no-io --whole-system`` with ``HWLOC_FSROOT`` set to the tree.
hwloc objects are mapped to our model with the reader's own rules (docs/topology.md): no
Package objects = one socket, a PU outside any Core = its own core, L3 = the PU's level-3
cache, else its highest-level data/unified cache shared beyond its core, else its socket.

Usage: ``python bench/compare_hwloc.py [DUMPS.tar.xz]`` (default: ../shared/machines/...).
Prints a table and a summary line; skips when the archive or lstopo is absent.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from cpumanager.adapters.sysfs import SysfsReader
from cpumanager.core.topology import CPUTopology
from cpumanager.errors import CpuManagerError

DEFAULT_ARCHIVE = Path(__file__).resolve().parents[2] / "shared/machines/sysfs-dumps.tar.xz"

Partition = frozenset[frozenset[int]]

# Deliberate differences, explained in docs/topology.md ("Differences from hwloc").
DOCUMENTED = {
    "fakeheterocpunuma": (
        {"numa"},
        "overlapping NUMA cpumaps: hwloc drops nodes 4-5, we keep them",
    ),
}


def _mask(text: str | None) -> frozenset[int]:
    if not text:
        return frozenset()
    bits = 0
    for word in text.split(","):  # 32-bit words, most significant first; "0x0" for zero
        bits = (bits << 32) | int(word.removeprefix("0x") or "0", 16)
    return frozenset(i for i in range(bits.bit_length()) if bits >> i & 1)


def _cache_level(obj: ET.Element) -> int | None:
    kind = obj.get("type", "")
    if not (kind.startswith("L") and kind.endswith("Cache")) or kind.endswith("iCache"):
        return None
    return int(kind[1:-5])


def hwloc_view(tree: Path) -> dict[str, object]:
    """Sockets, cores, L3 groups and NUMA nodes of ``tree`` according to hwloc."""
    env = dict(os.environ, HWLOC_FSROOT=str(tree), HWLOC_COMPONENTS="linux,stop")
    out = subprocess.run(
        ["lstopo-no-graphics", "--of", "xml", "--no-io", "--whole-system", "-"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    root = ET.fromstring(out)
    parent: dict[ET.Element, ET.Element] = {}
    for obj in root.iter("object"):
        for child in obj.findall("object"):
            parent[child] = obj
    pus: dict[int, ET.Element] = {
        int(obj.get("os_index", "0")): obj for obj in root.iter("object") if obj.get("type") == "PU"
    }
    online = frozenset(pus)

    def ancestors(obj: ET.Element) -> list[ET.Element]:
        chain = []
        while obj in parent:
            obj = parent[obj]
            chain.append(obj)
        return chain

    packages = [_mask(o.get("cpuset")) for o in root.iter("object") if o.get("type") == "Package"]
    placed = frozenset().union(*packages) if packages else frozenset()
    sockets = {p for p in packages if p} | ({online - placed} if online - placed else set())
    socket_of = {cpu: group for group in sockets for cpu in group}
    core_sets = [_mask(o.get("cpuset")) for o in root.iter("object") if o.get("type") == "Core"]
    in_core = frozenset().union(*core_sets) if core_sets else frozenset()
    cores = {c for c in core_sets if c} | {frozenset((cpu,)) for cpu in online - in_core}
    core_of = {cpu: group for group in cores for cpu in group}
    l3_of: dict[int, frozenset[int]] = {}
    for cpu, pu in pus.items():
        caches = [(lvl, _mask(a.get("cpuset"))) for a in ancestors(pu) if (lvl := _cache_level(a))]
        level3 = [cpus for lvl, cpus in caches if lvl == 3]
        shared = [(lvl, cpus) for lvl, cpus in caches if cpus - core_of[cpu]]
        if level3:
            l3_of[cpu] = level3[0]
        elif shared:
            l3_of[cpu] = max(shared, key=lambda item: item[0])[1]
    rest: dict[frozenset[int], set[int]] = {}
    for cpu in online - frozenset(l3_of):
        rest.setdefault(socket_of[cpu], set()).add(cpu)
    l3 = set(l3_of.values()) | {frozenset(cpus) for cpus in rest.values()}
    # hwloc gives a CPU-less node (memory tier, GPU memory) the cpuset of its locality; our
    # model gives it no CPU. Each CPU goes to the smallest hwloc node holding it (lowest id
    # on ties), CPUs in no node to node 0, as the reader does.
    nodes = sorted(
        (int(o.get("os_index", "0")), _mask(o.get("cpuset")))
        for o in root.iter("object")
        if o.get("type") == "NUMANode"
    )
    numa: dict[int, set[int]] = {node: set() for node, _cpus in nodes}
    for cpu in online:
        holders = [(len(cpus), node) for node, cpus in nodes if cpu in cpus]
        numa[min(holders)[1] if holders else min(numa)].add(cpu)
    owned = {node: frozenset(cpus) for node, cpus in numa.items()}
    return {"cpus": online, "sockets": sockets, "cores": cores, "l3": l3, "numa": owned}


def our_view(topology: CPUTopology) -> dict[str, object]:
    def partition(ids: tuple[int, ...], query: str) -> set[frozenset[int]]:
        return {frozenset(getattr(topology, query)([i])) for i in ids}

    return {
        "cpus": frozenset(topology.all_cpus),
        "sockets": partition(topology.socket_ids(), "cpus_in_sockets"),
        "cores": partition(topology.core_ids(), "cpus_in_cores"),
        "l3": partition(topology.l3_ids(), "cpus_in_l3"),
        "numa": {n: frozenset(topology.cpus_in_numa_nodes([n])) for n in topology.numa_ids()},
    }


def main() -> int:
    archive = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_ARCHIVE
    if not archive.exists():
        print(f"skipped: {archive} not found")
        return 0
    if shutil.which("lstopo-no-graphics") is None:
        print("skipped: lstopo-no-graphics (hwloc) is not installed")
        return 0
    keys = ("cpus", "sockets", "cores", "l3", "numa")
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
        machines = sorted(p for p in Path(tmp).iterdir() if p.is_dir())
        header = f"{'machine':40} {'cpus':>5} {'skt':>4} {'core':>5} {'l3':>4} {'numa':>5}  result"
        print(header)
        print("-" * len(header))
        loaded = matched = documented = 0
        elapsed = 0.0
        for tree in machines:
            start = time.perf_counter()
            try:
                topology = SysfsReader(tree, view="kernel").read()
            except CpuManagerError as err:
                print(f"{tree.name:40} LOAD FAILED: {err.message}")
                continue
            elapsed += time.perf_counter() - start
            loaded += 1
            ours, theirs = our_view(topology), hwloc_view(tree)
            diffs = [key for key in keys if ours[key] != theirs[key]]
            expected, why = DOCUMENTED.get(tree.name, (set(), ""))
            if not diffs:
                verdict = "match"
                matched += 1
            elif set(diffs) == expected:
                verdict = f"documented difference ({why})"
                documented += 1
            else:
                verdict = "DIFFER: " + ", ".join(diffs)
            print(
                f"{tree.name:40} {len(topology.all_cpus):5} {len(topology.socket_ids()):4} "
                f"{len(topology.core_ids()):5} {len(topology.l3_ids()):4} "
                f"{len(topology.numa_ids()):5}  {verdict}"
                + (f"  ({len(topology.warnings)} warnings)" if topology.warnings else "")
            )
            for key in diffs:
                print(f"    {key}: ours   {_show(ours[key])}")
                print(f"    {key}: hwloc  {_show(theirs[key])}")
    unexplained = loaded - matched - documented
    print(
        f"summary: {loaded}/{len(machines)} loaded, {matched}/{len(machines)} match hwloc "
        f"(sockets, cores, L3 groups, NUMA nodes), {documented} documented difference(s), "
        f"{unexplained} unexplained; discovery took {elapsed * 1000:.1f} ms total"
    )
    return 0


def _show(value: object) -> str:
    if isinstance(value, dict):
        return str({k: sorted(v) for k, v in sorted(value.items())})
    if isinstance(value, set):
        return str(sorted(sorted(group) for group in value))
    if isinstance(value, frozenset):
        return str(sorted(value))
    return str(value)


if __name__ == "__main__":
    sys.exit(main())
