"""The verdict function: the what-if's answer, and the CPU-headroom summary never ruling out
a node the exact check accepts."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from cpumanager.extender.judge import admits, cpu_headroom, pod_cpu_millis, score
from cpumanager.formats.manifest import pod_from_manifest
from tests.extender.nodes import make_snapshot, pod_json


def as_pod(doc: dict):
    return pod_from_manifest({"kind": "Pod", "apiVersion": "v1", **doc})


CPU = st.sampled_from(["100m", "500m", "1", "2", "3", "4", "5", "7", "8", "12"])


@settings(max_examples=40, deadline=None)
@given(
    cores=st.integers(1, 4),
    numa=st.integers(1, 2),
    threads=st.integers(1, 2),
    policy=st.sampled_from(["none", "best-effort", "restricted", "single-numa-node"]),
    earlier=st.lists(CPU, max_size=4),
    wanted=CPU,
)
def test_headroom_never_rules_out_an_admitting_node(cores, numa, threads, policy, earlier, wanted):
    snapshot = make_snapshot(
        "n", numa_per_socket=numa, cores_per_numa=cores, threads=threads, topology_policy=policy
    )
    assumed = [as_pod(pod_json(f"e{i}", cpu)) for i, cpu in enumerate(earlier)]
    pod = as_pod(pod_json("p", wanted))
    headroom = cpu_headroom(snapshot)
    verdict = admits(snapshot, pod, assumed=assumed)
    assert headroom is not None
    if pod_cpu_millis(pod) > headroom:
        assert not verdict.admitted
        assert verdict.reason  # the exact check names why


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
