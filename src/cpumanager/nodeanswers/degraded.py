"""What is known of a node the kubelet would not start on (pure).

``node show``, ``nrt`` and ``whatif`` restore the node as a restarting kubelet would; on the
nodes an operator debugs (a corrupt checkpoint, a switched policy, a configuration the
kubelet refuses) that restore refuses, as the kubelet does. This module answers anyway from
what the snapshot holds without a restore: the machine, the configuration as written, the
CPU manager checkpoint as decoded from its raw bytes (who holds which CPUs *per the file*,
checksum or not) and the pods, with the kubelet's refusal and every checkpoint problem
(e.g. the checksum detail) kept for the banner.

The answer has ``node_picture``'s shape (``show.py``) with ``largestGuaranteedPod`` null
(nothing is admitted on a node whose kubelet is down) and a ``degraded`` object:
``{"refusal": ..., "problems": [...], "source": ...}``.
"""

from __future__ import annotations

from typing import Any

from cpumanager.core.cpuset import CPUSet
from cpumanager.errors import CpuManagerError
from cpumanager.formats.kubelet_config import KubeletConfig
from cpumanager.nodeanswers.restore import CPU_FILE
from cpumanager.nodeanswers.show import managers
from cpumanager.nodeview.snapshot import NodeSnapshot

__all__ = [
    "DEGRADED_SOURCE",
    "checkpoint_problems",
    "degraded_nrt",
    "degraded_picture",
    "kubelet_refusal",
    "raw_cpu_state",
]

DEGRADED_SOURCE = "the raw checkpoint files and the configuration as written (not restored)"


def checkpoint_problems(snapshot: NodeSnapshot) -> list[str]:
    """``kind: problem`` for every checkpoint file that does not decode or verify."""
    return [
        f"{kind}: {entry.problem}"
        for kind, entry in sorted(snapshot.checkpoints.items())
        if entry.problem
    ]


def kubelet_refusal(snapshot: NodeSnapshot, fallback: str) -> str:
    """The error the kubelet would stop with on this node, in its words (``preflight``'s
    refusal with the node's own configuration); ``fallback`` when that finds none (e.g. a
    release-specific refusal) or the configuration itself is refused."""
    from cpumanager.nodeanswers.preflight import preflight

    try:
        answer = preflight(snapshot, snapshot.kubelet_config())
    except CpuManagerError:
        return fallback
    return fallback if answer.safe or not answer.refusal else answer.refusal


def _config(snapshot: NodeSnapshot, notes: list[str]) -> KubeletConfig:
    """The configuration as written; the defaults when even that does not parse."""
    if snapshot.config is None:
        return KubeletConfig()
    try:
        return KubeletConfig.from_mapping(snapshot.config.values())
    except CpuManagerError as err:
        notes.append(f"the configuration does not parse ({err.message}): defaults shown")
        return KubeletConfig()


def _cpuset(text: object) -> CPUSet | None:
    if not isinstance(text, str):
        return None
    try:
        return CPUSet.parse(text)
    except CpuManagerError:
        return None


def raw_cpu_state(
    snapshot: NodeSnapshot,
) -> tuple[str, CPUSet | None, dict[str, dict[str, CPUSet]]]:
    """The CPU manager checkpoint as its bytes say: (policy name, default set or None,
    pod uid -> container -> CPUs). Unparsable entries are left out."""
    entry = snapshot.checkpoints.get(CPU_FILE)
    decoded = entry.decoded if entry is not None else None
    if decoded is None:
        return "", None, {}
    policy = decoded.get("policyName")
    entries = decoded.get("entries")
    held: dict[str, dict[str, CPUSet]] = {}
    if isinstance(entries, dict):
        for uid, containers in entries.items():
            if not isinstance(containers, dict):
                continue
            for name, text in containers.items():
                cpus = _cpuset(text)
                if cpus is not None:
                    held.setdefault(str(uid), {})[str(name)] = cpus
    return (
        policy if isinstance(policy, str) else "",
        _cpuset(decoded.get("defaultCpuSet")),
        held,
    )


def degraded_picture(snapshot: NodeSnapshot, refusal: str) -> dict[str, Any]:
    """``node show``'s values from the raw files, under the kubelet's ``refusal``."""
    topology = snapshot.topology()
    notes: list[str] = []
    kubelet = _config(snapshot, notes)
    policy, default, held = raw_cpu_state(snapshot)
    names = {str(p.pod.uid): p.pod.display_name for p in snapshot.pods or ()}
    reserved = kubelet.reserved_cpus or CPUSet()
    assigned = CPUSet()
    holders: list[tuple[CPUSet, str]] = []
    for uid, containers in held.items():
        for name, cpus in containers.items():
            holders.append((cpus, f"{names.get(uid, uid)} {name}"))
            assigned = assigned | cpus
    holders.sort(key=lambda item: (min(item[0]) if item[0] else -1, item[1]))
    if default is not None:
        shared = default
    elif kubelet.cpu_manager_policy == "static":
        shared = topology.all_cpus - assigned
    else:
        shared = topology.all_cpus
    if policy and policy != kubelet.cpu_manager_policy:
        notes.append(
            f"the checkpoint was written under policy {policy!r}; the configuration says "
            f"{kubelet.cpu_manager_policy!r}"
        )
    if snapshot.checkpoint_bytes(CPU_FILE) is None:
        notes.append("the CPU manager has no checkpoint: no CPU is held exclusively")
    nodes = []
    for node_id in topology.numa_ids():
        cpus = topology.cpus_in_numa_nodes([node_id])
        size = topology.numa_node(node_id).memory_bytes or 0
        pools = snapshot.hugepages.get(node_id, {})
        regular = max(0, size - sum(pools.values()))
        memory: dict[str, Any] = {
            "memory": {"total": size, "allocatable": regular, "free": regular}
        }
        for pool, total in sorted(pools.items()):
            memory[pool] = {"total": total, "allocatable": total, "free": total}
        nodes.append(
            {
                "id": node_id,
                "sockets": list(topology.sockets_in_numa_nodes([node_id])),
                "cpus": str(cpus),
                "reserved": str(cpus & reserved),
                "shared": str(cpus & shared),
                "exclusive": [
                    {"cpus": str(c & cpus), "holder": who} for c, who in holders if c & cpus
                ],
                "memory": memory,
                "devices": {},
            }
        )
    exclusive_uids = set(held)
    shared_pods = [
        p.pod.display_name
        for p in snapshot.pods or ()
        if not p.terminal and str(p.pod.uid) not in exclusive_uids
    ]
    return {
        "node": snapshot.node_name,
        **managers(kubelet),
        "reserved": str(reserved),
        "shared": str(shared),
        "sharedPoolPods": sorted(shared_pods),
        "numaNodes": nodes,
        "largestGuaranteedPod": None,
        "notes": notes,
        "degraded": {
            "refusal": refusal,
            "problems": checkpoint_problems(snapshot),
            "source": DEGRADED_SOURCE,
        },
    }


def degraded_nrt(snapshot: NodeSnapshot, picture: dict[str, Any]) -> dict[str, Any]:
    """``node nrt``'s object from a degraded picture: capacity and allocatable as the
    machine and configuration say; available CPUs leave out those the raw checkpoint holds
    (the kubelet is down, so nothing is handed out until it starts). The refusal is kept in
    the ``cpumanager.io/degraded`` attribute."""
    from cpumanager.nodeanswers.nrt import API_VERSION

    topology = snapshot.topology()
    zones = []
    for entry in picture["numaNodes"]:
        cpus = CPUSet.parse(entry["cpus"])
        allocatable = cpus - CPUSet.parse(entry["reserved"])
        held = CPUSet()
        for item in entry["exclusive"]:
            held = held | CPUSet.parse(item["cpus"])
        resources = []
        if cpus:
            resources.append(_resource("cpu", len(cpus), len(allocatable), len(allocatable - held)))
        for name, table in entry["memory"].items():
            resources.append(_resource(name, table["total"], table["allocatable"], table["free"]))
        node_id = entry["id"]
        zone: dict[str, Any] = {"name": f"node-{node_id}", "type": "Node"}
        costs = [
            {"name": f"node-{other}", "value": distance}
            for other in topology.numa_ids()
            if (distance := topology.distance(node_id, other)) is not None
        ]
        if costs:
            zone["costs"] = costs
        zone["resources"] = sorted(resources, key=lambda r: str(r["name"]))
        zones.append(zone)
    return {
        "apiVersion": API_VERSION,
        "kind": "NodeResourceTopology",
        "metadata": {"name": snapshot.node_name},
        "attributes": [
            {"name": "topologyManagerPolicy", "value": picture["topologyManagerPolicy"]},
            {"name": "topologyManagerScope", "value": picture["topologyManagerScope"]},
            {"name": "cpumanager.io/degraded", "value": picture["degraded"]["refusal"]},
        ],
        "zones": zones,
    }


def _resource(name: str, capacity: int, allocatable: int, available: int) -> dict[str, Any]:
    return {
        "name": name,
        "capacity": str(capacity),
        "allocatable": str(allocatable),
        "available": str(max(0, available)),
    }
