"""Topology discovery from sysfs, read by hand (``sys/devices/system/{cpu,node}``).

The reader takes an injectable root (``/`` in production, a fixture tree in tests) and returns
a :class:`CPUTopology` whose ``warnings`` say where the tree was odd. The rules, chosen so the
result is what the kernel's scheduler sees and what hwloc reports for the same tree:

* **Online CPUs**: ``cpu/online``; without it, each ``cpuN/online`` (missing = online, as for
  cpu0). Offline CPUs are left out entirely, and every sibling mask is cut to online CPUs, so
  stale topology files of offline CPUs never matter.
* **Cores**: the SMT sibling mask (``core_cpus_list``, ``thread_siblings_list`` or their hex
  forms). CPUs are visited in ascending order and a CPU's core is its mask minus CPUs already
  placed; masks that disagree are reported. Without masks, CPUs sharing (package, core_id)
  form a core (cadvisor's rule); without either, every CPU is its own core. ``core_id`` is
  never trusted on its own: it repeats across sockets, and within one (s390, AMD compute
  units). A core's id is its lowest CPU id, unique machine-wide.
* **Sockets**: the package mask (``package_cpus_list``, ``core_siblings_list`` or hex).
  Socket ids are ``physical_package_id`` when every package has one consistent, unique,
  non-negative id; otherwise (``-1`` on s390/POWER, missing, contradictory) a dense index in
  order of lowest CPU. No package information at all: one socket.
* **L3 groups**: per CPU the level-3 unified/data cache's ``shared_cpu_list``; without a
  level-3 cache, the highest-level data/unified cache that is shared beyond the CPU's own
  core; without one, CPUs are grouped by socket (as the kubelet does when cadvisor reports no
  uncore cache). Group ids are a dense index in order of lowest CPU.
* **NUMA nodes**: ``nodeN`` directories (restricted to ``node/online`` when present); CPUs
  from ``cpulist``, else ``cpumap``, else the ``cpuM`` links. A CPU in several nodes goes to
  the lowest; a CPU in none goes to node 0 (or the lowest node), both with a warning. Nodes
  without CPUs (memory tiers, GPU memory) are kept. No node directory: one node 0 holding every
  CPU and ``proc/meminfo``'s MemTotal. Memory from ``nodeN/meminfo`` (MemTotal), distances
  from ``nodeN/distance`` (one entry per online node, ascending).

Unreadable or missing roots, and a tree without online CPUs, raise :class:`MachineError`.
"""

from __future__ import annotations

import platform
import re
from collections.abc import Mapping
from pathlib import Path

from cpumanager.adapters.sysfs.files import CPU_DIR, SysfsFiles
from cpumanager.adapters.sysfs.grouping import (
    CacheFacts,
    CPUFacts,
    group_cores,
    group_l3,
    group_sockets,
)
from cpumanager.adapters.sysfs.kubelet_view import kubelet_topology
from cpumanager.adapters.sysfs.numa import read_numa
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.topology import CPUInfo, CPUTopology
from cpumanager.errors import MachineError

__all__ = ["VIEWS", "SysfsReader", "discover"]


VIEWS = ("kubelet", "kernel")


class SysfsReader:
    """Reads the CPU topology under ``root`` (the directory that holds ``sys/``).

    ``view="kubelet"`` (the default) gives what the kubelet
    gets from cadvisor on that node, with warnings saying where it differs from the kernel's;
    ``view="kernel"`` follows the kernel's sibling masks by the rules above."""

    def __init__(self, root: Path = Path("/"), *, view: str = "kubelet") -> None:
        if view not in VIEWS:
            msg = f"unknown topology view {view!r}; give one of {', '.join(VIEWS)}"
            raise MachineError(msg)
        self.view = view
        self._root = Path(root)
        self._files = SysfsFiles(self._root)
        self.warnings: list[str] = []

    # --- CPUs --------------------------------------------------------------------------

    def _online(self, cpu_root: Path, present: Mapping[int, Path]) -> CPUSet:
        listed = self._files.cpulist(cpu_root / "online")
        if listed is not None:
            missing = listed - CPUSet(present)
            if missing:
                self._files.warn(
                    f"CPUs {missing} are listed in cpu/online but have no cpuN directory; "
                    "left them out"
                )
            return listed & CPUSet(present)
        online = []
        for cpu, path in present.items():
            flag = self._files.integer(path / "online")
            if flag is None or flag != 0:
                online.append(cpu)
        return CPUSet(online)

    def _cpu_facts(self, cpu: int, path: Path, online: CPUSet) -> CPUFacts:
        topo = path / "topology"
        facts = CPUFacts(cpu=cpu)
        facts.package_id = self._files.integer(topo / "physical_package_id")
        facts.core_id = self._files.integer(topo / "core_id")
        facts.die_id = self._files.integer(topo / "die_id")
        facts.cluster_id = self._files.integer(topo / "cluster_id")
        siblings = self._files.cpus_from(
            topo, ("core_cpus_list", "thread_siblings_list", "core_cpus", "thread_siblings")
        )
        package = self._files.cpus_from(
            topo, ("package_cpus_list", "core_siblings_list", "package_cpus", "core_siblings")
        )
        facts.siblings = None if siblings is None else (siblings & online) | CPUSet((cpu,))
        facts.package_cpus = None if package is None else (package & online) | CPUSet((cpu,))
        facts.caches = self._caches(path / "cache", cpu, online)
        return facts

    def _caches(self, cache_dir: Path, cpu: int, online: CPUSet) -> list[CacheFacts]:
        found = []
        for path in self._files.listdir(cache_dir, re.compile(r"index(\d+)")).values():
            level = self._files.integer(path / "level")
            kind = self._files.text(path / "type")
            shared = self._files.cpus_from(path, ("shared_cpu_list", "shared_cpu_map"))
            if level is None or kind is None or shared is None:
                continue
            if shared and cpu not in shared:
                self._files.warn(
                    "the caches of CPUs {cpus} list sharing CPUs without the CPU itself; "
                    "ignored those caches",
                    cpu=cpu,
                )
                continue
            found.append(CacheFacts(level, kind.strip(), shared & online))
        return found

    # --- the whole machine -------------------------------------------------------------

    def read_facts(self) -> dict[int, CPUFacts]:
        """The raw per-CPU facts of every online CPU (for debugging and rendering)."""
        system = self._files.system_dir()
        cpu_root = system / "cpu"
        present = self._files.listdir(cpu_root, CPU_DIR)
        online = self._online(cpu_root, present)
        if not online:
            msg = (
                f"no online CPU found under {str(cpu_root)!r}; "
                "check the root and its cpu/online file"
            )
            raise MachineError(msg)
        return {cpu: self._cpu_facts(cpu, present[cpu], online) for cpu in online}

    def read(self) -> CPUTopology:
        """Discover the machine; oddities become ``warnings`` on the result (and here)."""
        if self.view == "kubelet":
            root = self._root
            topology = kubelet_topology(
                root, kernel_view=lambda: SysfsReader(root, view="kernel").read()
            )
            self.warnings = list(topology.warnings)
            return topology
        self._files.clear()
        facts = self.read_facts()
        online = CPUSet(facts)
        missing_topology = [c for c, f in facts.items() if f.siblings is None and f.core_id is None]
        if missing_topology and len(missing_topology) < len(online):
            self._files.warn(
                f"CPUs {CPUSet(missing_topology)} have no topology files; "
                "counted each as its own core"
            )
        core_of = group_cores(facts, online, self._files.warn)
        socket_of = group_sockets(facts, online, self._files.warn)
        l3_of = group_l3(facts, online, core_of, socket_of, self._files.warn)
        numa_of, nodes = read_numa(self._files, self._files.system_dir(), online)
        records = [
            CPUInfo(
                cpu=cpu,
                core=core_of[cpu],
                socket=socket_of[cpu],
                numa=numa_of[cpu],
                l3=l3_of[cpu],
            )
            for cpu in online
        ]
        self.warnings = self._files.rendered_warnings()
        return CPUTopology(
            records,
            numa_nodes=nodes,
            name=self._root.resolve().name or platform.node() or "localhost",
            warnings=self.warnings,
        )


def discover(root: Path = Path("/"), *, view: str = "kubelet") -> CPUTopology:
    """This machine's topology from ``root``/sys as the kubelet sees it (``view="kernel"``:
    the kernel's sibling masks); oddities and differences are in the result's ``warnings``."""
    return SysfsReader(root, view=view).read()
