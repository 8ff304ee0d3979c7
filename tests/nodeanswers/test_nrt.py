"""`node nrt` on the fixture nodes: the NodeResourceTopology the managers' state implies.

kubeadm fixture (see test_whatif): NUMA 0 = 0-3,8-11 with reserved 0,8 and postgres
(1-2,9-10) and redis (3,11) holding the other six; NUMA 1 = 4-7,12-15 all free. The
Burstable and BestEffort pods and the 500m exporter container (a fractional-CPU container
of a Guaranteed pod) run in the shared pool and are not charged to any zone.
"""

from __future__ import annotations

from dataclasses import replace

from cpumanager.core.cpuset import CPUSet
from cpumanager.nodeanswers.nrt import node_resource_topology, whole_free_cores
from cpumanager.nodeview.snapshot import ConfigView
from tests.nodeanswers.snapshots import fixture_snapshot
from tests.nodeview.fixture_nodes import NODES_DIR, fixture_answers

GiB = 2**30


def _zone(document: dict, name: str) -> dict[str, dict[str, str]]:  # type: ignore[type-arg]
    zone = next(z for z in document["zones"] if z["name"] == name)
    return {r["name"]: r for r in zone["resources"]}


def test_kubeadm_zones_cpu_by_id() -> None:
    document = node_resource_topology(fixture_snapshot("kubeadm"))
    assert document["apiVersion"] == "topology.node.k8s.io/v1alpha2"
    assert document["kind"] == "NodeResourceTopology"
    assert document["metadata"] == {"name": "kubeadm-node-1"}
    node0, node1 = _zone(document, "node-0"), _zone(document, "node-1")
    assert node0["cpu"] == {"name": "cpu", "capacity": "8", "allocatable": "6", "available": "0"}
    assert node1["cpu"] == {"name": "cpu", "capacity": "8", "allocatable": "8", "available": "8"}
    # No memory manager: nothing pinned per NUMA node.
    assert node0["memory"]["available"] == str(64 * GiB)


def test_costs_come_from_the_distance_matrix() -> None:
    document = node_resource_topology(fixture_snapshot("kubeadm"))
    zone = document["zones"][0]
    assert zone["type"] == "Node"
    assert zone["costs"] == [{"name": "node-0", "value": 10}, {"name": "node-1", "value": 21}]


def test_attributes_carry_the_topology_manager_settings() -> None:
    document = node_resource_topology(fixture_snapshot("kubeadm"))
    assert {a["name"]: a["value"] for a in document["attributes"]} == {
        "topologyManagerPolicy": "single-numa-node",
        "topologyManagerScope": "container",
        "topologyManagerMaxNUMANodes": "8",
    }


def test_gpu_devices_and_hugepages_per_zone() -> None:
    # GPU-0,1 on NUMA 0 (both held by trainer-a), GPU-2,3 on NUMA 1 (GPU-2 held by
    # trainer-b); 2 GiB of 2 MiB pages per node, which regular memory does not include.
    snapshot = replace(fixture_snapshot("gpu"), pod_resources=fixture_answers(NODES_DIR / "gpu"))
    document = node_resource_topology(snapshot)
    node0, node1 = _zone(document, "node-0"), _zone(document, "node-1")
    assert node0["nvidia.com/gpu"]["available"] == "0"
    assert node1["nvidia.com/gpu"] == {
        "name": "nvidia.com/gpu", "capacity": "2", "allocatable": "2", "available": "1",
    }  # fmt: skip
    assert node0["hugepages-2Mi"]["capacity"] == str(2 * GiB)
    assert node0["memory"]["allocatable"] == str(64 * GiB - 2 * GiB)


def test_full_pcpus_only_counts_whole_free_cores() -> None:
    topology = fixture_snapshot("kubeadm").topology()
    # 4 and 12 are siblings (core 4); 5 is free but its sibling 13 is not.
    assert whole_free_cores(topology, CPUSet.parse("4-5,12")) == CPUSet.parse("4,12")


def test_full_pcpus_only_option_reaches_the_zone() -> None:
    snapshot = fixture_snapshot("kubeadm")
    assert snapshot.config is not None
    fields = dict(snapshot.config.fields)
    fields["cpuManagerPolicyOptions"] = {"value": {"full-pcpus-only": "true"}, "from": "file"}
    changed = replace(snapshot, config=ConfigView(fields=fields))
    document = node_resource_topology(changed)
    # NUMA 1's cores are all free: whole cores leave the count at 8.
    assert _zone(document, "node-1")["cpu"]["available"] == "8"
