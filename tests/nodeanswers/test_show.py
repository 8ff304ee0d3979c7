"""`node show` on the fixture nodes (layout in test_whatif's docstring)."""

from __future__ import annotations

from dataclasses import replace

from cpumanager.nodeanswers.show import node_picture
from cpumanager.nodeview.snapshot import ConfigView
from tests.nodeanswers.snapshots import fixture_snapshot
from tests.nodeview.fixture_nodes import NODES_DIR, fixture_answers


def test_kubeadm_holders_per_numa_node() -> None:
    picture = node_picture(fixture_snapshot("kubeadm"))
    node0, node1 = picture["numaNodes"]
    assert node0["reserved"] == "0,8"
    # The shared pool is the default set: the reserved CPUs stay in it.
    assert node0["shared"] == "0,8"
    assert node0["exclusive"] == [
        {"cpus": "1-2,9-10", "holder": "prod/db-0 postgres"},
        {"cpus": "3,11", "holder": "prod/cache-0 redis"},
    ]
    assert node1["shared"] == "4-7,12-15"
    assert node1["exclusive"] == []
    assert "default/web-7d9f8b6c5-qwz8r" in picture["sharedPoolPods"]


def test_kubeadm_largest_guaranteed_pod() -> None:
    # NUMA 0 has no allocatable CPU left; NUMA 1's 8 are free, so the managers admit 8.
    # The resource-fit predicate then limits it: allocatable CPU is 16 minus the 2
    # reservedSystemCPUs (the kubelet counts them as system-reserved) = 14000m, and the
    # active pods request 6950m, leaving 7050m: 7 CPUs fit, 8 do not.
    picture = node_picture(fixture_snapshot("kubeadm"))
    assert picture["largestGuaranteedPod"] == {"packed": 7, "singleNuma": 7}


def test_without_single_numa_policy_packed_spans_nodes_only_with_free_cpus() -> None:
    # Topology policy none: the static policy may span NUMA nodes, but only NUMA 1 has
    # free allocatable CPUs, and the predicate leaves 7050m (see above): still 7.
    snapshot = fixture_snapshot("kubeadm")
    assert snapshot.config is not None
    fields = dict(snapshot.config.fields)
    fields["topologyManagerPolicy"] = {"value": "none", "from": "file"}
    picture = node_picture(replace(snapshot, config=ConfigView(fields=fields)))
    assert picture["largestGuaranteedPod"] == {"packed": 7, "singleNuma": 7}


def test_gpu_devices_and_hugepages() -> None:
    snapshot = replace(fixture_snapshot("gpu"), pod_resources=fixture_answers(NODES_DIR / "gpu"))
    picture = node_picture(snapshot)
    node0, node1 = picture["numaNodes"]
    assert node0["devices"]["nvidia.com/gpu"] == [
        {"id": "GPU-0", "holder": "ml/trainer-a train"},
        {"id": "GPU-1", "holder": "ml/trainer-a train"},
    ]
    assert node1["devices"]["nvidia.com/gpu"][1] == {"id": "GPU-3", "holder": ""}
    assert node0["memory"]["hugepages-2Mi"]["total"] == 2 * 2**30
    assert node0["memory"]["memory"]["allocatable"] == 62 * 2**30
    # trainer-b holds 4,12 on NUMA 1; 5-7,13-15 are free: 6 CPUs on one node.
    assert picture["largestGuaranteedPod"] == {"packed": 6, "singleNuma": 6}
