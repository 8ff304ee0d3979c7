"""Cheap node snapshots and scheduler-shaped pods for the extender's tests and bench.

:func:`busy_snapshot` is a node that already runs pods: random pods are admitted by the
project's own what-if on the empty node, and the snapshot records the admitted ones (as the
kubelet's pod list, with running containers) and the CPU manager checkpoint they leave.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

from cpumanager.formats.manifest import pod_from_manifest
from cpumanager.nodeanswers.whatif import what_if
from cpumanager.nodeview.pods import node_pods_from_reduced
from cpumanager.nodeview.snapshot import (
    CheckpointFile,
    ConfigView,
    NodeSnapshot,
    Source,
    snapshot_to_dict,
)


def machine(
    sockets: int,
    numa_per_socket: int,
    cores_per_numa: int,
    threads: int,
    memory_per_numa: int = 64 << 30,
) -> dict:
    """A machine file dict: CPU ids numbered thread-major (siblings are cores apart)."""
    cores = sockets * numa_per_socket * cores_per_numa
    cpus = []
    for thread in range(threads):
        for core in range(cores):
            numa = core // cores_per_numa
            cpus.append(
                {
                    "cpu": thread * cores + core,
                    "core": core,
                    "socket": numa // numa_per_socket,
                    "numa": numa,
                    "l3": numa // numa_per_socket,
                }
            )
    numa_nodes = [
        {"id": n, "memory_bytes": memory_per_numa} for n in range(sockets * numa_per_socket)
    ]
    return {"cpus": cpus, "numa_nodes": numa_nodes}


def make_snapshot(
    name: str,
    *,
    sockets: int = 1,
    numa_per_socket: int = 2,
    cores_per_numa: int = 4,
    threads: int = 2,
    reserved: str = "0",
    topology_policy: str = "single-numa-node",
    options: dict[str, str] | None = None,
    config: dict[str, Any] | None = None,
) -> NodeSnapshot:
    """A node with the static CPU manager, the given topology manager policy, no pods;
    ``config`` adds or replaces KubeletConfiguration fields."""
    values: dict[str, Any] = {
        "cpuManagerPolicy": "static",
        "reservedSystemCPUs": reserved,
        "topologyManagerPolicy": topology_policy,
    }
    if options:
        values["cpuManagerPolicyOptions"] = options
    values.update(config or {})
    fields = {k: {"value": v, "from": "file"} for k, v in values.items()}
    return NodeSnapshot(
        node_name=name,
        collected_at="2026-12-03T10:00:00Z",
        tool="test",
        root="/",
        kubelet_root="/var/lib/kubelet",
        machine=machine(sockets, numa_per_socket, cores_per_numa, threads),
        config=ConfigView(fields=fields),
        checkpoints={},
        pod_resources=None,
        pods=(),
        sources=(Source("machine", "ok"),),
    )


def snapshot_document(snapshot: NodeSnapshot) -> dict:
    return snapshot_to_dict(snapshot)


def pod_json(uid: str, cpu: str, memory: str = "1Gi", *, containers: int = 1) -> dict:
    """A v1.Pod as the scheduler sends it: Guaranteed when ``cpu`` is whole."""
    resources = {
        "requests": {"cpu": cpu, "memory": memory},
        "limits": {"cpu": cpu, "memory": memory},
    }
    return {
        "metadata": {"name": f"pod-{uid}", "namespace": "default", "uid": uid},
        "spec": {
            "containers": [
                {"name": f"c{i}", "image": "busybox", "resources": resources}
                for i in range(containers)
            ]
        },
    }


RUNNING_CPU = ("1", "1", "2", "2", "3", "4", "6", "250m", "500m", "1500m")


def running_pod(uid: str, cpu: str, memory: str, node: str, *, containers: int = 1) -> dict:
    """A reduced manifest of a Running pod (pod_json's shape with status and nodeName)."""
    doc = pod_json(uid, cpu, memory, containers=containers)
    doc["spec"]["nodeName"] = node
    doc["status"] = {
        "phase": "Running",
        "containerStatuses": [
            {
                "name": c["name"],
                "containerID": f"containerd://{uid}-{c['name']}",
                "state": "running",
            }
            for c in doc["spec"]["containers"]
        ],
    }
    return {"apiVersion": "v1", "kind": "Pod", **doc}


def busy_snapshot(name: str, rng: random.Random, *, pods: int, **shape: Any) -> NodeSnapshot:
    """``make_snapshot(name, **shape)`` running up to ``pods`` random pods (those the node
    admits), with the checkpoint their admissions wrote."""
    empty = make_snapshot(name, **shape)
    wanted = [
        running_pod(
            f"{name}-p{i}",
            rng.choice(RUNNING_CPU),
            rng.choice(("256Mi", "1Gi", "2Gi")),
            name,
            containers=rng.choice((1, 1, 1, 2)),
        )
        for i in range(pods)
    ]
    answer = what_if(empty, [pod_from_manifest(doc) for doc in wanted])
    kept = [doc for doc, v in zip(wanted, answer.verdicts, strict=True) if v.admitted]
    data = answer.report["checkpoint"].encode()
    path = "/var/lib/kubelet/cpu_manager_state"
    return replace(
        empty,
        checkpoints={"cpu_manager_state": CheckpointFile("cpu_manager_state", path, data, None)},
        pods=node_pods_from_reduced(kept),
    )
