"""Compare the kubelet-view sysfs reading with cadvisor's own code on the shared sysfs dumps.

For each tree of the archive, our cadvisor reading (``adapters/sysfs/cadvisor.py``) and the
kubelet's ``Discover`` on it (``core/discover.py``) are compared with a harness's answer:
a program built from cadvisor v0.51 and the kubelet v1.32 (not part of this repository; see
bench/README.md) that prints, run inside a tree with ``chroot``, cadvisor's topology
(``GetNodesInfo``), ``NumCores``, ``NumSockets``/``NumPhysicalCores`` as ``machine.Info``
computes them, and ``Discover``'s result, as JSON.

Compared per tree: whether cadvisor / Discover fail; NUMA nodes (ids, memory, distances,
node caches), cores (core_id, socket, threads, core and uncore caches), NumCores,
NumSockets, NumPhysicalCores; Discover's counters and every CPU's core, socket, NUMA node and
uncore cache. Node order of the pseudo-nodes cadvisor makes without a NUMA directory comes
from a Go map (random), so nodes are compared by id.

The dumps were trimmed by hwloc and 11 of them lack the ``nodeN/cpuM`` links every real
kernel has, which is all cadvisor reads of a node's CPUs; ``--linked`` also compares a copy
of each such tree with the links restored from ``cpulist``/``cpumap``.

The harness runs on this host's architecture (amd64), so the s390x tree is compared with
cadvisor's amd64 rules; what the tree-decided reading (s390x rules) gives is printed beside.

Usage::

    python bench/compare_cadvisor.py --harness BIN [--linked] [--save FILE] [ARCHIVE]
    python bench/compare_cadvisor.py --truth FILE [--linked] [ARCHIVE]

``--harness`` runs BIN in each tree with chroot (root only); ``--save`` writes the harness's
answers (tree name -> JSON) for later ``--truth`` runs. Prints every difference and
``N/M trees match``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from cpumanager.adapters.sysfs.cadvisor import is_s390_tree, read_machine_info
from cpumanager.core.discover import topology_from_cadvisor
from cpumanager.core.topology import CPUTopology
from cpumanager.errors import CpuManagerError

DEFAULT_ARCHIVE = Path(__file__).resolve().parents[2] / "shared/machines/sysfs-dumps.tar.xz"
LINKED = "+links"


def restore_node_links(tree: Path) -> bool:
    """Add ``nodeN/cpuM -> ../../cpu/cpuM`` links from cpulist/cpumap where none exist."""
    node_root = tree / "sys/devices/system/node"
    if not node_root.is_dir():
        return False
    added = False
    for node in sorted(node_root.iterdir()):
        if not node.name.startswith("node") or not node.name[4:].isdigit():
            continue
        if any(entry.name[3:].isdigit() for entry in node.glob("cpu[0-9]*")):
            return False
        cpus: set[int] = set()
        if (node / "cpulist").is_file():
            for part in (node / "cpulist").read_text().strip().split(","):
                if part:
                    low, _, high = part.partition("-")
                    cpus.update(range(int(low), int(high or low) + 1))
        elif (node / "cpumap").is_file():
            bits = int((node / "cpumap").read_text().strip().replace(",", "") or "0", 16)
            cpus.update(i for i in range(bits.bit_length()) if bits >> i & 1)
        for cpu in sorted(cpus):
            if (tree / f"sys/devices/system/cpu/cpu{cpu}").is_dir():
                (node / f"cpu{cpu}").symlink_to(f"../../cpu/cpu{cpu}")
                added = True
    return added


def run_harness(binary: Path, tree: Path) -> dict[str, Any]:
    inside = tree / "cadvisor-harness"
    shutil.copy2(binary, inside)
    try:
        out = subprocess.run(
            ["chroot", str(tree), "/cadvisor-harness"],
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        ).stdout
    finally:
        inside.unlink()
    result: dict[str, Any] = json.loads(out)
    return result


def _shifted(cpus: list[dict[str, int]]) -> dict[int, tuple[int, int, int, int]]:
    """Discover's CPU details with each level's ids raised so none is negative (as ours)."""
    levels = ("core", "socket", "numa", "uncore")
    low = {level: min((c[level] for c in cpus), default=0) for level in levels}
    return {
        c["cpu"]: tuple(c[level] - min(low[level], 0) for level in levels)  # type: ignore[misc]
        for c in cpus
    }


def _ours_discover(info: dict[str, Any]) -> dict[str, Any]:
    try:
        topo: CPUTopology = topology_from_cadvisor(info)
    except CpuManagerError as err:
        return {"error": str(err)}
    return {
        "counters": (
            topo.num_cpus,
            topo.num_cores,
            topo.num_sockets,
            topo.num_numa_nodes,
            topo.num_uncore_caches,
        ),
        "cpus": {c: (r.core, r.socket, r.numa, r.l3) for c, r in topo.cpus.items()},
    }


def _node_key(node: dict[str, Any]) -> dict[str, Any]:
    cores = sorted(
        (
            core["core_id"],
            core["socket_id"],
            tuple(core["thread_ids"]),
            json.dumps(core.get("caches") or [], sort_keys=True),
            json.dumps(core.get("uncore_caches") or [], sort_keys=True),
        )
        for core in node.get("cores") or []
    )
    return {
        "memory": node.get("memory") or 0,
        "distances": node.get("distances") or [],
        "caches": json.dumps(node.get("caches") or [], sort_keys=True),
        "cores": cores,
    }


def compare(tree: Path, truth: dict[str, Any], *, s390: bool) -> list[str]:
    """Every difference between our reading of ``tree`` and the harness's answer."""
    diffs: list[str] = []
    try:
        info, _ = read_machine_info(tree, s390=s390)
    except CpuManagerError as err:
        if not truth.get("topology_error"):
            diffs.append(f"ours fails ({err}), cadvisor does not")
        return diffs
    if truth.get("topology_error"):
        diffs.append(f"cadvisor fails ({truth['topology_error']}), ours does not")
        return diffs
    diffs.extend(
        f"{field}: ours {info[field]}, cadvisor {truth[field]}"
        for field in ("num_cores", "num_sockets", "num_physical_cores")
        if info[field] != truth[field]
    )
    ours_nodes = {n["node_id"]: _node_key(n) for n in info["topology"]}
    their_nodes = {n["node_id"]: _node_key(n) for n in truth.get("topology") or []}
    if sorted(ours_nodes) != sorted(their_nodes):
        diffs.append(f"NUMA node ids: ours {sorted(ours_nodes)}, cadvisor {sorted(their_nodes)}")
    for node_id in sorted(set(ours_nodes) & set(their_nodes)):
        for part, ours in ours_nodes[node_id].items():
            theirs = their_nodes[node_id][part]
            if ours != theirs:
                diffs.append(f"node {node_id} {part}: ours {ours}, cadvisor {theirs}")
    ours_d = _ours_discover(info)
    if truth.get("discover_error") or "error" in ours_d:
        if bool(truth.get("discover_error")) != ("error" in ours_d):
            diffs.append(
                f"Discover: ours {ours_d.get('error', 'ok')}, "
                f"kubelet {truth.get('discover_error') or 'ok'}"
            )
        return diffs
    disc = truth["discover"]
    counters = (
        disc["num_cpus"],
        disc["num_cores"],
        disc["num_sockets"],
        disc["num_numa_nodes"],
        disc["num_uncore_cache"],
    )
    if ours_d["counters"] != counters:
        diffs.append(
            "Discover counters (cpus, cores, sockets, numa, uncore): "
            f"ours {ours_d['counters']}, kubelet {counters}"
        )
    theirs_cpus = _shifted(disc.get("cpus") or [])
    diffs.extend(
        f"CPU {cpu} (core, socket, numa, uncore): ours {ours_d['cpus'].get(cpu)}, "
        f"kubelet {theirs_cpus.get(cpu)}"
        for cpu in sorted(set(ours_d["cpus"]) | set(theirs_cpus))
        if ours_d["cpus"].get(cpu) != theirs_cpus.get(cpu)
    )
    return diffs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("archive", nargs="?", type=Path, default=DEFAULT_ARCHIVE)
    parser.add_argument("--harness", type=Path, help="the harness binary (run with chroot)")
    parser.add_argument("--truth", type=Path, help="saved harness answers (JSON)")
    parser.add_argument("--save", type=Path, help="write the harness answers here")
    parser.add_argument("--linked", action="store_true", help="also trees with node links")
    args = parser.parse_args()
    if not args.archive.is_file():
        print(f"skipped: no archive at {args.archive}")
        return 0
    if (args.harness is None) == (args.truth is None):
        parser.error("give exactly one of --harness BIN or --truth FILE")
    if args.harness is not None and os.geteuid() != 0:
        print("skipped: --harness needs root (chroot)")
        return 0
    saved: dict[str, Any] = {}
    if args.truth is not None:
        saved = json.loads(args.truth.read_text())
    answers: dict[str, Any] = {}
    matched = total = 0
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        with tarfile.open(args.archive) as archive:
            archive.extractall(base, filter="data")
        trees = sorted(p for p in base.iterdir() if p.is_dir())
        if args.linked:
            for tree in list(trees):
                copy = base / f"{tree.name}{LINKED}"
                shutil.copytree(tree, copy, symlinks=True)
                if restore_node_links(copy):
                    trees.append(copy)
                else:
                    shutil.rmtree(copy)
        for tree in trees:
            name = tree.name
            if args.harness is not None:
                answers[name] = run_harness(args.harness, tree)
            elif name not in saved:
                print(f"{name}: no saved answer; skipped")
                continue
            truth = answers.get(name) or saved[name]
            total += 1
            diffs = compare(tree, truth, s390=False)
            note = ""
            if is_s390_tree(tree / "sys/devices/system"):
                try:
                    s390_info, _ = read_machine_info(tree, s390=True)
                    cores = sum(len(n["cores"]) for n in s390_info["topology"])
                    note = f" (tree-decided s390x rules: {cores} cores)"
                except CpuManagerError as err:
                    note = f" (tree-decided s390x rules: {err})"
            if diffs:
                print(f"{name}: {len(diffs)} difference(s){note}")
                for line in diffs:
                    print(f"    {line}")
            else:
                matched += 1
                print(f"{name}: match{note}")
    if args.save is not None:
        args.save.write_text(json.dumps(answers, indent=1, sort_keys=True) + "\n")
    print(f"{matched}/{total} trees match")
    return 0


if __name__ == "__main__":
    sys.exit(main())
