"""``cpumanager run``: admit one Guaranteed pod through a real Node, run a command on its CPUs.

The flow, each step under the state-directory lock where it touches the checkpoint:

1. **admit** (locked): restore the checkpoint as a restarted kubelet does, keeping the
   entries of live ``run`` processes and every agent entry, releasing the rest (stale); then
   admit a Guaranteed pod (``<n>`` CPUs, ``<memory>``) through the topology manager and the
   static policy. Its exclusive CPUs are persisted before the command starts.
2. **run** (unlocked, so other runs may admit meanwhile): start the command with its CPU
   affinity set in the child before ``exec``, forward SIGTERM to it (SIGINT from a terminal
   reaches it directly), and wait.
3. **release** (locked): restore again without this pod, which frees its CPUs. When the lock
   cannot be had in time (an agent owns the directory), the entry stays and is reclaimed by
   the next run or agent tick, because its owner process is gone by then.

The pod's uid names this ``cpumanager run`` process (pid and start time), see
:mod:`cpumanager.agent.owners`. If this process is killed with SIGKILL the command may
outlive it; its CPUs are then reclaimed by the next run although the command still runs.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from fractions import Fraction
from types import FrameType
from typing import Any

from cpumanager.adapters.runtimes.affinity import process_group_members
from cpumanager.agent.owners import RUN_CONTAINER, is_run_uid, placeholder_pods, run_pod_uid
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.ids import PodUID
from cpumanager.core.quantity import parse_quantity
from cpumanager.core.workload import Container, Pod
from cpumanager.errors import (
    AllocationError,
    CpuManagerError,
    HostError,
    InputError,
    TopologyAffinityError,
    UnexpectedAdmissionError,
    WorkloadError,
)
from cpumanager.manager.node import Node

__all__ = ["Admission", "RunSession", "exit_code_of", "pod_for_this_process", "run_pod"]

_REJECTIONS: dict[str, type[AllocationError]] = {
    "TopologyAffinityError": TopologyAffinityError,
    "UnexpectedAdmissionError": UnexpectedAdmissionError,
}


def run_pod(*, uid: PodUID, name: str, cpus: int, memory: str) -> Pod:
    """A Guaranteed pod of one container with ``cpus`` whole CPUs and ``memory``."""
    if cpus < 1:
        msg = f"--cpus must be a whole number of CPUs, at least 1; got {cpus}"
        raise InputError(msg)
    memory_bytes = parse_quantity(memory, field="--memory")
    if memory_bytes <= 0:
        msg = f"--memory must be positive, e.g. '1Gi'; got {memory!r}"
        raise WorkloadError(msg)
    resources = {"cpu": Fraction(cpus), "memory": memory_bytes}
    container = Container(RUN_CONTAINER, requests=resources, limits=resources)
    return Pod(uid=uid, name=name, namespace="cpumanager-run", containers=(container,))


@dataclass(frozen=True, slots=True)
class Admission:
    """The admitted pod, its CPUs and the NUMA nodes they sit on."""

    pod: Pod
    cpus: CPUSet
    numa_nodes: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "pod": self.pod.display_name,
            "uid": self.pod.uid,
            "cpus": str(self.cpus),
            "numa_nodes": list(self.numa_nodes),
        }


def exit_code_of(returncode: int) -> int:
    """The shell's exit code for a child's return code (128 + signal when killed)."""
    return 128 - returncode if returncode < 0 else returncode


class RunSession:
    """Admit, run, release: one ``cpumanager run``, over injected node and lock factories."""

    def __init__(
        self,
        *,
        node_factory: Callable[[], Node],
        lock: Callable[[], AbstractContextManager[object]],
        run_owner_alive: Callable[[str], bool],
        host_failure: Callable[[], HostError | None] = lambda: None,
        notice: Callable[[str], None] = lambda message: None,
    ) -> None:
        self._notice = notice
        self.reclaimed: set[str] = set()  # run uids whose owner died, released as stale
        self._node_factory = node_factory
        self._lock = lock
        self._run_owner_alive = run_owner_alive
        self._host_failure = host_failure

    def _open(self, keep_pods: Sequence[Pod], *, drop: PodUID | None = None) -> Node:
        """A started Node whose active pods are ``keep_pods`` plus the entries to keep.

        Starting releases every other entry: those of ``drop``, of dead runs (stale).
        """
        node = self._node_factory()
        mine = {pod.uid for pod in keep_pods}

        def keep(uid: str) -> bool:
            if uid in mine or uid == drop:
                return False
            if not is_run_uid(uid) or self._run_owner_alive(uid):
                return True
            self.reclaimed.add(uid)  # its run died without releasing (SIGKILL, a crash)
            return False

        def active() -> list[Pod]:
            return [*keep_pods, *placeholder_pods(node.snapshot().cpu, keep)]

        node.start(active_pods=active)
        return node

    def admit(self, pod: Pod, *, locked: bool = True) -> Admission:
        """Admit ``pod``; the kubelet's rejection becomes an AllocationError (exit 1)."""
        if locked:
            with self._lock():
                return self._admit(pod)
        return self._admit(pod)

    def _admit(self, pod: Pod) -> Admission:
        node = self._open([pod])
        result = node.admit(pod)
        if not result.admitted:
            failure = self._host_failure()
            if failure is not None:  # the disk, not the node, said no: exit 3, not 1
                raise failure
            node.remove_pod(pod.uid)  # nothing partial stays behind
            error = _REJECTIONS.get(result.reason, AllocationError)
            msg = (
                f"pod rejected: {result.reason}: {result.message}; ask for fewer CPUs, free "
                "some, or relax topologyManagerPolicy"
            )
            rejection = error(msg)
            rejection.reason = result.reason  # the kubelet's reason, e.g. SMTAlignmentError
            raise rejection
        cpus = node.placement(pod, pod.containers[0]).cpus
        numa = node.topology.numa_of(cpus)
        return Admission(pod, cpus, tuple(numa))

    def release(self, pod: Pod) -> str | None:
        """Free the pod's CPUs (and any stale entry); the reason when it could not."""
        try:
            with self._lock():
                self._open([], drop=pod.uid)
        except CpuManagerError as err:
            return err.message
        return None

    def execute(self, command: Sequence[str], cpus: CPUSet) -> int:
        """Start ``command`` pinned to ``cpus`` and wait; its exit code (128+N if killed).

        The command leads a process group of its own. Every catchable signal that would
        end this process (SIGHUP, SIGTERM, SIGUSR1, ...) is forwarded to that group instead,
        and the wait lasts until no process of the group is left, so the CPUs are never
        released while something the command started still runs on them (a process that
        leaves the group with setsid is not followed).
        """
        if not command:
            msg = "give the command to run after '--', e.g. cpumanager run --cpus 2 -- ./job"
            raise InputError(msg)
        allowed = CPUSet(os.sched_getaffinity(0))
        if not cpus <= allowed:
            msg = (
                f"CPUs {cpus - allowed} are not available to this process (it may use "
                f"{allowed}); the machine given with --machine/--sysfs does not match this "
                "host, or a cpuset cgroup confines it: describe the CPUs it may use"
            )
            raise InputError(msg)
        with _ForwardedSignals() as forwarded:
            child = _spawn(command, cpus)
            forwarded.group = child.pid
            for signum in forwarded.received:  # arrived while it was being started
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(child.pid, signum)
            with _foreground(child.pid):
                returncode = child.wait()
                _wait_for_group(child.pid, self._notice)
        return exit_code_of(returncode)


class _ForwardedSignals:
    """While active, fatal catchable signals go to ``group`` (once set) instead of ending us."""

    def __init__(self) -> None:
        self.group: int | None = None
        self.received: list[int] = []
        self._previous: dict[int, Any] = {}

    def _forward(self, signum: int, _frame: FrameType | None) -> None:
        self.received.append(signum)
        if self.group is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.group, signum)

    def __enter__(self) -> _ForwardedSignals:
        for signum in FORWARDED_SIGNALS:
            with contextlib.suppress(OSError, ValueError):
                self._previous[signum] = signal.signal(signum, self._forward)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self._previous.items():
            with contextlib.suppress(OSError, ValueError, TypeError):
                signal.signal(signum, handler)


def _catchable_fatal_signals() -> tuple[int, ...]:
    """Signals whose default action ends the process and that a handler may catch.

    Left out: SIGKILL and SIGSTOP (uncatchable), job control and SIGCHLD/SIGWINCH/SIGURG
    (they do not end a process), SIGPIPE (Python ignores it), and the fault signals SIGSEGV,
    SIGBUS, SIGFPE, SIGILL (a handler that returns from a real fault would loop forever).
    """
    names = [
        "SIGKILL",
        "SIGSTOP",
        "SIGCHLD",
        "SIGCONT",
        "SIGTSTP",
        "SIGTTIN",
        "SIGTTOU",
        "SIGWINCH",
        "SIGURG",
        "SIGPIPE",
        "SIGSEGV",
        "SIGBUS",
        "SIGFPE",
        "SIGILL",
    ]
    skip = {getattr(signal, name) for name in names if hasattr(signal, name)}
    return tuple(sorted(int(s) for s in signal.valid_signals() if s not in skip))


FORWARDED_SIGNALS = _catchable_fatal_signals()


@contextlib.contextmanager
def _foreground(pgid: int) -> Iterator[None]:
    """Make ``pgid`` the terminal's foreground group while it runs (when we own the tty).

    The command reads the terminal and gets Ctrl-C as it would without us; afterwards the
    terminal comes back to our group.
    """
    fd = None
    try:
        if os.isatty(0) and os.tcgetpgrp(0) == os.getpgrp():
            fd = 0
            os.tcsetpgrp(fd, pgid)
    except OSError:
        fd = None
    try:
        yield
    finally:
        if fd is not None:
            previous = signal.signal(signal.SIGTTOU, signal.SIG_IGN)
            with contextlib.suppress(OSError):
                os.tcsetpgrp(fd, os.getpgrp())
            signal.signal(signal.SIGTTOU, previous)


def _spawn(command: Sequence[str], cpus: CPUSet) -> subprocess.Popen[bytes]:
    wanted = set(cpus)
    try:
        return subprocess.Popen(
            list(command),
            process_group=0,
            preexec_fn=functools.partial(os.sched_setaffinity, 0, wanted),  # noqa: PLW1509
        )
    except FileNotFoundError as err:
        msg = f"command {command[0]!r} not found; check its name and PATH"
        raise InputError(msg) from err
    except PermissionError as err:
        msg = f"command {command[0]!r} cannot be executed: permission denied"
        raise InputError(msg) from err
    except subprocess.SubprocessError as err:
        msg = (
            f"command {command[0]!r} could not be pinned to CPUs {cpus} before it started "
            f"({err}); check that these CPUs are online and allowed for this process"
        )
        raise InputError(msg) from err


def _wait_for_group(pgid: int, notice: Callable[[str], None], *, poll_s: float = 0.1) -> None:
    """Return once no live process of the process group ``pgid`` is left."""
    said = False
    while members := process_group_members(pgid):
        if not said:
            shown = ", ".join(map(str, members[:10])) + (" ..." if len(members) > 10 else "")
            notice(
                f"the command exited; waiting for {len(members)} process(es) it left in its "
                f"process group (pid {shown}) before releasing its CPUs"
            )
            said = True
        time.sleep(poll_s)


def pod_for_this_process(*, cpus: int, memory: str, pid: int, started: float) -> Pod:
    """The run pod of the ``cpumanager run`` process (pid, start time)."""
    return run_pod(uid=run_pod_uid(pid, started), name=f"run-{pid}", cpus=cpus, memory=memory)
