"""The verdict function: the what-if's answer with the kubelet's reason, and the score."""

from __future__ import annotations

from cpumanager.extender.judge import admits, score
from cpumanager.formats.manifest import pod_from_manifest
from tests.extender.nodes import make_snapshot, pod_json


def as_pod(doc: dict):
    return pod_from_manifest({"kind": "Pod", "apiVersion": "v1", **doc})


def test_rejections_carry_the_kubelets_reason_and_why() -> None:
    snapshot = make_snapshot("n", cores_per_numa=2)
    verdict = admits(snapshot, as_pod(pod_json("p", "6")))
    assert not verdict.admitted
    assert verdict.reason == "TopologyAffinityError"
    assert verdict.message == "Resources cannot be allocated with Topology locality"
    assert "single-numa-node" in verdict.explanation()


def test_a_node_the_kubelet_would_not_start_on_is_unresolvable() -> None:
    from dataclasses import replace

    from cpumanager.nodeview.snapshot import CheckpointFile

    snapshot = make_snapshot("n")
    broken = replace(
        snapshot,
        checkpoints={
            "cpu_manager_state": CheckpointFile("cpu_manager_state", "/x", b"{garbage", None)
        },
    )
    verdict = admits(broken, as_pod(pod_json("p", "1")))
    assert not verdict.admitted
    assert verdict.unresolvable


def test_score_prefers_aligned_pods_and_free_cpus_kept_together() -> None:
    topology = make_snapshot("n", cores_per_numa=4).topology()
    from cpumanager.core.cpuset import CPUSet

    numa1 = topology.cpus_in_numa_nodes([1])
    assert score(topology, numa1, CPUSet.parse("0-1")) == 10
    assert score(topology, numa1, CPUSet.parse("0,4")) < 10
    split = CPUSet.parse("1,4")
    assert score(topology, split, CPUSet()) < score(topology, numa1, CPUSet())
