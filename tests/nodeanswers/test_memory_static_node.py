"""`node whatif` on the Static memory-manager fixture node: the memory checkpoint is restored
(checked against the machine as the kubelet's validateState does) and drives admission.

memory-static: the kubeadm machine (64 GiB per NUMA node), reservedMemory 1Gi on NUMA 0 and
100Mi on NUMA 1; pg-0 holds 40Gi of NUMA 0 and pg-1 48Gi of NUMA 1, so NUMA 0 has 23Gi free
and NUMA 1 a little under 16Gi.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from cpumanager.checkpoint.memory.codec import attempt_memory, encode_memory, with_fresh_checksum
from cpumanager.errors import StateValidationError
from cpumanager.nodeanswers.restore import restore_node
from cpumanager.nodeanswers.whatif import what_if
from cpumanager.nodeview.snapshot import NodeSnapshot
from tests.nodeanswers.snapshots import fixture_snapshot, pod

MEMORY_FILE = "memory_manager_state"


def test_the_checkpoint_is_restored_and_matches_the_machine() -> None:
    restored = restore_node(fixture_snapshot("memory-static"))
    assert any("memory manager restored its checkpoint" in n for n in restored.notes)
    memory = restored.node.snapshot().memory
    assert memory is not None
    free = {numa: held.tables["memory"].free for numa, held in memory.nodes.items()}
    assert free == {0: (63 - 40) * 2**30, 1: 64 * 2**30 - 100 * 2**20 - 48 * 2**30}


def test_memory_no_numa_node_can_give_fails_in_allocate_not_in_the_merge() -> None:
    # 30Gi fits in neither node alone, and {0,1} is refused because both nodes already hold
    # single-node blocks: the memory manager has no hint at all, which the topology manager
    # reads as "no preference". The merge follows the CPUs to NUMA 0, and the memory
    # manager's Allocate then fails: the kubelet's UnexpectedAdmissionError, not a
    # TopologyAffinityError.
    verdict = what_if(fixture_snapshot("memory-static"), [pod("big", "1", "30Gi")]).verdicts[0]
    assert not verdict.admitted
    assert verdict.reason == "UnexpectedAdmissionError"
    assert verdict.message == (
        "Allocate failed due to [memorymanager] failed to find NUMA nodes to extend the "
        "current topology hint, which is unexpected"
    )
    assert any("no preference" in line for line in verdict.why)


def test_memory_that_fits_goes_to_the_node_with_room() -> None:
    # 20Gi fits only in NUMA 0's 23Gi: CPUs and memory are both placed there.
    answer = what_if(fixture_snapshot("memory-static"), [pod("mid", "2", "20Gi")])
    assert answer.verdicts[0].admitted
    placed = answer.report["events"][1]["containers"]["app"]
    assert placed["numa"] == [0]
    assert placed["memoryNuma"] == [0]


def test_the_same_pod_fits_once_the_databases_are_gone() -> None:
    # Without pg-0 the stale-state removal of the memory manager frees NUMA 0's 40Gi, so
    # 30Gi fits in NUMA 0 alone.
    snapshot = fixture_snapshot("memory-static")
    assert snapshot.pods is not None
    kept = tuple(p for p in snapshot.pods if p.pod.name != "pg-0")
    answer = what_if(replace(snapshot, pods=kept), [pod("big", "1", "30Gi")])
    assert answer.verdicts[0].admitted, answer.verdicts[0].why


def test_a_checkpoint_that_disagrees_with_the_machine_stops_the_kubelet() -> None:
    snapshot = fixture_snapshot("memory-static")
    raw = json.loads(snapshot.checkpoint_bytes(MEMORY_FILE) or b"")
    raw["machineState"]["0"]["memoryMap"]["memory"]["free"] -= 2**30
    raw["machineState"]["0"]["memoryMap"]["memory"]["reserved"] += 2**30
    tampered = _with_checkpoint(snapshot, _with_fresh_checksum(raw))
    with pytest.raises(StateValidationError, match="expected machine state is different"):
        restore_node(tampered)


def _with_fresh_checksum(raw: dict[str, Any]) -> bytes:
    decoded = attempt_memory(json.dumps(raw, separators=(",", ":")).encode()).checkpoint
    assert decoded is not None
    return encode_memory(with_fresh_checksum(decoded))


def _with_checkpoint(snapshot: NodeSnapshot, data: bytes) -> NodeSnapshot:
    files = dict(snapshot.checkpoints)
    files[MEMORY_FILE] = replace(files[MEMORY_FILE], raw=data)
    return replace(snapshot, checkpoints=files)
