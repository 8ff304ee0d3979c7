"""Pushed node snapshots and assumed pods, with their ages (in memory, thread-safe).

A pod the extender approves for a node is *assumed* there until the node's agent reports it
(its uid appears in any pushed snapshot) or its time runs out, so pods filtered before the
next push see the CPUs it will take (the scheduler's own assume cache works the same way).

Each pushed snapshot is restored once, when it arrives (``prepared.py``): the restored
values, the node's admission key and its rule-out summary. Verdicts are cached per
(admission key, assumed pods, pod shape), so nodes in the same state share one exact
admission, and a replica set's pods (one shape) cost one admission per state and change.
A verdict on a node where the pod, or a pod assumed there, already has state is cached for
that node and snapshot only.

The store holds at most ``max_nodes`` nodes. A push of a node it does not hold, when full,
evicts the node heard from longest ago if that node is stale (no push or heartbeat for
``evict_after`` seconds), and is refused with :class:`StoreFull` otherwise: a flood of made-up
names cannot push out live nodes, and a node that left the cluster makes room once stale.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cpumanager.core import limits
from cpumanager.core.ids import PodUID
from cpumanager.core.workload import Pod
from cpumanager.errors import CpuManagerError, InputError
from cpumanager.extender.judge import Verdict
from cpumanager.extender.prepared import PreparedNode, try_prepare
from cpumanager.extender.visibility import unseen
from cpumanager.nodeview.digest import snapshot_digest
from cpumanager.nodeview.snapshot import NodeSnapshot

__all__ = ["NodeEntry", "NodeStore", "StoreFull", "pod_shape", "snapshot_digest"]

_CACHE_LIMIT = 200_000


def pod_shape(spec: Mapping[str, Any]) -> str:
    """A key for what admission reads of a pod: its spec without node and scheduling noise."""
    kept = {k: v for k, v in spec.items() if k not in ("nodeName", "schedulerName")}
    return hashlib.sha256(json.dumps(kept, sort_keys=True, default=str).encode()).hexdigest()


class StoreFull(InputError):  # noqa: N818 - answered 507
    """The store holds ``max_nodes`` live nodes and none is stale enough to evict."""


@dataclass(slots=True)
class NodeEntry:
    """One node's latest snapshot, when it arrived, and the pods assumed on it (with their
    shapes and expiry). ``prepared``: the node restored, the kubelet's refusal to start on
    it, or None when the snapshot has no pod list."""

    snapshot: NodeSnapshot
    digest: str
    received: float
    generation: int
    reported: frozenset[PodUID]
    prepared: PreparedNode | CpuManagerError | None
    assumed: dict[PodUID, tuple[Pod, str, float]] = field(default_factory=dict)


class NodeStore:
    """Snapshots by node name; ``lock`` serialises a filter's checks with its assumptions."""

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        max_nodes: int = limits.MAX_EXTENDER_NODES,
        evict_after: float = 60.0,
    ) -> None:
        self.clock = clock
        self.max_nodes = max_nodes
        self.evict_after = evict_after
        self.lock = threading.RLock()
        self._nodes: dict[str, NodeEntry] = {}
        self._where: dict[PodUID, set[str]] = {}  # nodes each assumed pod is held on
        self._generation = 0
        self._cache: dict[tuple[object, ...], Verdict] = {}

    def put(self, snapshot: NodeSnapshot, digest: str) -> bool:
        """Store a pushed snapshot, restored once here; True when it differs from the one
        held."""
        with self.lock:
            old = self._nodes.get(snapshot.node_name)
            if old is not None and old.digest == digest:
                old.received = self.clock()
                return False
        # The restore runs outside the lock: filters go on meanwhile.
        prepared: PreparedNode | CpuManagerError | None = unseen(snapshot)
        if prepared is None and snapshot.pods is not None:
            prepared = try_prepare(snapshot)
        reported = frozenset(p.pod.uid for p in snapshot.pods or ())
        with self.lock:
            now = self.clock()
            old = self._nodes.get(snapshot.node_name)
            if old is not None and old.digest == digest:
                old.received = now
                return False
            if old is None and len(self._nodes) >= self.max_nodes:
                self._evict(snapshot.node_name, now)
            self._generation += 1
            assumed = {} if old is None else old.assumed
            entry = NodeEntry(snapshot, digest, now, self._generation, reported, prepared, assumed)
            self._nodes[snapshot.node_name] = entry
            for uid in reported & self._where.keys():
                self.forget(uid)
            return True

    def _evict(self, name: str, now: float) -> None:
        """Make room for ``name`` (module docstring); StoreFull when no node is stale."""
        oldest = min(self._nodes, key=lambda n: self._nodes[n].received)
        if now - self._nodes[oldest].received < self.evict_after:
            msg = (
                f"the extender holds {len(self._nodes):,} nodes (--max-nodes) and none is "
                f"stale; node {name} is not taken"
            )
            raise StoreFull(msg)
        entry = self._nodes.pop(oldest)
        for uid in list(entry.assumed):
            names = self._where.get(uid)
            if names is not None:
                names.discard(oldest)
                if not names:
                    del self._where[uid]

    def __len__(self) -> int:
        with self.lock:
            return len(self._nodes)

    def heartbeat(self, name: str, digest: str) -> bool:
        """Refresh a node whose agent saw no change; False when we hold another state."""
        with self.lock:
            entry = self._nodes.get(name)
            if entry is None or entry.digest != digest:
                return False
            entry.received = self.clock()
            return True

    def get(self, name: str) -> NodeEntry | None:
        with self.lock:
            return self._nodes.get(name)

    def entries(self, names: Iterable[str]) -> list[tuple[str, NodeEntry | None]]:
        """Each named node's entry (None when never pushed), under one lock."""
        with self.lock:
            found = self._nodes.get
            return [(name, found(name)) for name in names]

    def prepared(self) -> dict[tuple[str, int], PreparedNode]:
        """Every restored node by (name, generation): what a fan-out worker forked now holds."""
        with self.lock:
            return {
                (name, entry.generation): entry.prepared
                for name, entry in self._nodes.items()
                if isinstance(entry.prepared, PreparedNode)
            }

    def ages(self) -> dict[str, float]:
        """Seconds since each node's last push or heartbeat."""
        with self.lock:
            now = self.clock()
            return {name: now - entry.received for name, entry in self._nodes.items()}

    def assumed_pods(self, entry: NodeEntry) -> list[tuple[Pod, str]]:
        """The pods still assumed on a node with their shapes (expired ones dropped), oldest
        first."""
        if not entry.assumed:
            return []
        with self.lock:
            now = self.clock()
            for uid in [u for u, (_, _, until) in entry.assumed.items() if until <= now]:
                del entry.assumed[uid]
                names = self._where.get(uid, set())
                names.discard(entry.snapshot.node_name)
                if not names:
                    self._where.pop(uid, None)
            return [(pod, shape) for pod, shape, _ in entry.assumed.values()]

    def assumed_count(self) -> int:
        with self.lock:
            return sum(len(names) for names in self._where.values())

    def assume(self, name: str, pod: Pod, shape: str, ttl: float, *, move: bool = True) -> None:
        """Hold ``pod`` (of ``shape``) on a node until reported or ``ttl`` seconds pass;
        with ``move``, its assumptions on other nodes end (re-filtering a pod moves it)."""
        with self.lock:
            if move:
                self.forget(pod.uid)
            entry = self._nodes.get(name)
            if entry is not None and pod.uid not in entry.reported:
                entry.assumed[pod.uid] = (pod, shape, self.clock() + ttl)
                self._where.setdefault(pod.uid, set()).add(name)

    def forget(self, uid: PodUID) -> None:
        """End the pod's assumptions on every node."""
        with self.lock:
            for name in self._where.pop(uid, ()):
                entry = self._nodes.get(name)
                if entry is not None:
                    entry.assumed.pop(uid, None)

    def forget_on(self, name: str, uid: PodUID) -> None:
        """End the pod's assumption on one node (``binding.py``: gone from it)."""
        with self.lock:
            entry = self._nodes.get(name)
            if entry is not None:
                entry.assumed.pop(uid, None)
            names = self._where.get(uid)
            if names is not None:
                names.discard(name)
                if not names:
                    del self._where[uid]

    def lookup(self, key: tuple[object, ...]) -> Verdict | None:
        """The verdict cached under ``key`` (see the module docstring), if any."""
        with self.lock:
            return self._cache.get(key)

    def remember(self, key: tuple[object, ...], verdict: Verdict) -> None:
        """Cache ``verdict`` under ``key``; past the cache's limit it starts afresh."""
        with self.lock:
            if len(self._cache) >= _CACHE_LIMIT:
                self._cache.clear()
            self._cache[key] = verdict
