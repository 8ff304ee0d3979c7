"""The verdict function: the what-if's answer with the kubelet's reason, and the score."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from cpumanager.core.cpuset import CPUSet
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


@settings(max_examples=200, deadline=None)
@given(
    free=st.sets(st.integers(0, 31), max_size=32),
    exclusive=st.sets(st.integers(0, 31), max_size=32),
    numa_per_socket=st.sampled_from([1, 2, 4]),
)
def test_score_counts_cpus_per_numa_node_as_defined(
    free: set[int], exclusive: set[int], numa_per_socket: int
) -> None:
    # The definition in the module docstring, spelled with CPU sets.
    topology = make_snapshot(
        "n", numa_per_socket=numa_per_socket, cores_per_numa=16 // numa_per_socket
    ).topology()
    free_set, held = CPUSet(free), CPUSet(exclusive)
    spanned = len(topology.numa_of(held)) if held else 1
    together = 5.0
    if free_set:
        most = max(len(free_set & topology.cpus_in_numa_nodes([n])) for n in topology.numa_ids())
        together = 5 * most / len(free_set)
    assert score(topology, free_set, held) == round(5 / max(1, spanned) + together)
