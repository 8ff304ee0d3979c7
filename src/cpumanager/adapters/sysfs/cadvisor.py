"""The topology part of cadvisor's ``MachineInfo``, read from a sysfs tree as cadvisor does.

The kubelet never reads sysfs: cadvisor (v0.51, in Kubernetes 1.32) builds ``MachineInfo``
and the kubelet's ``Discover`` (``core/discover.py``) turns it into the CPU topology. This
module reproduces what cadvisor reports on a tree, its quirks included, so that the kubelet's
decision can be predicted on that node. The result is a mapping with cadvisor's JSON field
names (``num_cores``, ``num_sockets``, ``num_physical_cores``, ``topology`` of nodes with
``node_id``, ``memory``, ``hugepages``, ``cores``, ``caches``, ``distances``; cores with
``core_id``, ``thread_ids``, ``socket_id``, ``caches``, ``uncore_caches``).

cadvisor's rules, as measured on its code:

* **Nodes**: the entries ``node*[0-9]`` of ``node/`` in name order (``node10`` before
  ``node2``); the id is the number after ``node``. A node's CPUs are its ``cpu*[0-9]``
  entries (the kernel's links), in name order; ``cpulist`` is not read. A node without such
  entries has no cores.
* **No node directory**: one pseudo-node per ``physical_package_id`` (node id = package id),
  and the CPU count is the number of ``cpu*[0-9]`` directories, offline ones included.
  Without any package id, no node at all.
* **Online**: ``cpu/online`` when it exists (a CPU it does not list, or that a malformed
  list does not reach, is offline); otherwise every CPU.
* **Cores**: CPUs sharing (``core_id``, ``physical_package_id``), and on s390x also
  (``book_id``, ``drawer_id``), per node. A CPU without one of these files is skipped; a file
  that is not an integer makes cadvisor fail. s390x is recognised from the tree (``book_id``
  present, or the ``IBM/S390`` vendor in ``proc/cpuinfo``), not from this host.
* **Caches** (read from each core's first thread): ``index*`` entries in name order, each
  needing ``id`` (not on s390x), ``size`` (``<n>K``), ``level``, ``type`` and
  ``shared_cpu_map``. The number of CPUs sharing it (offline included) decides: level above
  2 shared by "cores in node x threads of this core" CPUs is a node cache, any other level
  above 2 an uncore cache of the core; level 1-2 shared by the core's thread count a core
  cache; the rest is ignored. A cache cadvisor cannot read ends the cache reading of that
  node (caches found before stay).
* **Memory, huge pages, distances** per node: ``meminfo`` (absent = 0), ``hugepages/``,
  ``distance``; a malformed one makes cadvisor fail.
* **Counters** (``machine.Info``): ``num_cores`` = the logical CPUs found;
  ``num_sockets`` / ``num_physical_cores`` = distinct ``physical id`` / ``core id`` lines of
  ``proc/cpuinfo``, else distinct (value, package) pairs over the online CPU directories
  (a missing file counts as ``0``).

Where cadvisor fails, :class:`MachineError` says why (the kubelet then gets no topology and
refuses the static policy: ``could not detect number of cpus``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from cpumanager.adapters.sysfs.cadvisor_files import (
    CPU_ID,
    CPU_IN_PATH,
    CPUINFO_CORE,
    CPUINFO_SOCKET,
    GO_WHITESPACE,
    LEVEL_2,
    MAX_U64,
    MEMTOTAL,
    NODE_IN_PATH,
    SCAN_SIZE,
    CadvisorFailedError,
    CadvisorNotes,
    CadvisorTree,
    MissingFileError,
    dec,
    go_atoi,
    is_s390_tree,
    online_listed,
    reason,
    scan_int,
    shown,
)
from cpumanager.adapters.sysfs.files import SysfsFiles, read_small_file
from cpumanager.errors import MachineError

__all__ = ["CadvisorNotes", "is_s390_tree", "read_machine_info"]

CPU_NAME = re.compile(r"\bcpu[0-9]+\b")


class _Reader:
    def __init__(self, tree: CadvisorTree, notes: CadvisorNotes, *, s390: bool) -> None:
        self.tree = tree
        self.notes = notes
        self.s390 = s390
        self._online: tuple[bool, str] | None = None

    # --- online ------------------------------------------------------------------------

    def is_online(self, cpu_dir: str) -> bool:
        """``IsCPUOnline``: no ``cpu/online`` = online; unparsable = offline."""
        if self._online is None:
            try:
                self._online = (True, self.tree.raw("/sys/devices/system/cpu/online"))
            except MissingFileError:
                self._online = (False, "")
            except CadvisorFailedError:
                self._online = (True, "")
        present, text = self._online
        if not present:
            return True
        match = CPU_ID.search(cpu_dir)
        if match is None:
            return False
        return online_listed(text, int(match.group(1)) & 0xFFFF)

    # --- cores ---------------------------------------------------------------------------

    def _topology_value(self, cpu_dir: str, name: str) -> str:
        return self.tree.trimmed(f"{cpu_dir}/topology/{name}")

    def cores(self, cpu_dirs: list[str]) -> list[dict[str, Any]]:
        cores: list[dict[str, Any]] = []
        for cpu_dir in cpu_dirs:
            match = CPU_IN_PATH.search(cpu_dir)
            if match is None:
                msg = f"unexpected format of CPU directory {cpu_dir}"
                raise CadvisorFailedError(msg)
            cpu = go_atoi(match.group(1), f"the CPU number of {cpu_dir}")
            if not self.is_online(cpu_dir):
                continue
            try:
                core_id = go_atoi(self._topology_value(cpu_dir, "core_id"), f"{cpu_dir} core_id")
                package = go_atoi(
                    self._topology_value(cpu_dir, "physical_package_id"),
                    f"{cpu_dir} physical_package_id",
                )
                book = drawer = ""
                if self.s390:
                    book = self._topology_value(cpu_dir, "book_id")
                    drawer = self._topology_value(cpu_dir, "drawer_id")
            except MissingFileError as missing:
                self.notes.skip(cpu, str(missing.args[0]).split("/topology/")[-1])
                continue
            found = None
            for core in cores:
                if (
                    core["core_id"] == core_id
                    and core["socket_id"] == package
                    and (not self.s390 or (core["book_id"], core["drawer_id"]) == (book, drawer))
                ):
                    found = core
            if found is None:
                found = {
                    "core_id": core_id,
                    "thread_ids": [],
                    "socket_id": package,
                    "caches": [],
                    "uncore_caches": [],
                }
                if self.s390:
                    found["book_id"] = book
                    found["drawer_id"] = drawer
                cores.append(found)
            found["thread_ids"].append(cpu)
        return cores

    # --- caches --------------------------------------------------------------------------

    def _cache(self, cpu: int, name: str) -> dict[str, Any]:
        base = f"/sys/devices/system/cpu/cpu{cpu}/cache/{name}"
        cache_id = 0
        if not self.s390:
            cache_id = scan_int(self.tree.raw(f"{base}/id"), f"{base}/id")
        size_text = self.tree.raw(f"{base}/size")
        size_match = SCAN_SIZE.match(size_text)
        if size_match is None or dec(size_match.group(1)) > MAX_U64:
            msg = f"{base}/size is {shown(size_text)}, not <n>K"
            raise CadvisorFailedError(msg)
        size = dec(size_match.group(1)) * 1024 & MAX_U64  # Go's uint64 product wraps
        level = scan_int(self.tree.raw(f"{base}/level"), f"{base}/level")
        kind = self.tree.trimmed(f"{base}/type")
        count = 0
        mask_text = self.tree.raw(f"{base}/shared_cpu_map")
        for raw_word in mask_text.split(","):
            word = raw_word.strip(GO_WHITESPACE)
            if re.fullmatch(r"[0-9a-fA-F]+", word) is None or int(word, 16) > MAX_U64:
                msg = f"{base}/shared_cpu_map is {shown(mask_text)}, not a CPU map"
                raise CadvisorFailedError(msg)
            count += int(word, 16).bit_count()
        return {
            "cpus": count,
            "cache": {
                "id": cache_id,
                "size": size,
                "type": kind,
                "level": level,
            },
        }

    def add_caches(self, node: dict[str, Any]) -> None:
        cores = node["cores"]
        for core in cores:
            cpu = core["thread_ids"][0]
            try:
                names = self.tree.listdir(f"/sys/devices/system/cpu/cpu{cpu}/cache")
                caches = [self._cache(cpu, n) for n in names if n.startswith("index")]
            except (MissingFileError, CadvisorFailedError) as err:
                why = CPU_NAME.sub("cpuN", reason(err))
                line = "cadvisor reads no cache (or stops reading them) in NUMA node(s) {ids}: "
                self.notes.add(line + why, node["node_id"])
                return
            per_core = len(core["thread_ids"])
            per_node = len(cores) * per_core
            for found in caches:
                cache = found["cache"]
                if cache["level"] > LEVEL_2:
                    if found["cpus"] == per_node:
                        if cache not in node["caches"]:
                            node["caches"].append(cache)
                    elif cache not in core["uncore_caches"]:
                        core["uncore_caches"].append(cache)
                elif found["cpus"] == per_core:
                    core["caches"].append(cache)

    # --- nodes ---------------------------------------------------------------------------

    def node_extras(self, node: dict[str, Any], node_dir: str) -> None:
        try:
            meminfo = self.tree.trimmed(f"{node_dir}/meminfo")
        except (MissingFileError, CadvisorFailedError):
            node["memory"] = 0
        else:
            match = MEMTOTAL.search(meminfo)
            if match is None:
                msg = f"{node_dir}/meminfo has no 'MemTotal: <n> kB' line"
                raise CadvisorFailedError(msg)
            if dec(match.group(1)) > MAX_U64:  # strconv.ParseUint: out of range
                msg = f"{node_dir}/meminfo's MemTotal is out of range"
                raise CadvisorFailedError(msg)
            node["memory"] = dec(match.group(1)) * 1024 & MAX_U64
        node["hugepages"] = self.hugepages(f"{node_dir}/hugepages")
        try:
            distance = self.tree.trimmed(f"{node_dir}/distance")
        except (MissingFileError, CadvisorFailedError):
            node["distances"] = None
            return
        row = []
        for item in distance.split(" "):
            if re.fullmatch(r"[0-9]+", item) is None or dec(item) > MAX_U64:
                msg = f"{node_dir}/distance is {shown(distance)}, not distances"
                raise CadvisorFailedError(msg)
            row.append(dec(item))
        node["distances"] = row

    def hugepages(self, directory: str) -> list[dict[str, int]]:
        try:
            names = self.tree.listdir(directory)
        except (MissingFileError, CadvisorFailedError):
            return []
        found = []
        for name in names:
            parts = name.split("-")
            size_text = parts[1].split("kB")[0] if len(parts) > 1 else ""
            if re.fullmatch(r"[0-9]+", size_text) is None or dec(size_text) > MAX_U64:
                msg = f"{directory}/{name} is not named hugepages-<n>kB"
                raise CadvisorFailedError(msg)
            try:
                value = self.tree.trimmed(f"{directory}/{name}/nr_hugepages")
            except MissingFileError as err:
                msg = f"{directory}/{name}/nr_hugepages does not exist"
                raise CadvisorFailedError(msg) from err
            pages = scan_int(value, f"{directory}/{name}/nr_hugepages")
            found.append({"num_pages": pages, "page_size": dec(size_text)})
        return found

    def nodes(self) -> tuple[list[dict[str, Any]], int]:
        node_dirs = self.tree.glob("/sys/devices/system/node", "node")
        if not node_dirs:
            return self.package_nodes()
        nodes = []
        logical = 0
        for node_dir in node_dirs:
            match = NODE_IN_PATH.search(node_dir)
            if match is None or not match.group(1):
                msg = f"unexpected NUMA node directory {node_dir}"
                raise CadvisorFailedError(msg)
            node: dict[str, Any] = {
                "node_id": go_atoi(match.group(1), node_dir),
                "memory": 0,
                "hugepages": [],
                "cores": [],
                "caches": [],
                "distances": None,
            }
            cpu_dirs = self.tree.glob(node_dir, "cpu")
            if not cpu_dirs:
                self.notes.add(
                    "cadvisor finds no CPU in NUMA node(s) {ids} "
                    "(it reads a node's cpuN links, not its cpulist)",
                    node["node_id"],
                )
            else:
                node["cores"] = self.cores(cpu_dirs)
                logical += sum(len(core["thread_ids"]) for core in node["cores"])
            self.add_caches(node)
            self.node_extras(node, node_dir)
            nodes.append(node)
        return nodes, logical

    def package_nodes(self) -> tuple[list[dict[str, Any]], int]:
        cpu_dirs = self.tree.glob("/sys/devices/system/cpu", "cpu")
        if not cpu_dirs:
            msg = "no cpuN directory under sys/devices/system/cpu"
            raise CadvisorFailedError(msg)
        by_package: dict[int, list[str]] = {}
        for cpu_dir in cpu_dirs:
            try:
                text = self._topology_value(cpu_dir, "physical_package_id")
            except MissingFileError:
                match = CPU_IN_PATH.search(cpu_dir)
                if match is not None:
                    self.notes.skip(int(match.group(1)), "physical_package_id")
                continue
            by_package.setdefault(go_atoi(text, f"{cpu_dir} physical_package_id"), []).append(
                cpu_dir
            )
        if not by_package:
            return [], len(cpu_dirs)
        self.notes.add(
            "cadvisor finds no NUMA node directory and makes one pseudo-node per "
            f"physical package ({len(by_package)})"
        )
        nodes = []
        for package in sorted(by_package):
            node: dict[str, Any] = {
                "node_id": package,
                "memory": 0,
                "hugepages": None,
                "cores": self.cores(by_package[package]),
                "caches": [],
                "distances": None,
            }
            self.add_caches(node)
            nodes.append(node)
        return nodes, len(cpu_dirs)

    # --- machine.Info's counters -----------------------------------------------------------

    def unique_count(self, cpuinfo: str, pattern: re.Pattern[str], name: str) -> int:
        found = {match.group(0) for match in pattern.finditer(cpuinfo)}
        if found:
            return len(found)
        present, online = self._online_text()
        uniques = set()
        for cpu_dir in self.tree.glob("/sys/devices/system/cpu", "cpu"):
            match = CPU_ID.search(cpu_dir)
            if match is None:
                return 0
            if present and not online_listed(online, int(match.group(1)) & 0xFFFF):
                continue
            value = self._or_zero(f"{cpu_dir}/topology/{name}")
            package = self._or_zero(f"{cpu_dir}/topology/physical_package_id")
            uniques.add((value, package))
        return len(uniques)

    def _online_text(self) -> tuple[bool, str]:
        try:
            return True, self.tree.raw("/sys/devices/system/cpu/online")
        except MissingFileError:
            return False, ""
        except CadvisorFailedError:
            return True, ""

    def _or_zero(self, logical: str) -> str:
        try:
            return self.tree.raw(logical).strip(GO_WHITESPACE)
        except (MissingFileError, CadvisorFailedError):
            return "0"


def read_machine_info(root: Path, *, s390: bool | None = None) -> tuple[dict[str, Any], list[str]]:
    """cadvisor's ``MachineInfo`` (topology part) for the tree under ``root``, and what
    cadvisor logged. ``s390`` forces the s390x rules (default: decided from the tree)."""
    files = SysfsFiles(Path(root))
    system = files.system_dir()
    tree = CadvisorTree(files, system)
    try:
        cpuinfo = read_small_file(files.root / "proc/cpuinfo").decode("utf-8", "replace")
    except OSError:
        cpuinfo = ""
    if s390 is None:
        s390 = is_s390_tree(system, cpuinfo)
    notes = CadvisorNotes()
    reader = _Reader(tree, notes, s390=s390)
    try:
        nodes, logical = reader.nodes()
    except CadvisorFailedError as err:
        msg = (
            f"cadvisor cannot read this node's topology ({err.args[0]}); the kubelet gets no "
            "CPU topology and its static CPU manager policy fails: could not detect number "
            "of cpus"
        )
        raise MachineError(msg) from err
    info = {
        "num_cores": logical,
        "num_physical_cores": reader.unique_count(cpuinfo, CPUINFO_CORE, "core_id"),
        "num_sockets": reader.unique_count(cpuinfo, CPUINFO_SOCKET, "physical_package_id"),
        "topology": nodes,
    }
    return info, notes.lines
