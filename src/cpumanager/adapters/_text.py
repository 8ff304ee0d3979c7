"""Shared edges of the adapters that read user-written text files (not an adapter itself).

Each reader names its file kind and its remedies; the OS and YAML failures are turned into
one-line messages here, so every file kind words them the same way. Manifest directories
(pods and agent workloads) are listed by the same rule, and YAML is parsed by one loader.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import yaml

from cpumanager.errors import InputError

__all__ = [
    "YAML_LOADER",
    "manifest_files_in",
    "read_bounded_text",
    "read_utf8_text",
    "yaml_problem",
]

# libyaml's loader when PyYAML was built with it (much faster), else the pure one.
YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


def manifest_files_in(directory: Path) -> list[Path]:
    """The ``*.yaml``, ``*.yml`` and ``*.json`` files of ``directory``, in name order.

    Not recursive. OSError is left to the caller, which knows what the directory is for.
    """
    return sorted(
        p for p in directory.iterdir() if p.suffix.lower() in _MANIFEST_SUFFIXES and p.is_file()
    )


def read_utf8_text(
    path: Path,
    *,
    what: str,
    utf8_remedy: str,
    unreadable_remedy: str = "",
    directory_remedy: str | None = None,
) -> str:
    """The file's text; InputError naming ``what`` and the path when it cannot be read.

    ``directory_remedy`` None reports a directory like any other unreadable path.
    """
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError as err:
        msg = f"{what} {str(path)!r} does not exist; check the path"
        raise InputError(msg) from err
    except IsADirectoryError as err:
        if directory_remedy is None:
            msg = _unreadable(path, err, what=what, remedy=unreadable_remedy)
        else:
            msg = f"{str(path)!r} is a directory; {directory_remedy}"
        raise InputError(msg) from err
    except UnicodeDecodeError as err:
        msg = f"{what} {str(path)!r} is not UTF-8 text; {utf8_remedy}"
        raise InputError(msg) from err
    except OSError as err:
        msg = _unreadable(path, err, what=what, remedy=unreadable_remedy)
        raise InputError(msg) from err


def _unreadable(path: Path, err: OSError, *, what: str, remedy: str) -> str:
    tail = f"; {remedy}" if remedy else ""
    return f"cannot read {what} {str(path)!r}: {err.strerror or err}{tail}"


def yaml_problem(err: yaml.YAMLError) -> str:
    """Where and what went wrong, e.g. `` at line 3, column 5 (found a tab)``."""
    mark = getattr(err, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    return f"{where} ({problem})"


def read_bounded_text(path: Path, *, what: str, max_bytes: int, inside: Path | None = None) -> str:
    """A regular file's UTF-8 text, refused past ``max_bytes`` or (with ``inside``) outside it.

    Devices, FIFOs and directories are refused without being opened for reading (a FIFO
    would block); a symlink is followed only when its target stays under ``inside``.
    """
    shown = str(path)
    try:
        target = path
        if inside is not None:
            target = path.resolve(strict=True)
            if not target.is_relative_to(inside.resolve(strict=True)):
                msg = f"{what} {shown!r} links out of {str(inside)!r}; refused, copy the file in"
                raise InputError(msg)
        fd = os.open(target, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                msg = f"{what} {shown!r} is not a regular file; give a file"
                raise InputError(msg)
            if info.st_size > max_bytes:
                msg = f"{what} {shown!r} is larger than {max_bytes} bytes; refused, check the path"
                raise InputError(msg)
            data = b""
            while len(data) <= max_bytes:
                chunk = os.read(fd, max_bytes + 1 - len(data))
                if not chunk:
                    break
                data += chunk
        finally:
            os.close(fd)
    except FileNotFoundError as err:
        msg = f"{what} {shown!r} does not exist; check the path"
        raise InputError(msg) from err
    except OSError as err:
        if err.errno == errno.EISDIR:
            msg = f"{what} {shown!r} is a directory; give a file"
        else:
            msg = _unreadable(path, err, what=what, remedy="")
        raise InputError(msg) from err
    if len(data) > max_bytes:
        msg = f"{what} {shown!r} is larger than {max_bytes} bytes; refused, check the path"
        raise InputError(msg)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        msg = f"{what} {shown!r} is not UTF-8 text; save it as UTF-8"
        raise InputError(msg) from err
