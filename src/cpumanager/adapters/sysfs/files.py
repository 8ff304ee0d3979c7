"""Files under a sysfs root, read defensively: what each file says, or a warning and None.

Every reader here returns None for an absent file and turns an unreadable or malformed one
into a warning, so discovery degrades to "unknown" instead of failing. Only regular files
are read, opened without blocking, up to ``limits.MAX_SYSFS_FILE_BYTES`` (a FIFO, a device
or a link to one is a warning: a copied tree may hold anything); a directory of more
entries than a machine has CPUs is refused. Warnings about the same file of many CPUs
(``cpuN/topology/core_id``) merge into one line naming the CPUs.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path

from cpumanager.core import limits
from cpumanager.core.cpuset import MAX_CPU_ID, CPUSet
from cpumanager.errors import InvalidCPUSetError, MachineError

__all__ = ["CPU_DIR", "NODE_DIR", "SysfsFiles", "parse_hex_mask", "read_small_file"]

CPU_DIR = re.compile(r"cpu(\d+)")
NODE_DIR = re.compile(r"node(\d+)")
_HEX_MASK = re.compile(r"(?:0x)?[0-9a-f]{0,8}(?:,(?:0x)?[0-9a-f]{0,8})*", re.IGNORECASE)
_PER_CPU = re.compile(r"/cpu(\d+)(?=/)")


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


def read_small_file(path: Path, max_bytes: int = limits.MAX_SYSFS_FILE_BYTES) -> bytes:
    """A sysfs or /proc file's bytes: a regular file (a link is followed to one), opened
    without blocking, at most ``max_bytes``; OSError otherwise (its strerror says why)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        chunks: list[bytes] = []
        size = 0
        while chunk := os.read(fd, 1 << 16):
            size += len(chunk)
            if size > max_bytes:
                raise OSError(errno.EFBIG, f"larger than {max_bytes} bytes")
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


class SysfsFiles:
    """The files under ``root`` (the directory that holds ``sys/``), and what was odd in them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._notes: dict[str, list[int]] = {}

    # --- warnings ------------------------------------------------------------------------

    def warn(self, message: str, *, cpu: int | None = None) -> None:
        """Record a warning; ``{cpus}`` in ``message`` collects the CPUs it applies to."""
        cpus = self._notes.setdefault(message, [])
        if cpu is not None:
            cpus.append(cpu)

    def file_warn(self, path: Path, problem: str) -> None:
        """A warning about one file; per-CPU files are merged into one line for all CPUs."""
        rel = self.rel(path)
        match = _PER_CPU.search(rel)
        if match is None:
            self.warn(f"{rel} {problem}")
        else:
            pattern = f"{rel[: match.start()]}/cpuN{rel[match.end() :]}"
            self.warn(f"{pattern} {problem} (CPUs {{cpus}})", cpu=int(match.group(1)))

    def rendered_warnings(self) -> list[str]:
        """Every warning so far, ``{cpus}`` replaced by the CPUs it was recorded for."""
        return [
            message.replace("{cpus}", str(CPUSet(cpus))) if cpus else message
            for message, cpus in self._notes.items()
        ]

    def clear(self) -> None:
        self._notes = {}

    def rel(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.root))
        except ValueError:  # pragma: no cover - every path we build is under the root
            return str(path)

    # --- readers ---------------------------------------------------------------------------

    def text(self, path: Path) -> str | None:
        """Stripped contents (NULs dropped), None when absent; unreadable = warning + None."""
        try:
            raw = read_small_file(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as err:
            self.file_warn(path, f"cannot be read ({err.strerror or err}); ignored it")
            return None
        return raw.decode("ascii", errors="replace").replace("\0", "").strip()

    def integer(self, path: Path) -> int | None:
        text = self.text(path)
        if not text:
            return None
        try:
            return int(text)
        except ValueError:
            self.file_warn(path, "is not an integer; ignored it")
            return None

    def cpulist(self, path: Path) -> CPUSet | None:
        text = self.text(path)
        if text is None:
            return None
        try:
            return CPUSet.parse(text)
        except InvalidCPUSetError:
            self.file_warn(path, "is not a CPU list; ignored it")
            return None

    def cpumask(self, path: Path) -> CPUSet | None:
        text = self.text(path)
        if text is None:
            return None
        try:
            return parse_hex_mask(text)
        except ValueError:
            self.file_warn(path, "is not a hex CPU mask; ignored it")
            return None

    def cpus_from(self, directory: Path, names: Iterable[str]) -> CPUSet | None:
        """The first of ``names`` that exists: ``*_list`` files as lists, others as masks."""
        for name in names:
            path = directory / name
            found = self.cpulist(path) if name.endswith("list") else self.cpumask(path)
            if found is not None:
                return found
        return None

    # --- directories -----------------------------------------------------------------------

    def system_dir(self) -> Path:
        """``sys/devices/system`` under the root (or ``devices/system`` for a copy of /sys)."""
        root = self.root
        if not os.path.exists(root):  # False on any OSError (a name too long, a loop)
            msg = (
                f"sysfs root {str(root)!r} does not exist; give the directory that holds "
                "sys/devices/system (e.g. / or an extracted copy)"
            )
            raise MachineError(msg)
        if not os.path.isdir(root):
            msg = f"sysfs root {str(root)!r} is not a directory; give the directory that holds sys/"
            raise MachineError(msg)
        for candidate in (root / "sys/devices/system", root / "devices/system"):
            if os.path.isdir(candidate / "cpu"):
                return candidate
        msg = (
            f"no sys/devices/system/cpu under {str(root)!r}; give the directory that holds sys/ "
            "(e.g. / or an extracted copy of a machine's sysfs)"
        )
        raise MachineError(msg)

    def listdir(self, directory: Path, pattern: re.Pattern[str]) -> dict[int, Path]:
        """Entries named like ``pattern`` (one number group) by number, ascending."""
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
            if len(found) >= limits.MAX_CPUS:
                msg = (
                    f"{str(directory)!r} has more than {limits.MAX_CPUS:,} {pattern.pattern} "
                    "entries, more than a machine may have; refused"
                )
                raise MachineError(msg)
            number = int(match.group(1))
            if number > MAX_CPU_ID:
                self.warn(f"{self.rel(entry)} has an id above {MAX_CPU_ID}; left it out")
                continue
            found[number] = entry
        return dict(sorted(found.items()))
