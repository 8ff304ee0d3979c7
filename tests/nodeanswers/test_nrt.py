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
from cpumanager.nodeview.snapshot import ConfigView, NodeSnapshot
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
    # No memory manager: the kubelet does not align memory, so every zone offers the
    # node's allocatable memory (128 GiB less the 100Mi hard eviction threshold).
    node_memory = str(128 * GiB - 100 * 2**20)
    for zone in (node0, node1):
        assert zone["memory"] == {
            "name": "memory", "capacity": str(128 * GiB),
            "allocatable": node_memory, "available": node_memory,
        }  # fmt: skip


def test_costs_come_from_the_distance_matrix() -> None:
    document = node_resource_topology(fixture_snapshot("kubeadm"))
    zone = document["zones"][0]
    assert zone["type"] == "Node"
    assert zone["costs"] == [{"name": "node-0", "value": 10}, {"name": "node-1", "value": 21}]


def test_attributes_carry_the_managers_settings_and_the_fingerprint() -> None:
    document = node_resource_topology(fixture_snapshot("kubeadm"))
    assert {a["name"]: a["value"] for a in document["attributes"]} == {
        "topologyManagerPolicy": "single-numa-node",
        "topologyManagerScope": "container",
        "topologyManagerMaxNUMANodes": "8",
        "cpuManagerPolicy": "static",
        "memoryManagerPolicy": "None",
        # The podfingerprint library's answer for the fixture's seven pods
        # (tests/data/podfingerprint_vectors.json, "kubeadm-fixture"): none is Pending.
        "nodeTopologyPodsFingerprint": "pfp0v001e25c1a9d8daf1422",
        "nodeTopologyPodsFingerprintMethod": "all",
    }


def test_gpu_devices_and_hugepages_per_zone() -> None:
    # GPU-0,1 on NUMA 0 (both held by trainer-a), GPU-2,3 on NUMA 1 (GPU-2 held by
    # trainer-b); 2 GiB of 2 MiB pages per NUMA node. No memory manager: every zone
    # offers the node's pools (4 GiB of pages) and its memory less them.
    snapshot = replace(fixture_snapshot("gpu"), pod_resources=fixture_answers(NODES_DIR / "gpu"))
    document = node_resource_topology(snapshot)
    node0, node1 = _zone(document, "node-0"), _zone(document, "node-1")
    assert node0["nvidia.com/gpu"]["available"] == "0"
    assert node1["nvidia.com/gpu"] == {
        "name": "nvidia.com/gpu", "capacity": "2", "allocatable": "2", "available": "1",
    }  # fmt: skip
    assert node0["hugepages-2Mi"]["available"] == str(4 * GiB)
    assert node0["memory"]["allocatable"] == str(128 * GiB - 4 * GiB - 100 * 2**20)


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


def _with_fields(snapshot: NodeSnapshot, **values: object) -> NodeSnapshot:
    assert snapshot.config is not None
    fields = dict(snapshot.config.fields)
    for name, value in values.items():
        fields[name] = {"value": value, "from": "file"}
    return replace(snapshot, config=ConfigView(fields=fields))


def test_cpu_manager_none_offers_the_node_allocatable_cpu_in_every_zone() -> None:
    # The kubelet does not align CPUs under "none": no zone may limit a CPU request more
    # than the node does (16 CPUs less the 2 reserved by id leave 14 allocatable).
    snapshot = _with_fields(fixture_snapshot("kubeadm"), cpuManagerPolicy="none")
    checkpoints = {k: v for k, v in snapshot.checkpoints.items() if k != "cpu_manager_state"}
    snapshot = replace(snapshot, checkpoints=checkpoints)
    document = node_resource_topology(snapshot)
    for name in ("node-0", "node-1"):
        assert _zone(document, name)["cpu"] == {
            "name": "cpu", "capacity": "16", "allocatable": "14", "available": "14",
        }  # fmt: skip
    attributes = {a["name"]: a["value"] for a in document["attributes"]}
    assert attributes["cpuManagerPolicy"] == "none"


def test_an_80_gib_pod_fits_a_zone_when_memory_is_not_aligned() -> None:
    # The case: 64 GiB per NUMA node, a 2-CPU / 80 GiB Guaranteed pod that the
    # kubelet admits (memory manager None): a zone must offer at least 80 GiB.
    document = node_resource_topology(fixture_snapshot("kubeadm"))
    node1 = _zone(document, "node-1")
    assert int(node1["memory"]["available"]) >= 80 * GiB
    assert int(node1["cpu"]["available"]) >= 2


def test_memory_static_publishes_the_managers_tables() -> None:
    document = node_resource_topology(fixture_snapshot("memory-static"))
    zones = [_zone(document, z["name"]) for z in document["zones"]]
    # Per-NUMA amounts: no zone offers more memory than its own NUMA node holds.
    for zone in zones:
        assert int(zone["memory"]["capacity"]) <= 64 * GiB
        assert int(zone["memory"]["available"]) <= int(zone["memory"]["allocatable"])


def test_devices_without_a_podresources_answer() -> None:
    # No GetAllocatableResources: GPU-0,1 and GPU-2 are placed by their checkpoint
    # entries; GPU-3 is registered but unallocated, so only device_numa (sysfs for
    # PCI-addressed devices) can place it.
    snapshot = replace(fixture_snapshot("gpu"), pod_resources=None)
    document = node_resource_topology(snapshot)
    assert _zone(document, "node-0")["nvidia.com/gpu"]["capacity"] == "2"
    assert _zone(document, "node-1")["nvidia.com/gpu"]["capacity"] == "1"
    placed = node_resource_topology(snapshot, device_numa={"GPU-3": 1})
    assert _zone(placed, "node-1")["nvidia.com/gpu"] == {
        "name": "nvidia.com/gpu", "capacity": "2", "allocatable": "2", "available": "1",
    }  # fmt: skip


def test_exclusive_method_fingerprints_fewer_pods() -> None:
    snapshot = fixture_snapshot("kubeadm")
    every = node_resource_topology(snapshot)
    exclusive = node_resource_topology(snapshot, method="with-exclusive-resources")
    shared = node_resource_topology(snapshot, informer="shared")
    values = [
        {a["name"]: a["value"] for a in d["attributes"]}["nodeTopologyPodsFingerprint"]
        for d in (every, exclusive, shared)
    ]
    assert len(set(values)) == 3
    method = {a["name"]: a["value"] for a in exclusive["attributes"]}
    assert method["nodeTopologyPodsFingerprintMethod"] == "with-exclusive-resources"


def test_no_pod_list_no_fingerprint() -> None:
    document = node_resource_topology(replace(fixture_snapshot("kubeadm"), pods=None))
    names = {a["name"] for a in document["attributes"]}
    assert "nodeTopologyPodsFingerprint" not in names
