"""Stale-state removal: which assignments belong to containers that are gone.

The kubelet runs this before every hint request, every allocation and every reconcile pass,
guarded only by "all pod sources are ready". There is deliberately no shortcut for an empty
list of active pods: pods that exited while the manager was down must be reclaimed too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from cpumanager.core.ids import ContainerKey, ContainerName, PodUID
from cpumanager.core.state import StateSnapshot
from cpumanager.core.workload import Pod, container_names

__all__ = ["active_containers", "stale_keys"]


def active_containers(pods: Iterable[Pod]) -> dict[PodUID, frozenset[ContainerName]]:
    """Pod UID -> names of its init and app containers."""
    return {pod.uid: container_names(pod) for pod in pods}


def stale_keys(
    snapshot: StateSnapshot,
    mapped: Iterable[ContainerKey],
    active: Mapping[PodUID, frozenset[ContainerName]],
) -> tuple[ContainerKey, ...]:
    """Keys to release: state entries first (in state order), then ``mapped`` ones.

    ``mapped`` are the keys of the container map (containers the runtime knows about).
    """
    found: list[ContainerKey] = []
    seen: set[ContainerKey] = set()
    none: frozenset[ContainerName] = frozenset()
    for pod_uid, containers in snapshot.assignments.items():
        names = active.get(pod_uid, none)
        for name in containers:
            if name not in names:
                key = ContainerKey(pod_uid, name)
                found.append(key)
                seen.add(key)
    for key in mapped:
        if key not in seen and key.container_name not in active.get(key.pod_uid, frozenset()):
            found.append(key)
            seen.add(key)
    return tuple(found)
