"""Discovery time of SysfsReader on the largest shared sysfs tree (and on this host).

Extracts ../shared/machines/sysfs-dumps.tar.xz to a temporary directory, picks the tree with
the most CPUs, and prints the best and median of several full reads in both views (the
kubelet's, which reads the kernel's too to explain differences, and the kernel's alone), plus
the same for this host's /sys. The largest tree lacks the node ``cpuN`` links the kubelet's
view needs; they are restored from ``cpulist`` first (as ``compare_cadvisor.py --linked``).
Skips the shared part gracefully when the archive is absent.

    python bench/bench_discovery.py [DUMPS.tar.xz] [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
import tarfile
import tempfile
import time
from pathlib import Path

from compare_cadvisor import restore_node_links

from cpumanager.adapters.sysfs import SysfsReader
from cpumanager.errors import CpuManagerError

DEFAULT_ARCHIVE = Path(__file__).resolve().parents[2] / "shared/machines/sysfs-dumps.tar.xz"


def timed_reads(root: Path, repeat: int, view: str) -> tuple[list[float], int, int]:
    """Milliseconds per full read, CPUs and NUMA nodes found."""
    times = []
    topology = None
    for _ in range(repeat):
        start = time.perf_counter()
        topology = SysfsReader(root, view=view).read()
        times.append((time.perf_counter() - start) * 1000)
    assert topology is not None
    return times, len(topology.all_cpus), len(topology.numa_ids())


def report(label: str, root: Path, repeat: int) -> None:
    for view in ("kubelet", "kernel"):
        try:
            times, cpus, nodes = timed_reads(root, repeat, view)
        except CpuManagerError as err:
            print(f"{label}, {view} view: could not read: {err.message}")
            continue
        print(
            f"{label}, {view} view: {cpus} CPUs, {nodes} NUMA nodes: best {min(times):.1f} ms, "
            f"median {statistics.median(times):.1f} ms over {repeat} reads "
            f"({min(times) / cpus * 1000:.0f} us per CPU)"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("archive", nargs="?", type=Path, default=DEFAULT_ARCHIVE)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    if args.archive.exists():
        with tempfile.TemporaryDirectory() as tmp:
            with tarfile.open(args.archive) as tar:
                tar.extractall(tmp, filter="data")
            trees = [p for p in Path(tmp).iterdir() if p.is_dir()]
            largest = max(
                trees, key=lambda p: len(list((p / "sys/devices/system/cpu").glob("cpu[0-9]*")))
            )
            restore_node_links(largest)
            report(f"largest shared tree {largest.name}", largest, args.repeat)
    else:
        print(f"skipped the shared trees: {args.archive} not found")
    if Path("/sys/devices/system/cpu").is_dir():
        report("this host (/)", Path("/"), args.repeat)


if __name__ == "__main__":
    main()
