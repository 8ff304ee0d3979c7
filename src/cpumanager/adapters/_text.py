"""Shared edges of the adapters that read user-written text files (not an adapter itself).

Each reader names its file kind and its remedies; the OS and YAML failures are turned into
one-line messages here, so every file kind words them the same way. Manifest directories
(pods and agent workloads) are listed by the same rule, and YAML is parsed by one loader.

Hostile input is expected, so reading is bounded:

* only regular files are read (a FIFO would block, ``/dev/zero`` would never end), up to a
  size cap per kind of file, optionally without following a final symlink;
* YAML goes through a streaming pass over the parser's events first (the parser is a state
  machine, it does not recurse): nesting deeper than :data:`MAX_YAML_DEPTH` and aliases to
  a collection still being built are refused there, before the recursive composer runs
  (libyaml's composer overflows the C stack on ~30,000 nested ``[``, killing the process);
* values the constructor cannot build (an integer of more than 4,300 digits, a date such as
  ``2001-13-45``) and any nesting that still recurses too deep become one-line errors.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import yaml

from cpumanager.core import limits
from cpumanager.errors import InputError

__all__ = [
    "MAX_MACHINE_BYTES",
    "MAX_MANIFEST_BYTES",
    "MAX_YAML_DEPTH",
    "YAML_LOADER",
    "load_yaml_documents",
    "yaml_shape_problem",
    "manifest_files_in",
    "read_bounded_bytes",
    "read_bounded_text",
    "read_utf8_text",
    "yaml_problem",
]

# libyaml's loader when PyYAML was built with it (much faster), else the pure one.
YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")

# Size caps per kind of file. The API server stores at most ~1.5 MiB per object; a List
# of pods from 'kubectl get pods -o yaml' may hold many. A machine file of 65,536 CPUs is a
# few MiB.
MAX_MANIFEST_BYTES = 16 * 1024 * 1024
MAX_MACHINE_BYTES = 32 * 1024 * 1024
# Real manifests nest about 10 levels; the composer recurses per level.
MAX_YAML_DEPTH = limits.MAX_YAML_DEPTH
_READ_CHUNK = 1 << 20


def manifest_files_in(directory: Path) -> list[Path]:
    """The ``*.yaml``, ``*.yml`` and ``*.json`` files of ``directory``, in name order.

    Not recursive; symlinks and other non-regular entries are left out (``lstat``).
    OSError is left to the caller, which knows what the directory is for.
    """
    found = []
    for entry in os.scandir(directory):
        if not entry.name.lower().endswith(_MANIFEST_SUFFIXES):
            continue
        if entry.is_file(follow_symlinks=False):
            found.append(Path(entry.path))
    return sorted(found)


def read_bounded_bytes(
    path: Path,
    *,
    what: str,
    max_bytes: int,
    follow_symlinks: bool = True,
    error: type[InputError] = InputError,
) -> tuple[bytes, os.stat_result]:
    """The bytes of a regular file of at most ``max_bytes``, and its status (owner, mode).

    Anything else (missing, a directory, a FIFO or device, a symlink when
    ``follow_symlinks`` is false, too large, unreadable) raises ``error`` naming ``what``.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
    if not follow_symlinks:
        flags |= os.O_NOFOLLOW
    shown = repr(str(path))
    try:
        fd = os.open(path, flags)
    except FileNotFoundError as err:
        msg = f"{what} {shown} does not exist; check the path"
        raise error(msg) from err
    except OSError as err:
        if err.errno == errno.ELOOP and not follow_symlinks:
            msg = f"{what} {shown} is a symbolic link; links are not followed, use the file"
        else:
            msg = f"cannot read {what} {shown}: {err.strerror or err}; check it"
        raise error(msg) from err
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            msg = f"{what} {shown} is a directory; name a file"
            raise error(msg)
        if not stat.S_ISREG(info.st_mode):
            msg = f"{what} {shown} is not a regular file (a FIFO, socket or device); name a file"
            raise error(msg)
        if info.st_size > max_bytes:
            msg = f"{what} {shown} has {info.st_size} bytes, more than the {max_bytes} allowed"
            raise error(msg)
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, _READ_CHUNK):
            total += len(chunk)
            if total > max_bytes:
                msg = f"{what} {shown} grew past the {max_bytes} bytes allowed while read"
                raise error(msg)
            chunks.append(chunk)
        return b"".join(chunks), info
    except OSError as err:
        msg = f"cannot read {what} {shown}: {err.strerror or err}; check it"
        raise error(msg) from err
    finally:
        os.close(fd)


def read_utf8_text(
    path: Path,
    *,
    what: str,
    utf8_remedy: str,
    max_bytes: int = MAX_MANIFEST_BYTES,
    error: type[InputError] = InputError,
) -> str:
    """The text of a regular UTF-8 file of at most ``max_bytes``; ``error`` otherwise."""
    data, _info = read_bounded_bytes(path, what=what, max_bytes=max_bytes, error=error)
    return decode_utf8(data, what=what, source=str(path), remedy=utf8_remedy, error=error)


def decode_utf8(
    data: bytes, *, what: str, source: str, remedy: str, error: type[InputError] = InputError
) -> str:
    """``data`` as UTF-8 text; ``error`` naming the first bad byte otherwise."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        msg = f"{what} {source!r} is not UTF-8 text (byte {err.start}); {remedy}"
        raise error(msg) from err


_OPENS = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_CLOSES = (yaml.SequenceEndEvent, yaml.MappingEndEvent)


def yaml_shape_problem(
    text: str, *, max_depth: int, loader: type[yaml.SafeLoader], first_only: bool = False
) -> str | None:
    """Why ``text`` must not reach the composer (too deep, recursive alias), or None.

    Iterates the parser's events, which costs no recursion; stops at the first excess, so
    a hostile input costs as much as its first ``max_depth`` levels. ``first_only``: the
    first document only (a reader that takes the first never parses the rest).
    """
    open_anchors: list[str | None] = []
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, _OPENS):
            open_anchors.append(event.anchor)
            if len(open_anchors) > max_depth:
                mark = event.start_mark
                where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
                return f"nested more than {max_depth} levels deep{where}"
        elif isinstance(event, _CLOSES):
            if open_anchors:
                open_anchors.pop()
        elif isinstance(event, yaml.AliasEvent) and event.anchor in open_anchors:
            return f"the alias *{event.anchor} refers to a collection that contains it"
        elif first_only and isinstance(event, yaml.DocumentEndEvent):
            break
    return None


def load_yaml_documents(
    text: str,
    *,
    source: str,
    error: type[InputError],
    remedy: str,
    max_depth: int = MAX_YAML_DEPTH,
    loader: type[yaml.SafeLoader] | None = None,
) -> list[object]:
    """Every document of YAML (or JSON) ``text``; one-line ``error`` for anything unusable.

    The message is ``<source>: not valid YAML or JSON (...); <remedy>``, or names the depth,
    alias or value that was refused. ``loader`` defaults to :data:`YAML_LOADER`.
    """
    try:
        chosen = loader or YAML_LOADER
        problem = yaml_shape_problem(text, max_depth=max_depth, loader=chosen)
        if problem is None:
            return list(yaml.load_all(text, Loader=chosen))
    except yaml.YAMLError as err:
        msg = f"{source}: not valid YAML or JSON{yaml_problem(err)}; {remedy}"
        raise error(msg) from err
    except RecursionError as err:
        msg = f"{source}: nested too deeply to read; {remedy}"
        raise error(msg) from err
    except ValueError as err:  # int() over 4,300 digits, impossible dates, ...
        msg = f"{source}: {_value_problem(err)}; {remedy}"
        raise error(msg) from err
    msg = f"{source}: {problem}; {remedy}"
    raise error(msg)


def _value_problem(err: ValueError) -> str:
    text = str(err)
    if "digits" in text and "integer" in text:
        return "an integer has more than 4300 digits"
    first = text.splitlines()[0] if text else type(err).__name__
    return f"a value cannot be read ({first[:200]})"


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
