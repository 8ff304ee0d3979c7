"""A restarting kubelet on each fixture node's snapshot: the fixtures say what they claim.

The kubelet's CPU manager restores cpu_manager_state at start (state_file.go tryRestoreState)
and refuses a policy change (`configured policy "X" differs from state checkpoint policy
"Y"`) and a corrupt file (checksum mismatch); a consistent node starts and keeps its pods'
exclusive CPUs.
"""

from __future__ import annotations

import pytest

from cpumanager.adapters.memory_store import InMemoryStore
from cpumanager.adapters.node_collect import CollectOptions, collect_snapshot
from cpumanager.core.cpuset import CPUSet
from cpumanager.errors import CheckpointCorruptError, StateValidationError
from cpumanager.manager.node import Node
from cpumanager.nodeview.snapshot import NodeSnapshot
from tests.nodeview.fixture_nodes import NODES_DIR


def snapshot_of(name: str) -> NodeSnapshot:
    node = NODES_DIR / name
    return collect_snapshot(
        CollectOptions(
            root=node,
            kubelet_root=node / "var/lib/kubelet",
            pods=node / "pods.json",
            socket=node / "absent.sock",
        )
    )


def restart(snap: NodeSnapshot) -> Node:
    node = Node(
        topology=snap.topology(),
        kubelet=snap.kubelet_config(),
        store=InMemoryStore(snap.checkpoint_bytes("cpu_manager_state")),
    )
    node.start(active_pods=snap.active_pods, running_containers=snap.running_containers())
    return node


@pytest.mark.parametrize("name", ["kubeadm", "offline-cpus", "gpu", "no-socket"])
def test_consistent_nodes_restart_and_keep_their_cpus(name: str) -> None:
    snap = snapshot_of(name)
    node = restart(snap)
    decoded = snap.checkpoints["cpu_manager_state"].decoded
    assert decoded is not None
    kept = node.snapshot().cpu
    for pod_uid, containers in (decoded["entries"] or {}).items():  # type: ignore[union-attr]
        for container, cpus in containers.items():
            assert kept.cpuset_of(pod_uid, container) == CPUSet.parse(cpus)


def test_policy_switched_without_drain_is_refused() -> None:
    with pytest.raises(StateValidationError) as caught:
        restart(snapshot_of("policy-switched"))
    assert 'configured policy "none" differs from state checkpoint policy "static"' in (
        caught.value.message
    )


def test_corrupt_checkpoint_is_refused() -> None:
    with pytest.raises(CheckpointCorruptError):
        restart(snapshot_of("corrupt-checkpoint"))
