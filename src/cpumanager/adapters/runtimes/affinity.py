"""AffinityRuntime: the Runtime port over ``sched_setaffinity`` for plain local processes.

A "container" here is one process, named ``pid://<pid>``. Applying a cpuset sets the CPU
affinity of every thread of the process (the kernel keeps affinity per thread, and psutil's
``cpu_affinity`` only sets the main one). Threads started while we walk the list inherit the
affinity of the thread that created them, so the walk is repeated until no new thread shows
up (at most a few passes).

Each process's affinity before the first apply is saved with its start time, so
:meth:`restore` can put it back, and a pid reused by another process is never mistaken for
the one we pinned: it counts as gone. Every OS or psutil failure becomes one
:class:`RuntimeApplyError` line saying what to do.
"""

from __future__ import annotations

import errno
import os
import re
from dataclasses import dataclass
from pathlib import Path

import psutil

from cpumanager.adapters.runtimes._originals import OriginalsFile
from cpumanager.adapters.sysfs.files import read_small_file
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.ids import ContainerID
from cpumanager.errors import CpuManagerError, RuntimeApplyError

__all__ = [
    "PID_SCHEME",
    "AffinityRuntime",
    "parse_pid_id",
    "pid_container_id",
    "is_kernel_thread",
    "process_group_members",
    "process_start_time",
]

PID_SCHEME = "pid://"
_MAX_PASSES = 4
_PID = re.compile(r"[0-9]{1,10}")
_PF_KTHREAD = 0x00200000  # task flag of kernel threads (include/linux/sched.h)


def pid_container_id(pid: int) -> ContainerID:
    """The container id this runtime uses for a process."""
    return ContainerID(f"{PID_SCHEME}{pid}")


def parse_pid_id(container_id: str) -> int:
    """The pid in ``pid://<pid>``; RuntimeApplyError for anything else (never ValueError)."""
    text = container_id.removeprefix(PID_SCHEME)
    if text == container_id or _PID.fullmatch(text) is None or int(text) <= 0:
        msg = (
            f"container id {container_id!r} is not a process; the affinity runtime pins "
            "'pid://<pid>' ids (annotate the workload with cpumanager.io/pid)"
        )
        raise RuntimeApplyError(msg)
    return int(text)


@dataclass(frozen=True, slots=True)
class _Original:
    started: float
    cpus: CPUSet


def _why(err: OSError) -> str:
    if err.errno in (errno.EPERM, errno.EACCES):
        return "permission denied; run as root or as the owner of the process"
    if err.errno == errno.EINVAL:
        return (
            "the kernel refused the CPU list (CPUs offline or outside the process's cpuset "
            "cgroup); give CPUs the process may use"
        )
    return err.strerror or str(err)


def is_kernel_thread(pid: int, *, proc: str = "/proc") -> bool:
    """Whether ``pid`` is a kernel thread (PF_KTHREAD in ``/proc/<pid>/stat``'s flags)."""
    try:
        text = read_small_file(Path(f"{proc}/{pid}/stat"), 4096)
    except OSError:
        return False
    fields = text[text.rfind(b")") + 2 :].split()
    try:
        return bool(int(fields[6]) & _PF_KTHREAD)
    except (IndexError, ValueError):
        return False


def process_group_members(pgid: int, *, proc: str = "/proc") -> list[int]:
    """Live (non-zombie) processes whose process group is ``pgid``, in pid order."""
    members: list[int] = []
    try:
        names = os.listdir(proc)
    except OSError:
        return members
    for name in names:
        if not name.isascii() or not name.isdigit():
            continue
        try:
            text = read_small_file(Path(f"{proc}/{name}/stat"), 4096)
        except OSError:
            continue
        fields = text[text.rfind(b")") + 2 :].split()
        if len(fields) > 2 and fields[0] != b"Z" and fields[2] == str(pgid).encode():
            members.append(int(name))
    return sorted(members)


def process_start_time(pid: int) -> float | None:
    """When the live process ``pid`` started (seconds since the epoch); None if it is gone.

    Together with the pid this names one process for good: pids are reused, start times
    are not.
    """
    try:
        process = psutil.Process(pid)
        if process.status() == psutil.STATUS_ZOMBIE:
            return None
        return process.create_time()
    except psutil.Error:
        return None


def _same_process(pid: int, started: float) -> bool:
    """Whether ``pid`` still names the live process that started at ``started``."""
    try:
        process = psutil.Process(pid)
        return process.create_time() == started and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


class AffinityRuntime:
    """Pins processes (and all their threads) with ``sched_setaffinity``; restores them."""

    def __init__(self, *, originals: OriginalsFile | None = None) -> None:
        self._originals: dict[int, _Original] = {}
        self._file = originals
        if originals is not None:
            self._adopt(originals.load())

    def _adopt(self, entries: dict[str, object]) -> None:
        """Keep saved originals of processes that still run (same pid and start time)."""
        for key, value in entries.items():
            try:
                pid = parse_pid_id(key)
                started = float(value["started"])  # type: ignore[index]
                cpus = CPUSet.parse(str(value["cpus"]))  # type: ignore[index]
            except (CpuManagerError, TypeError, KeyError, ValueError):
                continue
            if cpus and _same_process(pid, started):
                self._originals[pid] = _Original(started, cpus)
        self._persist()

    def _persist(self) -> None:
        if self._file is None:
            return
        self._file.save(
            {
                str(pid_container_id(pid)): {"started": o.started, "cpus": str(o.cpus)}
                for pid, o in sorted(self._originals.items())
            }
        )

    def _process(self, pid: int, container_id: str) -> psutil.Process:
        try:
            process = psutil.Process(pid)
            started = process.create_time()
            zombie = process.status() == psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess as err:
            msg = f"process {pid} ({container_id}) is gone; nothing to pin"
            raise RuntimeApplyError(msg) from err
        except psutil.Error as err:
            msg = f"cannot inspect process {pid} ({container_id}): {err}; check permissions"
            raise RuntimeApplyError(msg) from err
        saved = self._originals.get(pid)
        if zombie or (saved is not None and saved.started != started):
            msg = f"process {pid} ({container_id}) is gone (pid reused or exited); nothing to pin"
            raise RuntimeApplyError(msg)
        return process

    def apply(self, container_id: ContainerID, cpus: CPUSet) -> None:
        """Set the affinity of every thread of the process to ``cpus``."""
        pid = parse_pid_id(container_id)
        if not cpus:
            msg = f"refusing to pin process {pid} to an empty CPU set; give at least one CPU"
            raise RuntimeApplyError(msg)
        process = self._process(pid, container_id)
        if pid not in self._originals:
            try:
                original = CPUSet(os.sched_getaffinity(pid))
            except OSError as err:
                msg = f"cannot read the CPU affinity of process {pid}: {_why(err)}"
                raise RuntimeApplyError(msg) from err
            self._originals[pid] = _Original(process.create_time(), original)
            try:
                self._persist()  # recorded before anything changes
            except RuntimeApplyError:
                del self._originals[pid]
                raise
        self._set_all_threads(process, cpus)

    def _set_all_threads(self, process: psutil.Process, cpus: CPUSet) -> None:
        wanted = set(cpus)
        done: set[int] = set()
        for _ in range(_MAX_PASSES):
            try:
                tids = {thread.id for thread in process.threads()} | {process.pid}
            except psutil.NoSuchProcess as err:
                msg = f"process {process.pid} exited while being pinned to {cpus}"
                raise RuntimeApplyError(msg) from err
            except psutil.Error as err:
                msg = f"cannot list the threads of process {process.pid}: {err}"
                raise RuntimeApplyError(msg) from err
            todo = sorted(tids - done)
            if not todo:
                return
            for tid in todo:
                try:
                    os.sched_setaffinity(tid, wanted)
                except ProcessLookupError:
                    if tid == process.pid:
                        msg = f"process {process.pid} exited while being pinned to {cpus}"
                        raise RuntimeApplyError(msg) from None
                    # a thread that exited meanwhile needs nothing
                except OSError as err:
                    msg = f"cannot pin process {process.pid} (thread {tid}) to {cpus}: {_why(err)}"
                    raise RuntimeApplyError(msg) from err
                done.add(tid)

    def verify(self, container_id: ContainerID) -> CPUSet:
        """The affinity the process's main thread has now."""
        pid = parse_pid_id(container_id)
        try:
            return CPUSet(os.sched_getaffinity(pid))
        except OSError as err:
            msg = f"cannot read the CPU affinity of process {pid}: {_why(err)}"
            raise RuntimeApplyError(msg) from err

    def alive(self, container_id: ContainerID) -> bool:
        """Whether the process still runs (and is the one we pinned, if we did)."""
        try:
            pid = parse_pid_id(container_id)
            self._process(pid, container_id)
        except RuntimeApplyError:
            return False
        return True

    def target_refusal(self, container_id: ContainerID, owner_uid: int) -> str | None:
        """Why a manifest owned by ``owner_uid`` may not pin this process (None: it may).

        Never PID 1 nor a kernel thread; a manifest not owned by root only pins processes
        whose real, effective and saved uids are all its owner's (a setuid program is not
        its owner's to pin).
        """
        try:
            pid = parse_pid_id(container_id)
        except RuntimeApplyError as err:
            return err.message
        if pid == 1:
            return "PID 1 (init) is never pinned from a manifest"
        if is_kernel_thread(pid):
            return f"process {pid} is a kernel thread; kernel threads are never pinned"
        if owner_uid == 0:
            return None
        try:
            uids = psutil.Process(pid).uids()
        except psutil.NoSuchProcess:
            return None  # not alive: it waits, and is checked again when it shows up
        except psutil.Error as err:
            return f"cannot tell who runs process {pid}: {err}"
        if any(uid != owner_uid for uid in uids):
            return (
                f"process {pid} runs as uid {uids.real} (effective {uids.effective}) but the "
                f"manifest belongs to uid {owner_uid}; a manifest may only pin its owner's "
                "processes (root's may pin any)"
            )
        return None

    def saved(self) -> dict[ContainerID, CPUSet]:
        """The original affinity of every process pinned so far."""
        return {pid_container_id(pid): o.cpus for pid, o in sorted(self._originals.items())}

    def restore(self, container_id: ContainerID | None = None) -> None:
        """Put back the saved affinity of one process (or of all); gone processes are skipped.

        Raises one RuntimeApplyError naming every process that could not be restored.
        """
        if container_id is None:
            pids = sorted(self._originals)
        else:
            pid = parse_pid_id(container_id)
            pids = [pid] if pid in self._originals else []
        failures: list[str] = []
        for pid in pids:
            original = self._originals.pop(pid)
            if not _same_process(pid, original.started):
                continue
            try:
                self._set_all_threads(psutil.Process(pid), original.cpus)
            except (RuntimeApplyError, psutil.Error) as err:
                if _same_process(pid, original.started):
                    failures.append(getattr(err, "message", str(err)))
        if pids:
            self._persist()
        if failures:
            msg = "could not restore CPU affinity: " + "; ".join(failures)
            raise RuntimeApplyError(msg)
