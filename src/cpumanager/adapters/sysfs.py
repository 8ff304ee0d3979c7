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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from cpumanager.core.cpuset import MAX_CPU_ID, CPUSet
from cpumanager.core.topology import CPUInfo, CPUTopology, NUMANodeInfo
from cpumanager.errors import InvalidCPUSetError, MachineError

__all__ = ["CacheFacts", "CPUFacts", "SysfsReader", "parse_hex_mask"]

_CPU_DIR = re.compile(r"cpu(\d+)")
_NODE_DIR = re.compile(r"node(\d+)")
_HEX_MASK = re.compile(r"(?:0x)?[0-9a-f]{0,8}(?:,(?:0x)?[0-9a-f]{0,8})*", re.IGNORECASE)
_PER_CPU = re.compile(r"/cpu(\d+)(?=/)")
_MAX_BYTES = (1 << 63) - 1
_MAX_DISTANCE = (1 << 31) - 1  # the kernel prints node_distance() as an int
_MEMTOTAL = re.compile(r"MemTotal:\s*(\d+)\s*(kB)?", re.IGNORECASE)


def parse_hex_mask(text: str) -> CPUSet:
    """A kernel cpumask (``"00000000,00000101"``: 32-bit hex words, most significant first)."""
    stripped = text.strip()
    if not stripped:
        return CPUSet()
    if _HEX_MASK.fullmatch(stripped) is None:
        msg = f"not a hex CPU mask: {stripped!r}"
        raise ValueError(msg)
    words = stripped.split(",")
    if all(len(word) == 8 for word in words):  # the kernel's own, zero-padded form
        return CPUSet.from_bits(int(stripped.replace(",", ""), 16))
    bits = 0
    for word in words:
        bits = (bits << 32) | int(word.removeprefix("0x") or "0", 16)
    return CPUSet.from_bits(bits)


@dataclass(frozen=True, slots=True)
class CacheFacts:
    """One ``cache/indexN`` entry of a CPU; ``shared`` is cut to online CPUs (may be empty)."""

    level: int
    type: str
    shared: CPUSet


@dataclass(slots=True)
class CPUFacts:
    """Everything read for one online CPU; None where the file was absent or unusable."""

    cpu: int
    package_id: int | None = None
    core_id: int | None = None
    die_id: int | None = None
    cluster_id: int | None = None
    siblings: CPUSet | None = None
    package_cpus: CPUSet | None = None
    caches: list[CacheFacts] = field(default_factory=list)


class SysfsReader:
    """Reads the CPU topology under ``root`` (the directory that holds ``sys/``)."""

    def __init__(self, root: Path = Path("/")) -> None:
        self._root = Path(root)
        self._notes: dict[str, list[int]] = {}
        self.warnings: list[str] = []

    # --- small readers -----------------------------------------------------------------

    def _warn(self, message: str, *, cpu: int | None = None) -> None:
        """Record a warning; ``{cpus}`` in ``message`` collects the CPUs it applies to."""
        cpus = self._notes.setdefault(message, [])
        if cpu is not None:
            cpus.append(cpu)

    def _file_warn(self, path: Path, problem: str) -> None:
        """A warning about one file; per-CPU files are merged into one line for all CPUs."""
        rel = self._rel(path)
        match = _PER_CPU.search(rel)
        if match is None:
            self._warn(f"{rel} {problem}")
        else:
            pattern = f"{rel[: match.start()]}/cpuN{rel[match.end() :]}"
            self._warn(f"{pattern} {problem} (CPUs {{cpus}})", cpu=int(match.group(1)))

    def _rendered_warnings(self) -> list[str]:
        return [
            message.replace("{cpus}", str(CPUSet(cpus))) if cpus else message
            for message, cpus in self._notes.items()
        ]

    def _rel(self, path: Path) -> str:
        try:
            return str(path.relative_to(self._root))
        except ValueError:  # pragma: no cover - every path we build is under the root
            return str(path)

    def _text(self, path: Path) -> str | None:
        """Stripped contents (NULs dropped), None when absent; unreadable = warning + None."""
        try:
            raw = path.read_text(encoding="ascii", errors="replace")
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as err:
            self._file_warn(path, f"cannot be read ({err.strerror or err}); ignored it")
            return None
        return raw.replace("\0", "").strip()

    def _int(self, path: Path) -> int | None:
        text = self._text(path)
        if not text:
            return None
        try:
            return int(text)
        except ValueError:
            self._file_warn(path, "is not an integer; ignored it")
            return None

    def _cpulist(self, path: Path) -> CPUSet | None:
        text = self._text(path)
        if text is None:
            return None
        try:
            return CPUSet.parse(text)
        except InvalidCPUSetError:
            self._file_warn(path, "is not a CPU list; ignored it")
            return None

    def _cpumask(self, path: Path) -> CPUSet | None:
        text = self._text(path)
        if text is None:
            return None
        try:
            return parse_hex_mask(text)
        except ValueError:
            self._file_warn(path, "is not a hex CPU mask; ignored it")
            return None

    def _cpus_from(self, directory: Path, names: Iterable[str]) -> CPUSet | None:
        """The first of ``names`` that exists: ``*_list`` files as lists, others as masks."""
        for name in names:
            path = directory / name
            found = self._cpulist(path) if name.endswith("list") else self._cpumask(path)
            if found is not None:
                return found
        return None

    # --- locating the tree --------------------------------------------------------------

    def _system_dir(self) -> Path:
        root = self._root
        if not root.exists():
            msg = (
                f"sysfs root {str(root)!r} does not exist; give the directory that holds "
                "sys/devices/system (e.g. / or an extracted copy)"
            )
            raise MachineError(msg)
        if not root.is_dir():
            msg = f"sysfs root {str(root)!r} is not a directory; give the directory that holds sys/"
            raise MachineError(msg)
        for candidate in (root / "sys/devices/system", root / "devices/system"):
            if (candidate / "cpu").is_dir():
                return candidate
        msg = (
            f"no sys/devices/system/cpu under {str(root)!r}; give the directory that holds sys/ "
            "(e.g. / or an extracted copy of a machine's sysfs)"
        )
        raise MachineError(msg)

    def _listdir(self, directory: Path, pattern: re.Pattern[str]) -> dict[int, Path]:
        try:
            entries = list(directory.iterdir())
        except FileNotFoundError:
            return {}
        except OSError as err:
            msg = f"cannot list {str(directory)!r}: {err.strerror or err}; check permissions"
            raise MachineError(msg) from err
        found: dict[int, Path] = {}
        for entry in entries:
            match = pattern.fullmatch(entry.name)
            if match is None:
                continue
            number = int(match.group(1))
            if number > MAX_CPU_ID:
                self._warn(f"{self._rel(entry)} has an id above {MAX_CPU_ID}; left it out")
                continue
            found[number] = entry
        return dict(sorted(found.items()))

    # --- CPUs --------------------------------------------------------------------------

    def _online(self, cpu_root: Path, present: Mapping[int, Path]) -> CPUSet:
        listed = self._cpulist(cpu_root / "online")
        if listed is not None:
            missing = listed - CPUSet(present)
            if missing:
                self._warn(
                    f"CPUs {missing} are listed in cpu/online but have no cpuN directory; "
                    "left them out"
                )
            return listed & CPUSet(present)
        online = []
        for cpu, path in present.items():
            flag = self._int(path / "online")
            if flag is None or flag != 0:
                online.append(cpu)
        return CPUSet(online)

    def _cpu_facts(self, cpu: int, path: Path, online: CPUSet) -> CPUFacts:
        topo = path / "topology"
        facts = CPUFacts(cpu=cpu)
        facts.package_id = self._int(topo / "physical_package_id")
        facts.core_id = self._int(topo / "core_id")
        facts.die_id = self._int(topo / "die_id")
        facts.cluster_id = self._int(topo / "cluster_id")
        siblings = self._cpus_from(
            topo, ("core_cpus_list", "thread_siblings_list", "core_cpus", "thread_siblings")
        )
        package = self._cpus_from(
            topo, ("package_cpus_list", "core_siblings_list", "package_cpus", "core_siblings")
        )
        facts.siblings = None if siblings is None else (siblings & online) | CPUSet((cpu,))
        facts.package_cpus = None if package is None else (package & online) | CPUSet((cpu,))
        facts.caches = self._caches(path / "cache", cpu, online)
        return facts

    def _caches(self, cache_dir: Path, cpu: int, online: CPUSet) -> list[CacheFacts]:
        found = []
        for path in self._listdir(cache_dir, re.compile(r"index(\d+)")).values():
            level = self._int(path / "level")
            kind = self._text(path / "type")
            shared = self._cpus_from(path, ("shared_cpu_list", "shared_cpu_map"))
            if level is None or kind is None or shared is None:
                continue
            if shared and cpu not in shared:
                self._warn(
                    "the caches of CPUs {cpus} list sharing CPUs without the CPU itself; "
                    "ignored those caches",
                    cpu=cpu,
                )
                continue
            found.append(CacheFacts(level, kind.strip(), shared & online))
        return found

    # --- grouping ----------------------------------------------------------------------

    def _group(
        self, online: CPUSet, masks: Mapping[int, CPUSet | None], what: str
    ) -> dict[int, CPUSet]:
        """Partition CPUs by their masks, lowest CPU first; None masks are left out."""
        placed = 0
        groups: dict[int, CPUSet] = {}
        for cpu in online:
            mask = masks[cpu]
            if mask is None or (placed >> cpu) & 1:
                continue
            group = CPUSet.from_bits(mask.bits & ~placed)
            for other in group:
                other_mask = masks[other]
                if other_mask is not None and other_mask != mask:
                    self._warn(
                        f"{what} masks disagree: CPU {cpu} lists {mask}, CPU {other} lists "
                        f"{other_mask}; grouped CPUs {group} by CPU {cpu}'s mask"
                    )
            placed |= group.bits
            groups[group.min()] = group
        return groups

    def _cores(self, facts: Mapping[int, CPUFacts], online: CPUSet) -> dict[int, int]:
        """CPU -> core id (lowest thread id of its core)."""
        groups = self._group(online, {c: facts[c].siblings for c in online}, "SMT sibling")
        core_of = {cpu: core for core, cpus in groups.items() for cpu in cpus}
        by_key: dict[tuple[int, int], int] = {}
        for cpu in online:
            if cpu in core_of:
                continue
            f = facts[cpu]
            if f.core_id is not None and f.package_id is not None:
                key = (f.package_id, f.core_id)
                core_of[cpu] = by_key.setdefault(key, cpu)
            else:
                core_of[cpu] = cpu
        return core_of

    def _sockets(self, facts: Mapping[int, CPUFacts], online: CPUSet) -> dict[int, int]:
        """CPU -> socket id."""
        groups = self._group(online, {c: facts[c].package_cpus for c in online}, "package")
        placed = CPUSet().union(*groups.values())
        # CPUs without a mask of their own that another CPU's mask claims stay in that group.
        rest = [cpu for cpu in online if facts[cpu].package_cpus is None and cpu not in placed]
        by_id: dict[int, list[int]] = {}
        unknown: list[int] = []
        for cpu in rest:
            package = facts[cpu].package_id
            if package is not None and package >= 0:
                by_id.setdefault(package, []).append(cpu)
            else:
                unknown.append(cpu)
        for members in by_id.values():
            groups[min(members)] = CPUSet(members)
        if unknown:
            if len(online) > 1:
                self._warn(
                    f"no package information for CPUs {CPUSet(unknown)}; counted them as one socket"
                )
            groups[min(unknown)] = CPUSet(unknown)
        ordered = sorted(groups.items())
        ids: list[int | None] = []
        for _low, group in ordered:
            known = {facts[c].package_id for c in group}
            ids.append(known.pop() if len(known) == 1 else None)
        absurd = [i for i in ids if i is not None and i > MAX_CPU_ID]
        if absurd:
            self._warn(
                f"physical_package_id {min(absurd)} is above {MAX_CPU_ID}; numbered sockets "
                "0.. by lowest CPU instead"
            )
            ids = [None] * len(ids)
        usable = all(i is not None and i >= 0 for i in ids) and len(set(ids)) == len(ids)
        if not usable and any(i is not None and i >= 0 for i in ids):
            self._warn(
                "physical_package_id does not match the package masks; numbered sockets "
                "0.. by lowest CPU instead"
            )
        socket_of: dict[int, int] = {}
        for index, ((_low, group), package_id) in enumerate(zip(ordered, ids, strict=True)):
            socket = package_id if usable and package_id is not None else index
            for cpu in group:
                socket_of[cpu] = socket
        return socket_of

    def _l3(
        self,
        facts: Mapping[int, CPUFacts],
        online: CPUSet,
        core_of: Mapping[int, int],
        socket_of: Mapping[int, int],
    ) -> dict[int, int]:
        """CPU -> L3 group id (dense, by lowest CPU)."""
        core_cpus: dict[int, int] = {}
        for cpu, core in core_of.items():
            core_cpus[core] = core_cpus.get(core, 0) | (1 << cpu)
        masks: dict[int, CPUSet | None] = {}
        for cpu in online:
            own_core = CPUSet.from_bits(core_cpus[core_of[cpu]])
            # An empty shared_cpu_map (old ia64 kernels) means "this core's threads".
            data = [
                (c.level, c.shared or own_core)
                for c in facts[cpu].caches
                if c.type.lower() in ("unified", "data")
            ]
            level3 = [shared for level, shared in data if level == 3]
            if level3:
                masks[cpu] = level3[0]
                continue
            wider = [(level, shared) for level, shared in data if shared - own_core]
            masks[cpu] = max(wider, key=lambda item: item[0])[1] if wider else None
        groups = self._group(online, masks, "L3 cache")
        placed = CPUSet().union(*groups.values())
        by_socket: dict[int, int] = {}
        for cpu in online:
            if masks[cpu] is None and cpu not in placed:
                by_socket[socket_of[cpu]] = by_socket.get(socket_of[cpu], 0) | (1 << cpu)
        for bits in by_socket.values():
            cpus = CPUSet.from_bits(bits)
            groups[cpus.min()] = cpus
        l3_of: dict[int, int] = {}
        for index, (_low, cpus) in enumerate(sorted(groups.items())):
            for cpu in cpus:
                l3_of[cpu] = index
        return l3_of

    # --- NUMA ----------------------------------------------------------------------------

    def _memory(self, path: Path) -> int | None:
        text = self._text(path)
        if text is None:
            return None
        match = _MEMTOTAL.search(text)
        if match is None:
            self._file_warn(path, "has no MemTotal line; memory left unknown")
            return None
        value = int(match.group(1))
        size = value * 1024 if match.group(2) else value
        if size > _MAX_BYTES:
            self._file_warn(path, "reports more memory than 2^63 bytes; memory left unknown")
            return None
        return size

    def _numa(self, system: Path, online: CPUSet) -> tuple[dict[int, int], list[NUMANodeInfo]]:
        node_root = system / "node"
        dirs = self._listdir(node_root, _NODE_DIR)
        if not dirs:
            memory = self._memory(self._root / "proc/meminfo")
            return dict.fromkeys(online, 0), [NUMANodeInfo(id=0, memory_bytes=memory)]
        node_online = self._cpulist(node_root / "online")
        if node_online is not None and not any(node in node_online for node in dirs):
            self._warn(
                f"node/online lists {str(node_online)!r}, none of the nodeN directories; ignored it"
            )
            node_online = None
        if node_online is not None:
            dropped = [node for node in dirs if node not in node_online]
            if dropped:
                self._warn(f"NUMA nodes {dropped} are not in node/online; left them out")
            dirs = {node: path for node, path in dirs.items() if node in node_online}
        node_cpus: dict[int, CPUSet] = {}
        for node, path in dirs.items():
            cpus = self._cpus_from(path, ("cpulist", "cpumap"))
            if cpus is None:
                cpus = CPUSet(self._listdir(path, _CPU_DIR))
            node_cpus[node] = cpus & online
        numa_of: dict[int, int] = {}
        for node, cpus in node_cpus.items():
            for cpu in cpus:
                if cpu in numa_of:
                    self._warn(
                        "CPUs {cpus} are listed in several NUMA nodes; kept each in the "
                        "lowest-numbered one",
                        cpu=cpu,
                    )
                else:
                    numa_of[cpu] = node
        homeless = online - CPUSet(numa_of)
        if homeless:
            home = 0 if 0 in dirs else min(dirs)
            self._warn(f"CPUs {homeless} are in no NUMA node; put them in node {home}")
            for cpu in homeless:
                numa_of[cpu] = home
        order = sorted(node_online) if node_online else sorted(dirs)
        nodes = []
        for node, path in dirs.items():
            distances: dict[int, int] = {}
            text = self._text(path / "distance")
            if text is not None:
                try:
                    row = [int(word) for word in text.split()]
                except ValueError:
                    row = []
                    self._file_warn(path / "distance", "is not a row of integers; ignored it")
                if any(not 0 <= value <= _MAX_DISTANCE for value in row):
                    row = []
                    self._file_warn(
                        path / "distance", f"has values outside 0..{_MAX_DISTANCE}; ignored it"
                    )
                if len(row) == len(order):
                    distances = dict(zip(order, row, strict=True))
                elif len(row) == len(dirs):
                    distances = dict(zip(dirs, row, strict=True))
                elif row:
                    self._warn(
                        f"{self._rel(path / 'distance')} has {len(row)} entries for "
                        f"{len(order)} nodes; distances of node {node} left unknown"
                    )
            nodes.append(
                NUMANodeInfo(
                    id=node,
                    memory_bytes=self._memory(path / "meminfo"),
                    distances=MappingProxyType(distances),
                )
            )
        return numa_of, nodes

    # --- the whole machine -------------------------------------------------------------

    def read_facts(self) -> dict[int, CPUFacts]:
        """The raw per-CPU facts of every online CPU (for debugging and rendering)."""
        system = self._system_dir()
        cpu_root = system / "cpu"
        present = self._listdir(cpu_root, _CPU_DIR)
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
        self._notes = {}
        facts = self.read_facts()
        online = CPUSet(facts)
        missing_topology = [c for c, f in facts.items() if f.siblings is None and f.core_id is None]
        if missing_topology and len(missing_topology) < len(online):
            self._warn(
                f"CPUs {CPUSet(missing_topology)} have no topology files; "
                "counted each as its own core"
            )
        core_of = self._cores(facts, online)
        socket_of = self._sockets(facts, online)
        l3_of = self._l3(facts, online, core_of, socket_of)
        numa_of, nodes = self._numa(self._system_dir(), online)
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
        self.warnings = self._rendered_warnings()
        return CPUTopology(
            records,
            numa_nodes=nodes,
            name=self._root.resolve().name or platform.node() or "localhost",
            warnings=self.warnings,
        )
