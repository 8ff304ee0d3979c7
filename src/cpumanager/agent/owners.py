"""Who owns each entry of a shared state directory, and which entries are still alive.

``cpumanager run`` and ``cpumanager agent`` may share one state directory (one checkpoint in
the kubelet's format). Neither knows the other's pods, so ownership is written into the pod
uid itself:

* a ``run`` pod's uid is ``cpumanager-run.<pid>.<start time in centiseconds>`` of the
  ``cpumanager run`` process that waits for the command. The entry is alive while that very
  process runs (a reused pid has another start time), so a pod whose process is gone is
  stale and is reclaimed by the next run or agent tick, whoever comes first;
* every other uid belongs to an agent (workload manifests). A ``run`` keeps such entries
  untouched; only an agent, which reads the workload manifests, may reclaim them.

The CPU manager's stale-state removal only needs (pod uid, container names) for entries to
keep, so kept entries are represented by placeholder pods built from the checkpoint.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from cpumanager.core.ids import ContainerName, PodUID
from cpumanager.core.state import StateSnapshot
from cpumanager.core.workload import Container, Pod

__all__ = [
    "RUN_CONTAINER",
    "RUN_UID_PREFIX",
    "is_run_uid",
    "parse_run_uid",
    "placeholder_pods",
    "run_owner_alive",
    "run_pod_uid",
]

RUN_UID_PREFIX = "cpumanager-run."
RUN_CONTAINER = ContainerName("main")
# ASCII digits only, bounded: stored ids are read by every run and agent, so parsing one
# must never fail ('²'.isdigit() is true, int('²') raises).
_RUN_UID = re.compile(re.escape(RUN_UID_PREFIX) + r"([0-9]{1,10})\.([0-9]{1,20})")


def run_pod_uid(pid: int, started: float) -> PodUID:
    """The uid of the pod a ``cpumanager run`` process (pid, start time) admits."""
    return PodUID(f"{RUN_UID_PREFIX}{pid}.{round(started * 100)}")


def is_run_uid(uid: str) -> bool:
    """Whether a checkpoint entry belongs to a ``cpumanager run`` pod."""
    return parse_run_uid(uid) is not None


def parse_run_uid(uid: str) -> tuple[int, int] | None:
    """(pid, start time in centiseconds) of a run pod uid; None for any other uid.

    Total: any string gives an answer, never an exception.
    """
    match = _RUN_UID.fullmatch(uid)
    if match is None:
        return None
    return int(match[1]), int(match[2])


def run_owner_alive(uid: str, start_time: Callable[[int], float | None]) -> bool:
    """Whether the ``cpumanager run`` process behind a run uid still runs."""
    parsed = parse_run_uid(uid)
    if parsed is None:
        return False
    pid, started = parsed
    now = start_time(pid)
    return now is not None and round(now * 100) == started


def placeholder_pods(snapshot: StateSnapshot, keep: Callable[[PodUID], bool]) -> list[Pod]:
    """A pod per checkpoint entry to keep, holding the entry's container names."""
    pods: list[Pod] = []
    for uid, containers in snapshot.assignments.items():
        if keep(uid):
            names = tuple(Container(ContainerName(name)) for name in containers)
            pods.append(Pod(uid=uid, name=uid, containers=names))
    return pods
