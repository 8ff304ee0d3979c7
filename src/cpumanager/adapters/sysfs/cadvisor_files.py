"""cadvisor's file reading, as its code does it: fixed ``/sys/devices/system`` paths mapped
into a tree, Go's parsing rules (``strconv.Atoi``, ``fmt.Sscanf``, ``filepath.Glob``, runc's
online list), and what cadvisor logs. Used by :mod:`.cadvisor`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from cpumanager.adapters.sysfs.files import SysfsFiles, read_small_file
from cpumanager.core.cpuset import MAX_CPU_ID, CPUSet
from cpumanager.core.printable import printable

__all__ = [
    "dec",
    "CPUINFO_CORE",
    "CPUINFO_SOCKET",
    "CPU_ID",
    "CPU_IN_PATH",
    "CadvisorFailedError",
    "CadvisorNotes",
    "CadvisorTree",
    "GO_WHITESPACE",
    "LEVEL_2",
    "MAX_U64",
    "MEMTOTAL",
    "MissingFileError",
    "NODE_IN_PATH",
    "SCAN_SIZE",
    "glob_match",
    "go_atoi",
    "is_s390_tree",
    "online_listed",
    "reason",
    "scan_int",
]


CPU_IN_PATH = re.compile(r"/cpu(\d+)")
CPU_ID = re.compile(r"cpu([0-9]+)")
NODE_IN_PATH = re.compile(r"node/node(\d*)")
GO_ATOI = re.compile(r"[+-]?[0-9]+")
SCAN_INT = re.compile(r"[ \t\r]*([+-]?[0-9]+)")
SCAN_SIZE = re.compile(r"[ \t\r]*([0-9]+)K")
MEMTOTAL = re.compile(r"MemTotal:\s*([0-9]+) kB")
CPUINFO_CORE = re.compile(r"^core id\s*:\s*([0-9]+)$", re.MULTILINE)
CPUINFO_SOCKET = re.compile(r"^physical id\s*:\s*([0-9]+)$", re.MULTILINE)
MAX_INT = (1 << 63) - 1
MAX_U64 = (1 << 64) - 1
GO_WHITESPACE = " \t\n\v\f\r\x85\xa0"
LEVEL_2 = 2


class MissingFileError(Exception):
    """A file that does not exist (cadvisor's ``os.IsNotExist``)."""


class CadvisorFailedError(Exception):
    """cadvisor returns an error: the whole topology is lost."""


class CadvisorNotes:
    """What cadvisor logged while reading (skipped CPUs, nodes without CPUs, ...)."""

    def __init__(self) -> None:
        self._lines: dict[str, list[int]] = {}

    def add(self, line: str, *ids: int) -> None:
        """A line; ``{ids}`` in it collects ``ids`` (CPUs or nodes) over every call."""
        self._lines.setdefault(line, []).extend(ids)

    def skip(self, cpu: int, missing: str) -> None:
        """cadvisor leaves ``cpu`` out because its ``missing`` file does not exist."""
        self.add(f"cadvisor skips CPUs {{ids}}: no {missing} file", cpu)

    @property
    def lines(self) -> list[str]:
        return [line.replace("{ids}", _id_list(ids)) for line, ids in self._lines.items()]


def _id_list(ids: list[int]) -> str:
    """``0-3,8`` for CPU or node ids (negative ones, as cadvisor's node -1, listed plainly)."""
    if any(not 0 <= i <= MAX_CPU_ID for i in ids):
        return ",".join(str(i) for i in sorted(set(ids)))
    return str(CPUSet(ids))


def dec(text: str) -> int:
    """A decimal of the tree (optional sign, ASCII digits) as an int; one too long for any
    Go integer comes back as +/-10**30, out of every range checked here."""
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-").lstrip("0") or "0"
    return sign * (10**30 if len(digits) > 25 else int(digits))


def shown(text: str) -> str:
    """A file's value quoted for a one-line message: stripped, escaped, cut at 40 characters
    (a hostile tree's "core_id" may be a megabyte of digits)."""
    return repr(printable(text.strip(), limit=40))


def go_atoi(text: str, what: str) -> int:
    if GO_ATOI.fullmatch(text) is None or not -MAX_INT - 1 <= dec(text) <= MAX_INT:
        msg = f"{what} is {shown(text)}, not an integer (strconv.Atoi)"
        raise CadvisorFailedError(msg)
    return dec(text)


def scan_int(text: str, what: str) -> int:
    match = SCAN_INT.match(text)
    if match is None:
        msg = f"{what} is {shown(text)}, not an integer"
        raise CadvisorFailedError(msg)
    value = dec(match.group(1))
    if not -MAX_INT - 1 <= value <= MAX_INT:  # fmt.Sscanf into an int: out of range
        msg = f"{what} is {shown(text)}, out of an integer's range"
        raise CadvisorFailedError(msg)
    return value


_S390_VENDOR = re.compile(r"^vendor_id\s*:\s*IBM/S390", re.MULTILINE)


def is_s390_tree(system: Path, cpuinfo: str = "") -> bool:
    """True when the tree is an s390x machine's: its CPUs have ``topology/book_id``, or its
    ``/proc/cpuinfo`` (given as ``cpuinfo``) names the vendor ``IBM/S390``."""
    if _S390_VENDOR.search(cpuinfo):
        return True
    cpu_root = system / "cpu"
    try:
        names = sorted(os.listdir(cpu_root))
    except OSError:
        return False
    return any(
        glob_match(name, "cpu") and os.path.exists(cpu_root / name / "topology/book_id")
        for name in names
    )


def glob_match(name: str, prefix: str) -> bool:
    """Go's ``filepath.Match(prefix + "*[0-9]", name)``."""
    return len(name) > len(prefix) and name.startswith(prefix) and name[-1] in "0123456789"


class CadvisorTree:
    """cadvisor's fixed paths (``/sys/devices/system/...``) mapped into the tree."""

    def __init__(self, files: SysfsFiles, system: Path) -> None:
        self.files = files
        self.system = system
        self.cpu_root = system / "cpu"

    def real(self, logical: str) -> Path:
        """A path cadvisor would open (``/sys/devices/system/<rest>``) in the tree."""
        return self.system / logical.removeprefix("/sys/devices/system/")

    def raw(self, logical: str) -> str:
        """A file's text as ``os.ReadFile`` gives it; MissingFileError or CadvisorFailedError
        otherwise."""
        path = self.real(logical)
        try:
            return read_small_file(path).decode("utf-8", errors="replace")
        except FileNotFoundError as err:
            raise MissingFileError(logical) from err
        except OSError as err:
            msg = f"{self.files.rel(path)} cannot be read ({err.strerror or err})"
            raise CadvisorFailedError(msg) from err

    def trimmed(self, logical: str) -> str:
        return self.raw(logical).strip(GO_WHITESPACE)

    def glob(self, logical_dir: str, prefix: str) -> list[str]:
        """``filepath.Glob(dir/prefix*[0-9])``: logical paths in name order."""
        try:
            names = os.listdir(self.real(logical_dir))
        except OSError:
            return []
        return [f"{logical_dir}/{name}" for name in sorted(names) if glob_match(name, prefix)]

    def listdir(self, logical: str) -> list[str]:
        try:
            return sorted(os.listdir(self.real(logical)))
        except FileNotFoundError as err:
            raise MissingFileError(logical) from err
        except OSError as err:
            msg = f"{logical} cannot be listed ({err.strerror or err})"
            raise CadvisorFailedError(msg) from err


def online_listed(text: str, cpu: int) -> bool:
    """runc's online-list check as cadvisor uses it: stops at the first malformed item."""
    content = text.strip(GO_WHITESPACE)
    if not text:
        return False
    for item in content.split(","):
        bounds = item.split("-", 2)
        if len(bounds) == 3 or any(re.fullmatch(r"[0-9]+", b) is None for b in bounds):
            return False
        numbers = [dec(b) for b in bounds]
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


def reason(err: Exception) -> str:
    if isinstance(err, MissingFileError):
        return f"{err.args[0]} does not exist"
    return str(err.args[0])
