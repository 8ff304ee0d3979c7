"""Open a path strictly beneath a directory, following no symbolic link (Linux).

A cgroup path comes from a workload manifest; the agent writes into what it names as root.
``openat2`` with ``RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
RESOLVE_NO_XDEV`` lets the kernel refuse every way out (``..``, absolute links, links at
all, other mounts). Kernels before 5.6 (and seccomp filters that hide it) answer ENOSYS or
EPERM; then the path is walked one component at a time with ``O_NOFOLLOW``, refusing
``..`` and any component on another filesystem.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import stat

__all__ = ["BeneathError", "open_beneath"]

_SYS_OPENAT2 = 437  # the same number on every architecture (unified syscall table)
_RESOLVE_NO_XDEV = 0x01
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08
_RESOLVE = _RESOLVE_NO_XDEV | _RESOLVE_NO_MAGICLINKS | _RESOLVE_NO_SYMLINKS | _RESOLVE_BENEATH


class BeneathError(OSError):
    """The path leaves the directory, crosses a link or a mount, or does not exist."""


class _OpenHow(ctypes.Structure):
    _fields_ = [
        ("flags", ctypes.c_uint64),
        ("mode", ctypes.c_uint64),
        ("resolve", ctypes.c_uint64),
    ]


def _libc_syscall() -> object | None:
    if platform.system() != "Linux":
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    return getattr(libc, "syscall", None)


_SYSCALL = _libc_syscall()
_openat2_works: bool | None = None  # learned on first use


def _openat2(dir_fd: int, relative: str, flags: int) -> int | None:
    """The fd, or None when the kernel has no usable openat2."""
    global _openat2_works  # noqa: PLW0603 - one probe per process
    if _SYSCALL is None or _openat2_works is False:
        return None
    how = _OpenHow(flags, 0, _RESOLVE)
    path = os.fsencode(relative)
    fd = _SYSCALL(  # type: ignore[operator]
        ctypes.c_long(_SYS_OPENAT2),
        ctypes.c_int(dir_fd),
        ctypes.c_char_p(path),
        ctypes.byref(how),
        ctypes.c_size_t(ctypes.sizeof(how)),
    )
    if fd >= 0:
        _openat2_works = True
        return int(fd)
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EPERM) and _openat2_works is None:
        _openat2_works = False
        return None
    raise BeneathError(err, os.strerror(err), relative)


def _walk(dir_fd: int, parts: list[str], flags: int) -> int:
    root_dev = os.fstat(dir_fd).st_dev
    current = os.dup(dir_fd)
    try:
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            if part in ("", ".", ".."):
                raise BeneathError(errno.EXDEV, "path leaves the directory", part)
            step_flags = (flags if last else os.O_PATH | os.O_DIRECTORY) | os.O_NOFOLLOW
            try:
                nxt = os.open(part, step_flags | os.O_CLOEXEC, dir_fd=current)
            except OSError as err:
                if err.errno == errno.ELOOP or (
                    err.errno == errno.ENOTDIR and _is_link(current, part)
                ):
                    raise BeneathError(errno.ELOOP, "symbolic link refused", part) from err
                raise BeneathError(err.errno, err.strerror, part) from err
            os.close(current)
            current = nxt
            info = os.fstat(current)
            if info.st_dev != root_dev:
                raise BeneathError(errno.EXDEV, "path crosses a mount point", part)
            if stat.S_ISLNK(info.st_mode):
                raise BeneathError(errno.ELOOP, "symbolic link refused", part)
        result, current = current, -1
        return result
    finally:
        if current >= 0:
            os.close(current)


def _is_link(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(name, dir_fd=dir_fd).st_mode)
    except OSError:
        return False


def open_beneath(dir_fd: int, relative: str, flags: int) -> int:
    """Open ``relative`` (no leading '/', no '..') beneath ``dir_fd``; BeneathError if not.

    ``flags`` are the usual ``os.O_*`` flags (``O_PATH | O_DIRECTORY`` for a directory).
    """
    parts = [part for part in relative.split("/") if part not in ("", ".")]
    if not parts:
        return os.dup(dir_fd)
    if ".." in parts:
        raise BeneathError(errno.EXDEV, "path leaves the directory", relative)
    fd = _openat2(dir_fd, "/".join(parts), flags | os.O_CLOEXEC)  # no links: RESOLVE_NO_SYMLINKS
    if fd is not None:
        return fd
    return _walk(dir_fd, parts, flags)
