"""Durable, atomic state files: what the kubelet's checkpoint manager does, plus two fsyncs.

``write_atomic`` writes a temp file in the target's directory (``.<name>.<random>.tmp``,
mode 0600), fsyncs it, closes it, renames it over the target and fsyncs the directory, so
after a crash the target holds either the old bytes or the new ones, and after the call
returns the new ones survive a power loss. The kubelet skips the directory fsync; we do not.
On any failure before the rename the temp file is removed and the target is untouched.

Every step is named (:data:`STEPS`) and ``fault`` is called with the name just before the
step runs: tests make it raise to prove the guarantees at each step, without patching
``open``.

``read_bytes`` reads regular files only (a FIFO or a device would block or never end) and
turns every OSError into a StoreError that names the file and what to do.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from cpumanager.errors import InvalidPathError, StoreError

__all__ = [
    "MAX_STATE_BYTES",
    "STEPS",
    "FaultHook",
    "check_replaceable",
    "remove_stale_temps",
    "ensure_dir",
    "preserve_copy",
    "read_bytes",
    "set_aside",
    "write_atomic",
]

FaultHook = Callable[[str], None]
STEPS = ("create", "write", "fsync", "close", "rename", "fsync_dir")
# A real cpu_manager_state is a few KiB (about 40 bytes per container); anything this large
# is not one, and reading it whole would only cost memory.
MAX_STATE_BYTES = 64 * 1024 * 1024


def _no_fault(step: str) -> None:
    """Default hook: no injected failure."""


def _reason(err: OSError) -> str:
    return err.strerror or type(err).__name__


def read_bytes(path: Path, *, max_bytes: int = MAX_STATE_BYTES) -> bytes | None:
    """The whole file, or None when it does not exist; StoreError for anything else."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    except OSError as err:
        hint = "check its permissions (the kubelet runs as root)"
        if err.errno == errno.ENOTDIR:
            hint = "a parent of it is not a directory"
        message = f"cannot read {str(path)!r}: {_reason(err)}; {hint}"
        raise StoreError(message) from err
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            message = f"cannot read {str(path)!r}: it is {kind}; give the path of a state file"
            raise InvalidPathError(message)
        if info.st_size > max_bytes:
            message = (
                f"cannot read {str(path)!r}: {info.st_size} bytes is too large for a CPU "
                f"manager state (limit {max_bytes}); check the path"
            )
            raise InvalidPathError(message)
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if total > max_bytes:
                message = f"cannot read {str(path)!r}: it grew past {max_bytes} bytes"
                raise StoreError(message)
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as err:  # InvalidPathError is not an OSError: it passes through
        message = f"cannot read {str(path)!r}: {_reason(err)}; check the disk and the path"
        raise StoreError(message) from err
    finally:
        os.close(fd)


def ensure_dir(directory: Path) -> None:
    """``mkdir -p`` with mode 0755, as the kubelet's checkpoint manager does before writes."""
    try:
        directory.mkdir(mode=0o755, parents=True, exist_ok=True)
    except OSError as err:
        message = f"cannot create directory {str(directory)!r}: {_reason(err)}"
        raise StoreError(message) from err


def remove_stale_temps(path: Path) -> list[Path]:
    """Remove temp files that killed writers of ``path`` left beside it; the ones removed.

    Only call this while no other writer of ``path`` can run (under the state-dir lock):
    ``.<name>.<random>.tmp`` (write_atomic) and ``.<name>.link.tmp`` (preserve_copy), also
    those of ``<name>.last-good``.
    """
    removed: list[Path] = []
    prefix = f".{path.name}."
    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return removed
    for entry in entries:
        ours = entry.name.startswith(prefix) and entry.name.endswith(".tmp")
        if ours and entry.is_file(follow_symlinks=False):
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
    return removed


def check_replaceable(path: Path) -> None:
    """InvalidPathError unless ``path`` is absent or a regular file (never followed)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as err:
        message = f"cannot write {str(path)!r}: {_reason(err)}; check the path"
        raise StoreError(message) from err
    if stat.S_ISREG(info.st_mode):
        return
    if stat.S_ISLNK(info.st_mode):
        kind = "a symbolic link; give the file it points to, or a new path"
    elif stat.S_ISDIR(info.st_mode):
        kind = "a directory; give a file path"
    else:
        kind = "a device, FIFO or socket, not a regular file; give a file path"
    message = f"refusing to replace {str(path)!r}: it is {kind}"
    raise InvalidPathError(message)


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(
    path: Path, data: bytes, *, mode: int = 0o600, fault: FaultHook | None = None
) -> None:
    """Replace ``path`` by ``data`` atomically and durably; StoreError on any failure.

    Only a regular file (or nothing) is replaced: renaming over a device, FIFO, socket,
    directory or symbolic link would swap that node for a file (as root, ``/dev/null``
    would become a regular file for the whole host), so those raise InvalidPathError.
    """
    check_replaceable(path)
    hook = fault or _no_fault
    directory = path.parent
    fd: int | None = None
    tmp: str | None = None
    step = "create"
    try:
        hook(step)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
        if mode != 0o600:
            os.fchmod(fd, mode)
        step = "write"
        hook(step)
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        step = "fsync"
        hook(step)
        os.fsync(fd)
        step = "close"
        hook(step)
        os.close(fd)
        fd = None
        step = "rename"
        hook(step)
        os.replace(tmp, path)
        tmp = None
        step = "fsync_dir"
        hook(step)
        _fsync_dir(directory)
    except BaseException as err:
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        if not isinstance(err, OSError):
            raise
        if step == "fsync_dir":
            message = (
                f"wrote {str(path)!r} but could not sync its directory ({_reason(err)}); "
                "the new content may not survive a power loss: check the disk"
            )
        else:
            message = (
                f"cannot write {str(path)!r}: {step} failed ({_reason(err)}); the previous "
                "file is unchanged: check free space and permissions"
            )
        raise StoreError(message) from err


def preserve_copy(path: Path, copy: Path, *, fault: FaultHook | None = None) -> bool:
    """Atomically make ``copy`` hold what ``path`` holds now; False when ``path`` is absent.

    A hard link costs no copy and shares the inode that the next rename detaches from
    ``path``. Filesystems without links get a durable byte copy instead.
    """
    hook = fault or _no_fault
    link_tmp = copy.with_name(f".{copy.name}.link.tmp")
    try:
        hook("link")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(link_tmp)
        try:
            os.link(path, link_tmp)
        except FileNotFoundError:
            return False
        except OSError as err:
            if err.errno not in (errno.EPERM, errno.ENOTSUP, errno.EXDEV, errno.EMLINK):
                raise
            data = read_bytes(path)
            if data is None:
                return False
            write_atomic(copy, data, fault=fault)
            return True
        hook("rename_copy")
        os.replace(link_tmp, copy)
    except OSError as err:
        with contextlib.suppress(OSError):
            os.unlink(link_tmp)
        message = (
            f"cannot keep a copy of {str(path)!r} as {str(copy)!r}: {_reason(err)}; "
            "check free space and permissions"
        )
        raise StoreError(message) from err
    return True


def set_aside(path: Path, *, label: str = "corrupt") -> Path:
    """Rename ``path`` to the first free ``<name>.<label>[.N]`` beside it and return that."""
    candidate = path.with_name(f"{path.name}.{label}")
    number = 1
    while candidate.exists() or candidate.is_symlink():
        candidate = path.with_name(f"{path.name}.{label}.{number}")
        number += 1
    try:
        try:
            os.link(path, candidate)  # fails rather than clobbering a file that appeared since
        except OSError as err:
            if err.errno not in (errno.EPERM, errno.ENOTSUP, errno.EXDEV, errno.EMLINK):
                raise
            os.rename(path, candidate)
        else:
            os.unlink(path)
    except OSError as err:
        message = f"cannot set {str(path)!r} aside as {str(candidate)!r}: {_reason(err)}"
        raise StoreError(message) from err
    return candidate
