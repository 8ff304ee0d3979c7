"""The reconcile planner: which running containers need their cpuset pushed.

The kubelet compares the cpuset each running container should have (its exclusive set, or
the shared pool) with the one it last applied, and pushes only the differences. Containers
not started yet (waiting, or no status) count as failures and are retried next pass;
terminated containers are skipped without releasing anything (they may restart). Applying
happens outside, through a Runtime port; this module only plans.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum

from cpumanager.core.cpuset import CPUSet
from cpumanager.core.ids import ContainerID, ContainerKey
from cpumanager.core.state import StateSnapshot
from cpumanager.core.workload import Pod

__all__ = ["ContainerPhase", "ContainerStatus", "CpusetUpdate", "ReconcilePlan", "plan_updates"]


class ContainerPhase(Enum):
    WAITING = "waiting"
    RUNNING = "running"
    TERMINATED = "terminated"


@dataclass(frozen=True, slots=True)
class ContainerStatus:
    """What the runtime says about one container of an active pod."""

    key: ContainerKey
    container_id: ContainerID | None
    phase: ContainerPhase


@dataclass(frozen=True, slots=True)
class CpusetUpdate:
    key: ContainerKey
    container_id: ContainerID
    cpus: CPUSet


@dataclass(frozen=True, slots=True)
class ReconcilePlan:
    """Updates to push, containers already right, failures (key, reason), and the
    container-map entries to (re)record for running containers."""

    updates: tuple[CpusetUpdate, ...]
    unchanged: tuple[ContainerKey, ...]
    failures: tuple[tuple[ContainerKey, str], ...]
    running: tuple[tuple[ContainerKey, ContainerID], ...]


def plan_updates(
    snapshot: StateSnapshot,
    active_pods: Iterable[Pod],
    statuses: Mapping[ContainerKey, ContainerStatus],
    last_applied: Mapping[ContainerKey, CPUSet],
) -> ReconcilePlan:
    """Plan one pass in the kubelet's order: pods as given, init then app containers."""
    updates: list[CpusetUpdate] = []
    unchanged: list[ContainerKey] = []
    failures: list[tuple[ContainerKey, str]] = []
    running: list[tuple[ContainerKey, ContainerID]] = []
    for pod in active_pods:
        for container in pod.all_containers():
            key = pod.key(container.name)
            status = statuses.get(key)
            if status is None or status.container_id is None:
                failures.append((key, "container has no status or id yet"))
                continue
            if status.phase is ContainerPhase.WAITING:
                failures.append((key, "container has not started"))
                continue
            if status.phase is ContainerPhase.TERMINATED:
                continue
            running.append((key, status.container_id))
            want = snapshot.cpuset_or_default(key.pod_uid, key.container_name)
            if not want:
                failures.append((key, "desired cpuset is empty"))
                continue
            if last_applied.get(key, CPUSet()) == want:
                unchanged.append(key)
                continue
            updates.append(CpusetUpdate(key, status.container_id, want))
    return ReconcilePlan(tuple(updates), tuple(unchanged), tuple(failures), tuple(running))
