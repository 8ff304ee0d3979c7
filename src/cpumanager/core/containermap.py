"""ContainerMap: container ID -> (pod UID, container name), with the kubelet's semantics.

The kubelet keeps this map to translate the runtime's container IDs into the keys of its
state (and to migrate V1 checkpoints, which were keyed by container ID). Its rules:

* ``add`` inserts or overwrites one container ID; other IDs already mapped to the same
  (pod, name) are kept, so one container name may have several IDs (a restarted container).
* ``remove_by_container_ref`` removes *one* ID of the (pod, name) (the one
  ``container_id`` finds); with duplicates the others survive.
* ``container_id`` returns the first match. Go's map order is arbitrary; we use insertion
  order, which is one of the orders Go may produce and is deterministic.

The map is an immutable value: every change returns a new map (copy-on-write), so a clone
handed to the manager at start can never be changed behind its back.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from types import MappingProxyType

from cpumanager.core.ids import ContainerID, ContainerKey, ContainerName, PodUID

__all__ = ["ContainerMap"]


class ContainerMap:
    """Immutable container ID -> ContainerKey map, kept in insertion order."""

    __slots__ = ("_entries",)
    _entries: Mapping[ContainerID, ContainerKey]

    def __init__(self, entries: Iterable[tuple[ContainerID, PodUID, ContainerName]] = ()) -> None:
        built: dict[ContainerID, ContainerKey] = {}
        for container_id, pod_uid, container_name in entries:
            built[container_id] = ContainerKey(pod_uid, container_name)
        object.__setattr__(self, "_entries", MappingProxyType(built))

    @classmethod
    def _wrap(cls, entries: dict[ContainerID, ContainerKey]) -> ContainerMap:
        new = cls.__new__(cls)
        object.__setattr__(new, "_entries", MappingProxyType(entries))
        return new

    @classmethod
    def newest_wins(
        cls, containers: Iterable[tuple[ContainerID, PodUID, ContainerName]]
    ) -> ContainerMap:
        """The start-up map of newer kubelets: containers given oldest first, one ID per name.

        Each container replaces any earlier ID of the same (pod, name), so the newest wins.
        """
        result = cls()
        for container_id, pod_uid, container_name in containers:
            result = result.remove_all_for_ref(pod_uid, container_name).add(
                pod_uid, container_name, container_id
            )
        return result

    def __setattr__(self, name: str, value: object) -> None:
        msg = "ContainerMap is immutable"
        raise AttributeError(msg)

    # --- changes (each returns a new map) ------------------------------------------------

    def add(
        self, pod_uid: PodUID, container_name: ContainerName, container_id: ContainerID
    ) -> ContainerMap:
        """Insert or overwrite ``container_id``; other IDs of the same container are kept."""
        entries = dict(self._entries)
        entries[container_id] = ContainerKey(pod_uid, container_name)
        return ContainerMap._wrap(entries)

    def remove_by_container_id(self, container_id: ContainerID) -> ContainerMap:
        """Drop one ID; unknown IDs are ignored."""
        if container_id not in self._entries:
            return self
        entries = dict(self._entries)
        del entries[container_id]
        return ContainerMap._wrap(entries)

    def remove_by_container_ref(
        self, pod_uid: PodUID, container_name: ContainerName
    ) -> ContainerMap:
        """Drop the one ID :meth:`container_id` finds for (pod, name); a no-op if none."""
        found = self.container_id(pod_uid, container_name)
        if found is None:
            return self
        return self.remove_by_container_id(found)

    def remove_all_for_ref(self, pod_uid: PodUID, container_name: ContainerName) -> ContainerMap:
        """Drop every ID of (pod, name) (not a kubelet operation; used by :meth:`newest_wins`)."""
        key = ContainerKey(pod_uid, container_name)
        kept = {cid: ref for cid, ref in self._entries.items() if ref != key}
        if len(kept) == len(self._entries):
            return self
        return ContainerMap._wrap(kept)

    # --- queries ---------------------------------------------------------------------

    def container_id(self, pod_uid: PodUID, container_name: ContainerName) -> ContainerID | None:
        """The first ID (insertion order) mapped to (pod, name), or None."""
        key = ContainerKey(pod_uid, container_name)
        for container_id, ref in self._entries.items():
            if ref == key:
                return container_id
        return None

    def container_ref(self, container_id: ContainerID) -> ContainerKey | None:
        """(pod UID, container name) of ``container_id``, or None when unknown."""
        return self._entries.get(container_id)

    def __iter__(self) -> Iterator[tuple[ContainerID, ContainerKey]]:
        """Every (ID, key) pair in insertion order, over a snapshot (safe to change meanwhile)."""
        return iter(tuple(self._entries.items()))

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, container_id: object) -> bool:
        return container_id in self._entries

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ContainerMap):
            return NotImplemented
        return list(self._entries.items()) == list(other._entries.items())

    def __hash__(self) -> int:
        return hash(tuple(self._entries.items()))

    def __repr__(self) -> str:
        inner = ", ".join(f"{cid}: {ref.pod_uid}/{ref.container_name}" for cid, ref in self)
        return f"ContainerMap({{{inner}}})"

    def as_dict(self) -> dict[ContainerID, ContainerKey]:
        return dict(self._entries)

    def keys(self) -> tuple[ContainerKey, ...]:
        """Every mapped (pod, name), in insertion order, duplicates removed."""
        return tuple(dict.fromkeys(self._entries.values()))

    # Short names used by the manager.
    ref = container_ref
    remove_id = remove_by_container_id
    remove_ref = remove_by_container_ref
