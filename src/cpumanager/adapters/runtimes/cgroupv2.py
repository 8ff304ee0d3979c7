"""Cgroup runtimes: the Runtime port over ``cpuset.cpus`` files, cgroup v2 or v1.

A "container" is a cgroup, named ``cgroup://<path relative to the root>``. Applying a cpuset
writes ``cpuset.cpus`` of that cgroup, which the kernel enforces on every task in it,
including tasks started later (this is what the kubelet does through the container runtime).
``job``, ``./job``, ``job/.`` and ``job//`` name one cgroup, ``cgroup://job``.

* **v2** (:class:`CgroupV2Runtime`, the unified hierarchy): the cpuset controller must be
  enabled for the cgroup, i.e. listed in its parent's ``cgroup.subtree_control``; the file
  ``cpuset.cpus`` exists exactly then. An empty value means "inherit the parent's CPUs".
* **v1** (:class:`CgroupV1Runtime`, the ``cpuset`` hierarchy, e.g. ``/sys/fs/cgroup/cpuset``):
  every cgroup has ``cpuset.cpus`` and ``cpuset.mems``; a cgroup whose ``cpuset.mems`` is
  empty cannot hold tasks, so it gets its parent's memory nodes when CPUs are applied.
  :func:`cgroup_runtime` picks the version from what the root holds, as the kubelet does.

Paths come from manifests and the agent writes as root, so nothing is resolved by name from
the root down: each path is opened beneath the root's descriptor with ``openat2``
(``RESOLVE_BENEATH``, no symlinks, no other mount) or a component-by-component
``O_NOFOLLOW`` walk (:mod:`._beneath`). A manifest not owned by root may only name cgroups
its owner owns (:meth:`CgroupV2Runtime.target_refusal`).

The value before the first write is saved so :meth:`restore` can put it back. The root is
injectable: tests run against a fake tree under ``tmp_path``. Every OS failure becomes one
:class:`RuntimeApplyError` line saying what to do.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from cpumanager.adapters.runtimes._beneath import BeneathError, open_beneath
from cpumanager.adapters.runtimes._originals import OriginalsFile
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.ids import ContainerID
from cpumanager.errors import InvalidCPUSetError, RuntimeApplyError

__all__ = [
    "CGROUP_SCHEME",
    "CgroupV1Runtime",
    "CgroupV2Runtime",
    "cgroup_container_id",
    "cgroup_runtime",
]

CGROUP_SCHEME = "cgroup://"
_MAX_VALUE = 64 * 1024  # a cpuset file of 65,536 CPUs in list form stays far below


def cgroup_container_id(relative: str) -> ContainerID:
    """The container id this runtime uses for a cgroup path (relative to the root)."""
    return ContainerID(f"{CGROUP_SCHEME}{relative.strip('/')}")


def _why(err: OSError) -> str:
    if err.errno in (errno.EPERM, errno.EACCES, errno.EROFS):
        return "permission denied; run as root (or own the cgroup) on a writable cgroup mount"
    if err.errno == errno.EINVAL:
        return "the kernel refused the CPU list; give CPUs the parent cgroup's cpuset allows"
    if err.errno == errno.EBUSY:
        return "the cgroup is busy (a child cgroup uses those CPUs); free them there first"
    if err.errno in (errno.ELOOP, errno.EXDEV):
        return "the path goes through a symbolic link or another mount; refused"
    return err.strerror or str(err)


def _require_regular(fd: int) -> None:
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        raise OSError(errno.EINVAL, "not a regular file")


class CgroupV2Runtime:
    """Writes ``cpuset.cpus`` in a cgroup v2 tree; saves and restores the original values."""

    version = 2
    cpus_name = "cpuset.cpus"
    effective_name = "cpuset.cpus.effective"

    def __init__(
        self, root: Path = Path("/sys/fs/cgroup"), *, originals: OriginalsFile | None = None
    ) -> None:
        self.root = root
        self._originals: dict[str, str] = {}
        self._file = originals
        if originals is not None:
            for key, value in originals.load().items():
                if isinstance(value, str) and self.alive(ContainerID(key)):
                    self._originals[self._key(key)] = value
            self._persist()

    def _persist(self) -> None:
        if self._file is not None:
            self._file.save(dict(sorted(self._originals.items())))

    # --- names ----------------------------------------------------------------------------

    def relative_of(self, container_id: str) -> str:
        """The canonical path below the root named by ``cgroup://<relative path>``."""
        relative = container_id.removeprefix(CGROUP_SCHEME)
        parts = [part for part in relative.split("/") if part not in ("", ".")]
        if (
            relative == container_id
            or relative.startswith("/")
            or not parts
            or ".." in parts
            or not relative.isprintable()
        ):
            msg = (
                f"container id {container_id[:200]!r} is not a cgroup below the root; the "
                "cgroup runtime pins 'cgroup://<path relative to the cgroup root>' ids "
                "(annotate the workload with cpumanager.io/cgroup)"
            )
            raise RuntimeApplyError(msg)
        return "/".join(parts)

    def _key(self, container_id: str) -> str:
        return f"{CGROUP_SCHEME}{self.relative_of(container_id)}"

    def path_of(self, container_id: str) -> Path:
        """The cgroup directory named by ``cgroup://<relative path>`` (for messages)."""
        return self.root.joinpath(*self.relative_of(container_id).split("/"))

    # --- opening beneath the root -----------------------------------------------------------

    @contextlib.contextmanager
    def _opened(self, relative: str, flags: int) -> Iterator[int]:
        try:
            root_fd = os.open(self.root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as err:
            msg = f"cannot open the cgroup root {str(self.root)!r}: {_why(err)}"
            raise RuntimeApplyError(msg) from err
        try:
            fd = open_beneath(root_fd, relative, flags)
        finally:
            os.close(root_fd)
        try:
            yield fd
        finally:
            os.close(fd)

    def _directory_error(self, relative: str, err: OSError) -> RuntimeApplyError:
        where = str(self.root / relative)
        if err.errno == errno.ENOENT:
            return RuntimeApplyError(
                f"cgroup {where!r} does not exist; create it or fix the workload"
            )
        return RuntimeApplyError(f"cgroup {where!r} cannot be opened: {_why(err)}")

    def _check_directory(self, relative: str) -> os.stat_result:
        try:
            with self._opened(relative, os.O_PATH | os.O_DIRECTORY) as fd:
                return os.fstat(fd)
        except BeneathError as err:
            raise self._directory_error(relative, err) from err

    def _missing_controller(self, relative: str) -> RuntimeApplyError:
        directory = self.root / relative
        return RuntimeApplyError(
            f"the cpuset controller is not enabled for cgroup {str(directory)!r}; enable "
            f"it with 'echo +cpuset > {directory.parent / 'cgroup.subtree_control'}'"
        )

    def _read(self, relative: str, name: str) -> str:
        self._check_directory(relative)
        path = f"{relative}/{name}" if relative else name
        try:
            with self._opened(path, os.O_RDONLY | os.O_NONBLOCK) as fd:
                _require_regular(fd)
                data = os.read(fd, _MAX_VALUE)
        except BeneathError as err:
            if err.errno == errno.ENOENT and name == self.cpus_name:
                raise self._missing_controller(relative) from err
            msg = f"cannot read {str(self.root / path)!r}: {_why(err)}"
            raise RuntimeApplyError(msg) from err
        except OSError as err:
            msg = f"cannot read {str(self.root / path)!r}: {_why(err)}"
            raise RuntimeApplyError(msg) from err
        try:
            return data.decode("ascii").strip()
        except UnicodeDecodeError as err:
            msg = f"cannot read {str(self.root / path)!r}: not ASCII text"
            raise RuntimeApplyError(msg) from err

    def _write(self, relative: str, name: str, text: str) -> None:
        path = f"{relative}/{name}" if relative else name
        try:
            with self._opened(path, os.O_WRONLY | os.O_TRUNC | os.O_NONBLOCK) as fd:
                _require_regular(fd)
                os.write(fd, (text + "\n").encode("ascii"))
        except BeneathError as err:
            if err.errno == errno.ENOENT and name == self.cpus_name:
                raise self._missing_controller(relative) from err
            msg = f"cannot write {text!r} to {str(self.root / path)!r}: {_why(err)}"
            raise RuntimeApplyError(msg) from err
        except OSError as err:
            msg = f"cannot write {text!r} to {str(self.root / path)!r}: {_why(err)}"
            raise RuntimeApplyError(msg) from err

    # --- the Runtime port -------------------------------------------------------------------

    def _prepare(self, relative: str) -> None:
        """Hook run before CPUs are written (v1 fills an empty ``cpuset.mems``)."""

    def apply(self, container_id: ContainerID, cpus: CPUSet) -> None:
        """Write ``cpus`` to the cgroup's ``cpuset.cpus`` (saving the old value first)."""
        if not cpus:
            msg = f"refusing to give cgroup {container_id!r} an empty CPU set"
            raise RuntimeApplyError(msg)
        relative = self.relative_of(container_id)
        key = self._key(container_id)
        current = self._read(relative, self.cpus_name)
        if key not in self._originals:
            self._originals[key] = current
            try:
                self._persist()  # recorded before anything changes
            except RuntimeApplyError:
                del self._originals[key]
                raise
        self._prepare(relative)
        self._write(relative, self.cpus_name, str(cpus))

    def verify(self, container_id: ContainerID) -> CPUSet:
        """The CPUs the cgroup gets now (the effective set when the kernel has it)."""
        relative = self.relative_of(container_id)
        try:
            text = self._read(relative, self.effective_name)
        except RuntimeApplyError:
            text = self._read(relative, self.cpus_name)
        try:
            return CPUSet.parse(text)
        except InvalidCPUSetError as err:
            msg = f"cgroup {relative!r} holds {text[:100]!r}, not a CPU list; check the mount"
            raise RuntimeApplyError(msg) from err

    def alive(self, container_id: ContainerID) -> bool:
        """Whether the cgroup still exists (beneath the root, reached without links)."""
        try:
            self._check_directory(self.relative_of(container_id))
        except RuntimeApplyError:
            return False
        return True

    def target_refusal(self, container_id: ContainerID, owner_uid: int) -> str | None:
        """Why a manifest owned by ``owner_uid`` may not pin this cgroup (None: it may)."""
        try:
            relative = self.relative_of(container_id)
            info = self._check_directory(relative)
        except RuntimeApplyError as err:
            if "does not exist" in err.message:
                return None  # not alive yet: it waits and is checked again
            return err.message
        if owner_uid in (0, info.st_uid):
            return None
        return (
            f"cgroup {relative!r} belongs to uid {info.st_uid} but the manifest to uid "
            f"{owner_uid}; a manifest may only pin its owner's cgroups (root's may pin any)"
        )

    def saved(self) -> dict[ContainerID, str]:
        """The original ``cpuset.cpus`` text of every cgroup written so far."""
        return {ContainerID(k): v for k, v in sorted(self._originals.items())}

    def restore(self, container_id: ContainerID | None = None) -> None:
        """Write back the saved value of one cgroup (or of all); removed cgroups are skipped.

        Raises one RuntimeApplyError naming every cgroup that could not be restored.
        """
        if container_id is None:
            keys = sorted(self._originals)
        else:
            try:
                key = self._key(container_id)
            except RuntimeApplyError:
                return
            keys = [key] if key in self._originals else []
        failures: list[str] = []
        for key in keys:
            original = self._originals.pop(key)
            if not self.alive(ContainerID(key)):
                continue
            try:
                self._write(self.relative_of(key), self.cpus_name, original)
            except RuntimeApplyError as err:
                failures.append(err.message)
        if keys:
            self._persist()
        if failures:
            msg = "could not restore cpusets: " + "; ".join(failures)
            raise RuntimeApplyError(msg)


class CgroupV1Runtime(CgroupV2Runtime):
    """The same over a cgroup v1 ``cpuset`` hierarchy (``cpuset.cpus`` and ``cpuset.mems``)."""

    version = 1
    effective_name = "cpuset.effective_cpus"
    mems_name = "cpuset.mems"

    def _missing_controller(self, relative: str) -> RuntimeApplyError:
        return RuntimeApplyError(
            f"{str(self.root / relative)!r} has no cpuset.cpus: {str(self.root)!r} is not a "
            "cgroup v1 cpuset hierarchy; give the cpuset mount as --cgroup-root"
        )

    def _prepare(self, relative: str) -> None:
        """A cgroup without memory nodes cannot hold tasks: give it its parent's."""
        if self._read(relative, self.mems_name):
            return
        parent = relative.rpartition("/")[0]
        mems = self._read(parent, self.mems_name)
        if mems:
            self._write(relative, self.mems_name, mems)


def cgroup_runtime(
    root: Path = Path("/sys/fs/cgroup"), *, originals: OriginalsFile | None = None
) -> CgroupV2Runtime:
    """The runtime for the cgroup tree at ``root``: v2 when it is the unified hierarchy,
    else the v1 ``cpuset`` hierarchy (``root/cpuset`` or ``root`` itself)."""
    if (root / "cgroup.controllers").is_file():
        return CgroupV2Runtime(root, originals=originals)
    if (root / "cpuset" / "cpuset.cpus").is_file():
        return CgroupV1Runtime(root / "cpuset", originals=originals)
    if (root / "cpuset.cpus").is_file() and (root / "cpuset.mems").is_file():
        return CgroupV1Runtime(root, originals=originals)
    return CgroupV2Runtime(root, originals=originals)
