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
  present), not from this host.
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

import os
import re
from pathlib import Path
from typing import Any

from cpumanager.adapters.sysfs.files import SysfsFiles, read_small_file
from cpumanager.core.cpuset import CPUSet
from cpumanager.errors import MachineError

__all__ = ["CadvisorNotes", "is_s390_tree", "read_machine_info"]

_CPU_IN_PATH = re.compile(r"/cpu(\d+)")
_CPU_ID = re.compile(r"cpu([0-9]+)")
_NODE_IN_PATH = re.compile(r"node/node(\d*)")
_GO_ATOI = re.compile(r"[+-]?[0-9]+")
_SCAN_INT = re.compile(r"[ \t\r]*([+-]?[0-9]+)")
_SCAN_SIZE = re.compile(r"[ \t\r]*([0-9]+)K")
_MEMTOTAL = re.compile(r"MemTotal:\s*([0-9]+) kB")
_CPUINFO_CORE = re.compile(r"^core id\s*:\s*([0-9]+)$", re.MULTILINE)
_CPUINFO_SOCKET = re.compile(r"^physical id\s*:\s*([0-9]+)$", re.MULTILINE)
_MAX_INT = (1 << 63) - 1
_MAX_U64 = (1 << 64) - 1
_GO_WHITESPACE = " \t\n\v\f\r\x85\xa0"
_LEVEL_2 = 2


class _MissingError(Exception):
    """A file that does not exist (cadvisor's ``os.IsNotExist``)."""


class _BrokenError(Exception):
    """cadvisor returns an error: the whole topology is lost."""


class CadvisorNotes:
    """What cadvisor logged while reading (skipped CPUs, nodes without CPUs, ...)."""

    def __init__(self) -> None:
        self._lines: dict[str, list[int]] = {}

    def add(self, line: str) -> None:
        self._lines.setdefault(line, [])

    def skip(self, cpu: int, missing: str) -> None:
        """cadvisor leaves ``cpu`` out because its ``missing`` file does not exist."""
        self._lines.setdefault(f"cadvisor skips CPUs {{cpus}}: no {missing} file", []).append(cpu)

    @property
    def lines(self) -> list[str]:
        return [
            line.replace("{cpus}", str(CPUSet(cpus))) if cpus else line
            for line, cpus in self._lines.items()
        ]


def _go_atoi(text: str, what: str) -> int:
    if _GO_ATOI.fullmatch(text) is None or abs(int(text)) > _MAX_INT:
        msg = f"{what} is {text!r}, not an integer (strconv.Atoi: invalid syntax)"
        raise _BrokenError(msg)
    return int(text)


def _scan_int(text: str, what: str) -> int:
    match = _SCAN_INT.match(text)
    if match is None:
        msg = f"{what} is {text.strip()!r}, not an integer"
        raise _BrokenError(msg)
    return int(match.group(1))


def is_s390_tree(system: Path) -> bool:
    """True when the tree is an s390x machine's (its CPUs have ``topology/book_id``)."""
    cpu_root = system / "cpu"
    try:
        names = sorted(os.listdir(cpu_root))
    except OSError:
        return False
    return any(
        _glob_match(name, "cpu") and os.path.exists(cpu_root / name / "topology/book_id")
        for name in names
    )


def _glob_match(name: str, prefix: str) -> bool:
    """Go's ``filepath.Match(prefix + "*[0-9]", name)``."""
    return len(name) > len(prefix) and name.startswith(prefix) and name[-1] in "0123456789"


class _Tree:
    """cadvisor's fixed paths (``/sys/devices/system/...``) mapped into the tree."""

    def __init__(self, files: SysfsFiles, system: Path) -> None:
        self.files = files
        self.system = system
        self.cpu_root = system / "cpu"

    def real(self, logical: str) -> Path:
        """A path cadvisor would open (``/sys/devices/system/<rest>``) in the tree."""
        return self.system / logical.removeprefix("/sys/devices/system/")

    def raw(self, logical: str) -> str:
        """A file's text as ``os.ReadFile`` gives it; _MissingError / _BrokenError otherwise."""
        path = self.real(logical)
        try:
            return read_small_file(path).decode("utf-8", errors="replace")
        except FileNotFoundError as err:
            raise _MissingError(logical) from err
        except OSError as err:
            msg = f"{self.files.rel(path)} cannot be read ({err.strerror or err})"
            raise _BrokenError(msg) from err

    def trimmed(self, logical: str) -> str:
        return self.raw(logical).strip(_GO_WHITESPACE)

    def glob(self, logical_dir: str, prefix: str) -> list[str]:
        """``filepath.Glob(dir/prefix*[0-9])``: logical paths in name order."""
        try:
            names = os.listdir(self.real(logical_dir))
        except OSError:
            return []
        return [f"{logical_dir}/{name}" for name in sorted(names) if _glob_match(name, prefix)]

    def listdir(self, logical: str) -> list[str]:
        try:
            return sorted(os.listdir(self.real(logical)))
        except FileNotFoundError as err:
            raise _MissingError(logical) from err
        except OSError as err:
            msg = f"{logical} cannot be listed ({err.strerror or err})"
            raise _BrokenError(msg) from err


class _Reader:
    def __init__(self, tree: _Tree, notes: CadvisorNotes, *, s390: bool) -> None:
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
            except _MissingError:
                self._online = (False, "")
            except _BrokenError:
                self._online = (True, "")
        present, text = self._online
        if not present:
            return True
        match = _CPU_ID.search(cpu_dir)
        if match is None:
            return False
        return _listed(text, int(match.group(1)) & 0xFFFF)

    # --- cores ---------------------------------------------------------------------------

    def _topology_value(self, cpu_dir: str, name: str) -> str:
        return self.tree.trimmed(f"{cpu_dir}/topology/{name}")

    def cores(self, cpu_dirs: list[str]) -> list[dict[str, Any]]:
        cores: list[dict[str, Any]] = []
        for cpu_dir in cpu_dirs:
            match = _CPU_IN_PATH.search(cpu_dir)
            if match is None:
                msg = f"unexpected format of CPU directory {cpu_dir}"
                raise _BrokenError(msg)
            cpu = int(match.group(1))
            if not self.is_online(cpu_dir):
                continue
            try:
                core_id = _go_atoi(self._topology_value(cpu_dir, "core_id"), f"{cpu_dir} core_id")
                package = _go_atoi(
                    self._topology_value(cpu_dir, "physical_package_id"),
                    f"{cpu_dir} physical_package_id",
                )
                book = drawer = ""
                if self.s390:
                    book = self._topology_value(cpu_dir, "book_id")
                    drawer = self._topology_value(cpu_dir, "drawer_id")
            except _MissingError as missing:
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
            cache_id = _scan_int(self.tree.raw(f"{base}/id"), f"{base}/id")
        size_text = self.tree.raw(f"{base}/size")
        size_match = _SCAN_SIZE.match(size_text)
        if size_match is None or int(size_match.group(1)) * 1024 > _MAX_U64:
            msg = f"{base}/size is {size_text.strip()!r}, not <n>K"
            raise _BrokenError(msg)
        level = _scan_int(self.tree.raw(f"{base}/level"), f"{base}/level")
        kind = self.tree.trimmed(f"{base}/type")
        count = 0
        mask_text = self.tree.raw(f"{base}/shared_cpu_map")
        for raw_word in mask_text.split(","):
            word = raw_word.strip(_GO_WHITESPACE)
            if re.fullmatch(r"[0-9a-fA-F]{1,16}", word) is None:
                msg = f"{base}/shared_cpu_map is {mask_text.strip()!r}, not a CPU map"
                raise _BrokenError(msg)
            count += int(word, 16).bit_count()
        return {
            "cpus": count,
            "cache": {
                "id": cache_id,
                "size": int(size_match.group(1)) * 1024,
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
            except (_MissingError, _BrokenError) as err:
                self.notes.add(
                    f"cadvisor reads no caches of NUMA node {node['node_id']} from CPU {cpu} "
                    f"on ({_reason(err)})"
                )
                return
            per_core = len(core["thread_ids"])
            per_node = len(cores) * per_core
            for found in caches:
                cache = found["cache"]
                if cache["level"] > _LEVEL_2:
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
        except (_MissingError, _BrokenError):
            node["memory"] = 0
        else:
            match = _MEMTOTAL.search(meminfo)
            if match is None:
                msg = f"{node_dir}/meminfo has no 'MemTotal: <n> kB' line"
                raise _BrokenError(msg)
            node["memory"] = int(match.group(1)) * 1024
        node["hugepages"] = self.hugepages(f"{node_dir}/hugepages")
        try:
            distance = self.tree.trimmed(f"{node_dir}/distance")
        except (_MissingError, _BrokenError):
            node["distances"] = None
            return
        row = []
        for item in distance.split(" "):
            if re.fullmatch(r"[0-9]+", item) is None or int(item) > _MAX_U64:
                msg = f"{node_dir}/distance is {distance!r}, not distances"
                raise _BrokenError(msg)
            row.append(int(item))
        node["distances"] = row

    def hugepages(self, directory: str) -> list[dict[str, int]]:
        try:
            names = self.tree.listdir(directory)
        except (_MissingError, _BrokenError):
            return []
        found = []
        for name in names:
            parts = name.split("-")
            size_text = parts[1].split("kB")[0] if len(parts) > 1 else ""
            if re.fullmatch(r"[0-9]+", size_text) is None:
                msg = f"{directory}/{name} is not named hugepages-<n>kB"
                raise _BrokenError(msg)
            try:
                value = self.tree.trimmed(f"{directory}/{name}/nr_hugepages")
            except _MissingError as err:
                msg = f"{directory}/{name}/nr_hugepages does not exist"
                raise _BrokenError(msg) from err
            pages = _scan_int(value, f"{directory}/{name}/nr_hugepages")
            found.append({"num_pages": pages, "page_size": int(size_text)})
        return found

    def nodes(self) -> tuple[list[dict[str, Any]], int]:
        node_dirs = self.tree.glob("/sys/devices/system/node", "node")
        if not node_dirs:
            return self.package_nodes()
        nodes = []
        logical = 0
        for node_dir in node_dirs:
            match = _NODE_IN_PATH.search(node_dir)
            if match is None or not match.group(1):
                msg = f"unexpected NUMA node directory {node_dir}"
                raise _BrokenError(msg)
            node: dict[str, Any] = {
                "node_id": _go_atoi(match.group(1), node_dir),
                "memory": 0,
                "hugepages": [],
                "cores": [],
                "caches": [],
                "distances": None,
            }
            cpu_dirs = self.tree.glob(node_dir, "cpu")
            if not cpu_dirs:
                self.notes.add(
                    f"cadvisor finds no CPU in NUMA node {node['node_id']} "
                    "(it reads the node's cpuN links, not its cpulist)"
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
            raise _BrokenError(msg)
        by_package: dict[int, list[str]] = {}
        for cpu_dir in cpu_dirs:
            try:
                text = self._topology_value(cpu_dir, "physical_package_id")
            except _MissingError:
                match = _CPU_IN_PATH.search(cpu_dir)
                if match is not None:
                    self.notes.skip(int(match.group(1)), "physical_package_id")
                continue
            by_package.setdefault(_go_atoi(text, f"{cpu_dir} physical_package_id"), []).append(
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
            match = _CPU_ID.search(cpu_dir)
            if match is None:
                return 0
            if present and not _listed(online, int(match.group(1)) & 0xFFFF):
                continue
            value = self._or_zero(f"{cpu_dir}/topology/{name}")
            package = self._or_zero(f"{cpu_dir}/topology/physical_package_id")
            uniques.add((value, package))
        return len(uniques)

    def _online_text(self) -> tuple[bool, str]:
        try:
            return True, self.tree.raw("/sys/devices/system/cpu/online")
        except _MissingError:
            return False, ""
        except _BrokenError:
            return True, ""

    def _or_zero(self, logical: str) -> str:
        try:
            return self.tree.raw(logical).strip(_GO_WHITESPACE)
        except (_MissingError, _BrokenError):
            return "0"


def _listed(text: str, cpu: int) -> bool:
    """runc's online-list check as cadvisor uses it: stops at the first malformed item."""
    content = text.strip(_GO_WHITESPACE)
    if not text:
        return False
    for item in content.split(","):
        bounds = item.split("-", 2)
        if len(bounds) == 3 or any(re.fullmatch(r"[0-9]+", b) is None for b in bounds):
            return False
        numbers = [int(b) for b in bounds]
        if any(n > 0xFFFF for n in numbers):
            return False
        if len(numbers) == 2:
            if numbers[0] > numbers[1]:
                return False
            if numbers[0] <= cpu <= numbers[1]:
                return True
        elif numbers[0] == cpu:
            return True
    return False


def _reason(err: Exception) -> str:
    if isinstance(err, _MissingError):
        return f"{err.args[0]} does not exist"
    return str(err.args[0])


def read_machine_info(root: Path, *, s390: bool | None = None) -> tuple[dict[str, Any], list[str]]:
    """cadvisor's ``MachineInfo`` (topology part) for the tree under ``root``, and what
    cadvisor logged. ``s390`` forces the s390x rules (default: decided from the tree)."""
    files = SysfsFiles(Path(root))
    system = files.system_dir()
    tree = _Tree(files, system)
    if s390 is None:
        s390 = is_s390_tree(system)
    notes = CadvisorNotes()
    reader = _Reader(tree, notes, s390=s390)
    try:
        cpuinfo = read_small_file(files.root / "proc/cpuinfo").decode("utf-8", "replace")
    except OSError:
        cpuinfo = ""
    try:
        nodes, logical = reader.nodes()
    except _BrokenError as err:
        msg = (
            f"cadvisor cannot read this node's topology ({err.args[0]}); the kubelet gets no "
            "CPU topology and its static CPU manager policy fails: could not detect number "
            "of cpus"
        )
        raise MachineError(msg) from err
    info = {
        "num_cores": logical,
        "num_physical_cores": reader.unique_count(cpuinfo, _CPUINFO_CORE, "core_id"),
        "num_sockets": reader.unique_count(cpuinfo, _CPUINFO_SOCKET, "physical_package_id"),
        "topology": nodes,
    }
    return info, notes.lines
