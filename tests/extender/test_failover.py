"""Two replicas, one killed in the middle of a 200-pod burst.

The scheduler drives replica A (filter, prioritize, bind) and, once A is gone, replica B.
Every node's agent pushes to every live replica after each change on its node (its watch
sees the binding; the kubelet admits the pod and writes its checkpoint: ``what_if`` over
the node's bound pods in order). A is killed right after a bind, before that node's agent
pushed. The same burst with one replica is the reference.

Measured: 0 pods the kubelet refuses (every node's pods replayed through ``Node`` in bind
order), 0 outcomes (node bound to, or unschedulable) differing from the single replica.
"""

from __future__ import annotations

import dataclasses
import urllib.error

from cpumanager.adapters.memory_store import InMemoryStore
from cpumanager.extender.server import ExtenderConfig
from cpumanager.formats.manifest import pod_from_manifest
from cpumanager.manager.node import Node
from cpumanager.nodeanswers.whatif import what_if
from cpumanager.nodeview.pods import node_pods_from_reduced
from cpumanager.nodeview.snapshot import CheckpointFile, NodeSnapshot
from tests.extender.conftest import TOKEN, FakeClock, start_extender
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
NODES = 20
PODS = 200
KILL_AT = 100
CONFIG = ExtenderConfig(token=TOKEN, stale_after=1e9)


def running(base: NodeSnapshot, docs: list[dict]) -> tuple[NodeSnapshot, int]:
    """The node after its kubelet admitted ``docs`` in order, and how many it refused."""
    manifests = []
    for doc in docs:
        item = {"apiVersion": "v1", "kind": "Pod", **doc}
        item["status"] = {
            "phase": "Running",
            "containerStatuses": [
                {
                    "name": c["name"],
                    "containerID": f"containerd://{doc['metadata']['uid']}-{c['name']}",
                    "state": "running",
                }
                for c in doc["spec"]["containers"]
            ],
        }
        manifests.append(item)
    answer = what_if(base, [pod_from_manifest(m) for m in manifests])
    kept = [m for m, v in zip(manifests, answer.verdicts, strict=True) if v.admitted]
    data = answer.report["checkpoint"].encode()
    checkpoint = CheckpointFile(
        "cpu_manager_state", "/var/lib/kubelet/cpu_manager_state", data, None
    )
    snapshot = dataclasses.replace(
        base, checkpoints={"cpu_manager_state": checkpoint}, pods=node_pods_from_reduced(kept)
    )
    return snapshot, len(manifests) - len(kept)


def burst(
    replicas: int, *, agents: bool = True
) -> tuple[list[tuple[str, str]], dict[str, list[dict]], int]:
    """Outcome per pod, the pods bound per node, and binds refused, for ``replicas``;
    without ``agents`` no node pushes after the first snapshots (the most they can lag)."""
    api = FakeApi()
    clock = FakeClock()
    started = [start_extender(CONFIG, api=api, clock=clock) for _ in range(replicas)]
    live = [ext for ext, _, _ in started]
    bases = {
        f"node-{i:02d}": make_snapshot(f"node-{i:02d}", **SHAPES[i % len(SHAPES)])
        for i in range(NODES)
    }

    def agent_push(name: str) -> None:
        snapshot, refused = running(bases[name], api.bound().get(name, []))
        assert refused == 0, name
        for ext in live:
            status, _ = ext.call("POST", f"/v1/nodes/{name}/snapshot", snapshot_document(snapshot))
            assert status == 200

    try:
        for name in bases:
            agent_push(name)
        outcomes: list[tuple[str, str]] = []
        refused_binds = 0
        for index in range(PODS):
            pod = pod_json(f"p{index}", SIZES[(index * 7) % len(SIZES)])
            api.add(pod)
            while True:
                try:
                    outcome, where = schedule(live[0], pod, sorted(bases))
                    break
                except (urllib.error.URLError, ConnectionError):
                    live.pop(0)  # the scheduler's connection fails over to the next replica
            if outcome == "bind-refused":
                refused_binds += 1
                outcome, where = "unschedulable", ""
            outcomes.append((outcome, where))
            if index == KILL_AT and replicas > 1:
                _, server, thread = started[0]
                server.should_exit = True
                thread.join(timeout=10)
            if outcome == "bound" and agents:
                agent_push(where)
        assert len(live) == 1  # the burst ended on the last replica (failed over, or alone)
        return outcomes, api.bound(), refused_binds
    finally:
        for _, server, thread in started:
            server.should_exit = True
            thread.join(timeout=10)


def test_losing_a_replica_mid_burst_changes_nothing() -> None:
    single, single_bound, _ = burst(1)
    double, double_bound, refused = burst(2)
    differing = [i for i, (a, b) in enumerate(zip(single, double, strict=True)) if a != b]
    assert differing == []
    assert refused == 0
    assert sum(1 for o, _ in double if o == "bound") > PODS // 4  # the burst places pods
    assert double_bound == single_bound
    for name, docs in double_bound.items():
        base = make_snapshot(name, **SHAPES[int(name[-2:]) % len(SHAPES)])
        node = Node(topology=base.topology(), kubelet=base.kubelet_config(), store=InMemoryStore())
        node.start(active_pods=list)
        for doc in docs:
            result = node.admit(pod_from_manifest({"kind": "Pod", "apiVersion": "v1", **doc}))
            assert result.admitted, (name, doc["metadata"]["uid"], result.reason)


def test_with_silent_agents_the_survivor_learns_the_binds_from_the_api_server() -> None:
    """No agent reports anything after the start: replica B's filter knows nothing of A's
    binds, and only its bind-time catch-up stands between it and over-commitment."""
    outcomes, bound, refused = burst(2, agents=False)
    assert sum(1 for o, _ in outcomes if o == "bound") > PODS // 4
    assert refused > 0  # B's filter was optimistic; its bind said no
    for name, docs in bound.items():
        base = make_snapshot(name, **SHAPES[int(name[-2:]) % len(SHAPES)])
        _, refusals = running(base, docs)
        assert refusals == 0, name
