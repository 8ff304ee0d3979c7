"""Generated node snapshots of mixed shapes, cheap enough to write a thousand in a test.

Shapes vary by index: 1-2 sockets, 1-2 NUMA nodes per socket, 2-16 cores per NUMA node,
SMT on or off; policies static or none, topology policies none / best-effort / restricted /
single-numa-node, some with full-pcpus-only; no pods yet (a fresh node). Every snapshot is
written by the project's own serializer, so the fleet reads what ``node snapshot`` writes.
"""

from __future__ import annotations

from pathlib import Path

from cpumanager.formats.machine_format import topology_to_dict
from cpumanager.nodeview.snapshot import ConfigView, NodeSnapshot, Source, snapshot_to_json
from cpumanager.presets import synthetic

TOPOLOGY_POLICIES = ("none", "best-effort", "restricted", "single-numa-node")
CORES = (2, 4, 8, 16)

_machines: dict[tuple[int, int, int, int], dict[str, object]] = {}


def _machine(sockets: int, numa: int, cores: int, threads: int) -> dict[str, object]:
    key = (sockets, numa, cores, threads)
    if key not in _machines:
        topology = synthetic(
            sockets=sockets, numa_per_socket=numa, cores_per_numa=cores, threads=threads
        )
        _machines[key] = topology_to_dict(topology)
    return _machines[key]


def node_snapshot(index: int) -> NodeSnapshot:
    """The index-th generated node (deterministic)."""
    sockets = 1 + index % 2
    numa = 1 + (index // 2) % 2
    cores = CORES[(index // 4) % len(CORES)]
    threads = 1 + (index // 16) % 2
    static = index % 7 != 0
    fields: dict[str, dict[str, object]] = {
        "cpuManagerPolicy": {"value": "static" if static else "none", "from": "file"},
        "topologyManagerPolicy": {
            "value": TOPOLOGY_POLICIES[(index // 3) % len(TOPOLOGY_POLICIES)],
            "from": "file",
        },
    }
    if static:
        fields["reservedSystemCPUs"] = {"value": "0", "from": "file"}
        if threads == 2 and index % 5 == 0:
            fields["cpuManagerPolicyOptions"] = {
                "value": {"full-pcpus-only": "true"},
                "from": "file",
            }
    return NodeSnapshot(
        node_name=f"node-{index:05d}",
        collected_at="2026-01-01T00:00:00Z",
        tool="test",
        root="/",
        kubelet_root="/var/lib/kubelet",
        machine=_machine(sockets, numa, cores, threads),
        config=ConfigView(fields=fields),
        checkpoints={},
        pod_resources=None,
        pods=(),
        sources=(Source("machine", "ok"),),
    )


def write_snapshots(directory: Path, count: int, *, start: int = 0) -> list[Path]:
    """Write ``count`` generated snapshots as ``node-NNNNN.json``."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(start, start + count):
        path = directory / f"node-{i:05d}.json"
        path.write_bytes(snapshot_to_json(node_snapshot(i)))
        paths.append(path)
    return paths


def guaranteed_pod_yaml(cpu: str, *, name: str = "web", memory: str = "1Gi") -> str:
    """A one-container Guaranteed pod manifest asking for ``cpu`` CPUs (the fleet tests' pod)."""
    return (
        "apiVersion: v1\nkind: Pod\n"
        f"metadata: {{name: {name}, uid: {name}-uid}}\n"
        "spec:\n  containers:\n  - name: app\n    resources:\n"
        f'      requests: {{cpu: "{cpu}", memory: {memory}}}\n'
        f'      limits: {{cpu: "{cpu}", memory: {memory}}}\n'
    )
