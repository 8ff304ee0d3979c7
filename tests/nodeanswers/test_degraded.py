"""What is known of a node the kubelet would not start on, from its raw files."""

from __future__ import annotations

from cpumanager.nodeanswers.degraded import (
    checkpoint_problems,
    degraded_nrt,
    degraded_picture,
    kubelet_refusal,
    raw_cpu_state,
)
from tests.nodeanswers.snapshots import fixture_snapshot


def test_corrupt_checkpoint_is_read_raw_with_its_checksum_detail() -> None:
    snapshot = fixture_snapshot("corrupt-checkpoint")
    policy, default, held = raw_cpu_state(snapshot)
    assert policy == "static"
    assert str(default) == "0,4-8,12-15"
    assert {name: str(cpus) for c in held.values() for name, cpus in c.items()} == {
        "postgres": "1-2,9-10",
        "redis": "3,11",
    }
    problems = checkpoint_problems(snapshot)
    assert problems == [
        "cpu_manager_state: checksum mismatch (stored 568600742, computed 568600743): "
        "the kubelet refuses this file"
    ]
    refusal = kubelet_refusal(snapshot, "fallback")
    assert refusal.startswith("start cpu manager error: could not restore state from checkpoint")
    assert "checkpoint is corrupted" in refusal


def test_picture_has_show_shape_without_a_largest_pod() -> None:
    snapshot = fixture_snapshot("policy-switched")
    picture = degraded_picture(snapshot, "the refusal")
    assert picture["largestGuaranteedPod"] is None
    assert picture["degraded"]["refusal"] == "the refusal"
    assert picture["cpuManagerPolicy"] == "none"
    assert any("written under policy 'static'" in note for note in picture["notes"])
    node0 = picture["numaNodes"][0]
    assert [e["holder"] for e in node0["exclusive"]] == ["prod/db-0 postgres", "prod/cache-0 redis"]
    # the holders' pods are not in the shared pool list; the others are
    assert "prod/db-0" not in picture["sharedPoolPods"]
    assert picture["sharedPoolPods"]


def test_nrt_counts_raw_holders_out_of_available() -> None:
    snapshot = fixture_snapshot("corrupt-checkpoint")
    document = degraded_nrt(snapshot, degraded_picture(snapshot, "r"))
    cpu = {z["name"]: r for z in document["zones"] for r in z["resources"] if r["name"] == "cpu"}
    assert (cpu["node-0"]["capacity"], cpu["node-0"]["allocatable"]) == ("8", "6")
    assert cpu["node-0"]["available"] == "0"
    assert cpu["node-1"]["available"] == "8"
    assert {"name": "cpumanager.io/degraded", "value": "r"} in document["attributes"]


def test_a_healthy_node_has_no_refusal() -> None:
    snapshot = fixture_snapshot("kubeadm")
    assert checkpoint_problems(snapshot) == []
    assert kubelet_refusal(snapshot, "fallback") == "fallback"
