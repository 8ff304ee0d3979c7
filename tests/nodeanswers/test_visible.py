"""A snapshot that could not read the kubelet's checkpoints stands for no state
(``nodeanswers/visible.py``): ``node nrt`` publishes no object from it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from cpumanager.errors import SnapshotError
from cpumanager.nodeanswers.nrt import node_resource_topology
from cpumanager.nodeanswers.visible import unseen
from cpumanager.nodeview.snapshot import Source
from tests.nodeanswers.snapshots import fixture_snapshot


def _unreadable(kind: str):
    """The kubeadm fixture as an agent without read access to ``kind`` collects it."""
    snapshot = fixture_snapshot("kubeadm")
    sources = tuple(
        Source(s.name, "unreadable", s.path, "Permission denied") if s.name == kind else s
        for s in snapshot.sources
    )
    checkpoints = {k: v for k, v in snapshot.checkpoints.items() if k != kind}
    return replace(snapshot, sources=sources, checkpoints=checkpoints)


@pytest.mark.parametrize(
    "kind", ["cpu_manager_state", "memory_manager_state", "kubelet_internal_checkpoint"]
)
def test_no_object_from_a_node_whose_checkpoint_could_not_be_read(kind: str) -> None:
    # Read as a fresh node, NUMA 0 would offer 6 CPUs that its pods hold.
    snapshot = _unreadable(kind)
    assert unseen(snapshot) is not None
    with pytest.raises(SnapshotError, match=f"could not read {kind}"):
        node_resource_topology(snapshot)


def test_a_readable_node_is_seen() -> None:
    snapshot = fixture_snapshot("kubeadm")
    assert unseen(snapshot) is None
    assert node_resource_topology(snapshot)["zones"]
