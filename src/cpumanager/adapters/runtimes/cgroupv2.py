"""CgroupV2Runtime: the Runtime port over a cgroup v2 tree's ``cpuset.cpus`` files.

A "container" is a cgroup, named ``cgroup://<path relative to the root>``. Applying a cpuset
writes ``cpuset.cpus`` of that cgroup, which the kernel enforces on every task in it,
including tasks started later (this is what the kubelet does through the container runtime).

The cpuset controller must be enabled for the cgroup, i.e. listed in its parent's
``cgroup.subtree_control``; the file ``cpuset.cpus`` exists exactly then. The value before the
first write is saved so :meth:`restore` can put it back (an empty value means "inherit the
parent's CPUs"). The root is injectable: tests run against a fake tree under ``tmp_path``.
Every OS failure becomes one :class:`RuntimeApplyError` line saying what to do.
"""

from __future__ import annotations

import errno
from pathlib import Path, PurePosixPath

from cpumanager.core.cpuset import CPUSet
from cpumanager.core.ids import ContainerID
from cpumanager.errors import InvalidCPUSetError, RuntimeApplyError

__all__ = ["CGROUP_SCHEME", "CgroupV2Runtime", "cgroup_container_id"]

CGROUP_SCHEME = "cgroup://"
_CPUS = "cpuset.cpus"
_EFFECTIVE = "cpuset.cpus.effective"


def cgroup_container_id(relative: str) -> ContainerID:
    """The container id this runtime uses for a cgroup path (relative to the root)."""
    return ContainerID(f"{CGROUP_SCHEME}{relative.strip('/')}")


def _why(err: OSError) -> str:
    if err.errno in (errno.EPERM, errno.EACCES, errno.EROFS):
        return "permission denied; run as root (or own the cgroup) on a writable cgroup2 mount"
    if err.errno == errno.EINVAL:
        return "the kernel refused the CPU list; give CPUs the parent cgroup's cpuset allows"
    if err.errno == errno.EBUSY:
        return "the cgroup is busy (a child cgroup uses those CPUs); free them there first"
    return err.strerror or str(err)


class CgroupV2Runtime:
    """Writes ``cpuset.cpus`` in a cgroup v2 tree; saves and restores the original values."""

    def __init__(self, root: Path = Path("/sys/fs/cgroup")) -> None:
        self.root = root
        self._originals: dict[str, str] = {}

    def path_of(self, container_id: str) -> Path:
        """The cgroup directory named by ``cgroup://<relative path>``."""
        relative = container_id.removeprefix(CGROUP_SCHEME)
        parts = PurePosixPath(relative).parts
        if (
            relative == container_id
            or not relative
            or relative.startswith("/")
            or any(part in ("..", ".") for part in parts)
        ):
            msg = (
                f"container id {container_id!r} is not a cgroup below the root; the cgroup "
                "runtime pins 'cgroup://<path relative to the cgroup root>' ids (annotate "
                "the workload with cpumanager.io/cgroup)"
            )
            raise RuntimeApplyError(msg)
        return self.root.joinpath(*parts)

    def _cpus_file(self, container_id: str) -> Path:
        directory = self.path_of(container_id)
        if not directory.is_dir():
            msg = f"cgroup {str(directory)!r} does not exist; create it or fix the workload"
            raise RuntimeApplyError(msg)
        cpus_file = directory / _CPUS
        if not cpus_file.is_file():
            msg = (
                f"the cpuset controller is not enabled for cgroup {str(directory)!r}; enable "
                f"it with 'echo +cpuset > {directory.parent / 'cgroup.subtree_control'}'"
            )
            raise RuntimeApplyError(msg)
        return cpus_file

    def _read(self, path: Path) -> str:
        try:
            return path.read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError) as err:
            why = _why(err) if isinstance(err, OSError) else "not ASCII text"
            msg = f"cannot read {str(path)!r}: {why}"
            raise RuntimeApplyError(msg) from err

    def _write(self, path: Path, text: str) -> None:
        try:
            with path.open("w", encoding="ascii") as handle:
                handle.write(text + "\n")
        except OSError as err:
            msg = f"cannot write {text!r} to {str(path)!r}: {_why(err)}"
            raise RuntimeApplyError(msg) from err

    def apply(self, container_id: ContainerID, cpus: CPUSet) -> None:
        """Write ``cpus`` to the cgroup's ``cpuset.cpus`` (saving the old value first)."""
        if not cpus:
            msg = f"refusing to give cgroup {container_id!r} an empty CPU set"
            raise RuntimeApplyError(msg)
        cpus_file = self._cpus_file(container_id)
        if container_id not in self._originals:
            self._originals[container_id] = self._read(cpus_file)
        self._write(cpus_file, str(cpus))

    def verify(self, container_id: ContainerID) -> CPUSet:
        """The CPUs the cgroup gets now (``cpuset.cpus.effective`` when the kernel has it)."""
        cpus_file = self._cpus_file(container_id)
        effective = cpus_file.with_name(_EFFECTIVE)
        text = self._read(effective if effective.is_file() else cpus_file)
        try:
            return CPUSet.parse(text)
        except InvalidCPUSetError as err:
            msg = f"{str(cpus_file)!r} holds {text!r}, not a CPU list; check the cgroup mount"
            raise RuntimeApplyError(msg) from err

    def alive(self, container_id: ContainerID) -> bool:
        """Whether the cgroup still exists."""
        try:
            return self.path_of(container_id).is_dir()
        except RuntimeApplyError:
            return False

    def saved(self) -> dict[ContainerID, str]:
        """The original ``cpuset.cpus`` text of every cgroup written so far."""
        return {ContainerID(k): v for k, v in sorted(self._originals.items())}

    def restore(self, container_id: ContainerID | None = None) -> None:
        """Write back the saved value of one cgroup (or of all); removed cgroups are skipped.

        Raises one RuntimeApplyError naming every cgroup that could not be restored.
        """
        if container_id is None:
            ids = sorted(self._originals)
        else:
            ids = [container_id] if container_id in self._originals else []
        failures: list[str] = []
        for key in ids:
            original = self._originals.pop(key)
            if not self.alive(ContainerID(key)):
                continue
            try:
                self._write(self._cpus_file(key), original)
            except RuntimeApplyError as err:
                failures.append(err.message)
        if failures:
            msg = "could not restore cpusets: " + "; ".join(failures)
            raise RuntimeApplyError(msg)
