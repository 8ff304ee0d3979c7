"""Did the agent see what the kubelet sees? (pure)

A snapshot that could not read what the kubelet has stands for no state: the extender
judges such a node ``NodeNotRestorable`` and ``node nrt`` publishes no object from it,
never an empty node.

* A checkpoint the agent found but could not read (``unreadable``: permissions, I/O) exists
  on the node: its allocations are unknown.
* ``cpu_manager_state`` the agent did not find (``missing``) while the node runs pods: the
  kubelet writes it when its CPU manager starts, whatever the policy, before any pod
  starts. A running node without it means the agent is looking at the wrong place (a mount
  missing). Before the kubelet's first start, or on a node with no active pods, a missing
  file is the fresh state the kubelet would create, and is read as such.
* The memory manager's and the device manager's files are written lazily (a feature gate,
  the first device), so their absence alone proves nothing.
"""

from __future__ import annotations

from cpumanager.errors import SnapshotError
from cpumanager.nodeview.snapshot import CHECKPOINT_KINDS, NodeSnapshot

__all__ = ["unseen"]


def unseen(snapshot: NodeSnapshot) -> SnapshotError | None:
    """Why the snapshot cannot stand for the node's kubelet state, or None when it can."""
    for source in snapshot.sources:
        if source.name in CHECKPOINT_KINDS and source.status == "unreadable":
            msg = (
                f"the agent could not read {source.name} on node {snapshot.node_name} "
                f"({source.reason or 'unreadable'}); give it read access to the kubelet's "
                "checkpoints (docs/agent.md)"
            )
            return SnapshotError(msg)
    statuses = {s.name: s.status for s in snapshot.sources}
    if statuses.get("cpu_manager_state") == "missing" and snapshot.active_pods():
        msg = (
            f"node {snapshot.node_name} runs pods but the agent found no cpu_manager_state "
            "(the kubelet writes it at start): check the agent's --kubelet-root mount"
        )
        return SnapshotError(msg)
    return None
