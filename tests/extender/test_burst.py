"""A burst of 200 pods over 50 pushed nodes, scheduled through the extender over HTTP as
kube-scheduler's cycle does (filter, prioritize, bind), never over-commits a node: each
node's pods, replayed in order through a fresh ``Node``, are all admitted and fit its
allocatable CPU. Filter answers every feasible node and changes nothing; bind assumes."""

from __future__ import annotations

import math

import pytest

from cpumanager.adapters.memory_store import InMemoryStore
from cpumanager.extender.judge import pod_cpu_millis
from cpumanager.formats.manifest import pod_from_manifest
from cpumanager.manager.node import Node
from tests.extender.conftest import Extender
from tests.extender.fake_api import FakeApi, schedule
from tests.extender.nodes import make_snapshot, pod_json, snapshot_document

SHAPES = [
    {"cores_per_numa": 2},
    {"cores_per_numa": 4},
    {"cores_per_numa": 4, "numa_per_socket": 1, "sockets": 2},
    {"cores_per_numa": 6, "topology_policy": "restricted"},
    {"cores_per_numa": 3, "options": {"full-pcpus-only": "true"}},
]
SIZES = ["1", "2", "3", "4", "6", "500m"]


API = FakeApi()


@pytest.mark.extender_config(api=API)
def test_burst_never_overcommits(extender: Extender) -> None:
    API.pods.clear()
    snapshots = {}
    for index in range(50):
        name = f"node-{index:02d}"
        snapshots[name] = make_snapshot(name, **SHAPES[index % len(SHAPES)])
        status, _ = extender.call(
            "POST", f"/v1/nodes/{name}/snapshot", snapshot_document(snapshots[name])
        )
        assert status == 200
    placed: dict[str, list[dict]] = {name: [] for name in snapshots}
    unschedulable = 0
    widest = 0
    for index in range(200):
        pod = pod_json(f"burst-{index}", SIZES[(index * 7) % len(SIZES)])
        API.add(pod)
        _, before = extender.call("POST", "/filter", {"Pod": pod, "NodeNames": sorted(snapshots)})
        widest = max(widest, len(before["NodeNames"]))
        held = extender.store.assumed_count()
        outcome, where = schedule(extender, pod, sorted(snapshots))
        assert outcome != "bind-refused", where  # one scheduler, one replica: no race
        if outcome == "unschedulable":
            unschedulable += 1
            continue
        assert extender.store.assumed_count() == held + 1  # bind assumed it, filter did not
        placed[where].append(pod)
    assert widest > 1  # every feasible node is answered, not one
    assert unschedulable < 200  # the burst places pods, and those it cannot are refused
    for name, pods in placed.items():
        snapshot = snapshots[name]
        kubelet = snapshot.kubelet_config()
        topology = snapshot.topology()
        node = Node(topology=topology, kubelet=kubelet, store=InMemoryStore())
        node.start(active_pods=list)
        used = 0
        for doc in pods:
            pod = pod_from_manifest({"kind": "Pod", "apiVersion": "v1", **doc})
            result = node.admit(pod)
            assert result.admitted, (name, doc["metadata"]["uid"], result.reason, result.message)
            used += pod_cpu_millis(pod)
        allocatable = len(topology.all_cpus) * 1000 - math.ceil(
            kubelet.reserved_cpu_quantity * 1000
        )
        assert used <= allocatable, name
    assert extender.store.assumed_count() == 200 - unschedulable
    # once the burst fills the fleet, a further pod is refused everywhere with reasons
    status, result = extender.call(
        "POST", "/filter", {"Pod": pod_json("late", "64"), "NodeNames": sorted(snapshots)}
    )
    assert result["NodeNames"] == []
    assert len(result["FailedNodes"]) == 50
