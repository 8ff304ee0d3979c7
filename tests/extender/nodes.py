"""Cheap node snapshots and scheduler-shaped pods for the extender's tests and bench."""

from __future__ import annotations

from typing import Any

from cpumanager.nodeview.snapshot import ConfigView, NodeSnapshot, Source, snapshot_to_dict


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
) -> NodeSnapshot:
    """A node with the static CPU manager, the given topology manager policy, no pods."""
    values: dict[str, Any] = {
        "cpuManagerPolicy": "static",
        "reservedSystemCPUs": reserved,
        "topologyManagerPolicy": topology_policy,
    }
    if options:
        values["cpuManagerPolicyOptions"] = options
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
