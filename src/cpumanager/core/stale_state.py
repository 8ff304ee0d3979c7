"""Stale-state removal: which assignments belong to containers that are gone.

The kubelet runs this before every hint request, every allocation and every reconcile pass,
guarded only by "all pod sources are ready". There is deliberately no shortcut for an empty
list of active pods: pods that exited while the manager was down must be reclaimed too.

The active containers map is the kubelet's: pod UID -> that pod's container names, a later
pod with the same UID replacing an earlier one's names (``removeStaleState`` makes a new
inner map per pod).

:func:`stale_keys_proved` gives :func:`stale_keys`' answer for a list of active pods, with
a :class:`StaleProof` of the last answer to save work (admission asks twice per container
on a list that only grows). It is exact because every value it trusts is immutable and
compared by identity:

* the map of pods ``P`` is reused for any list that starts with ``P`` (the same pod
  objects, or equal ones: a Pod's fields are frozen), the later pods' entries written
  over it in order, as the full build would;
* a snapshot and container map found with nothing stale for ``P`` (the very same objects,
  both immutable) have nothing stale for ``P + E`` either when no pod in ``E`` has a UID
  that holds state there: the map's entries for the UIDs that hold state are then those of
  ``P``, and only they are read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from cpumanager.core.containermap import ContainerMap
from cpumanager.core.ids import ContainerKey, ContainerName, PodUID
from cpumanager.core.state import StateSnapshot
from cpumanager.core.workload import Pod, container_names

__all__ = ["StaleProof", "active_containers", "stale_keys", "stale_keys_proved"]

Active = Mapping[PodUID, frozenset[ContainerName]]


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


@dataclass(frozen=True, slots=True)
class StaleProof:
    """What one check established (module docstring): the active map of ``pods`` and, when
    nothing was stale, the snapshot and container map it held for, with the UIDs holding
    state in either."""

    pods: tuple[Pod, ...]
    active: Active
    clean: tuple[StateSnapshot, ContainerMap, frozenset[PodUID]] | None = None


def stale_keys_proved(
    proof: StaleProof | None,
    snapshot: StateSnapshot,
    container_map: ContainerMap,
    pods: Sequence[Pod],
) -> tuple[tuple[ContainerKey, ...], StaleProof]:
    """``stale_keys(snapshot, container_map.keys(), active_containers(pods))``, and the
    proof for the next call (module docstring)."""
    active: Active
    known = 0 if proof is None else len(proof.pods)
    # ``pods`` starts with the proof's pods: the same objects, or equal ones (same UID and
    # containers; the tuple comparison tries identity first)
    if proof is None or len(pods) < known or tuple(pods[:known]) != proof.pods:
        active = active_containers(pods)
    else:
        extra = pods[known:]
        clean = proof.clean
        if clean is not None and clean[0] is snapshot and clean[1] is container_map:
            held = clean[2]
            for pod in extra:
                if pod.uid in held:
                    break
            else:
                return (), proof
        if extra:
            grown = dict(proof.active)
            for pod in extra:
                grown[pod.uid] = container_names(pod)
            active = grown
        else:
            active = proof.active
    mapped = container_map.keys()
    stale = stale_keys(snapshot, mapped, active)
    clean = None
    if not stale:
        held = frozenset(snapshot.assignments) | {key.pod_uid for key in mapped}
        clean = (snapshot, container_map, held)
    return stale, StaleProof(tuple(pods), active, clean)
