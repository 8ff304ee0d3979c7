"""``node show``: who holds what on this node, per socket and NUMA node (pure).

From the restored managers (``restore.py``): per NUMA node its reserved, shared and
exclusive CPUs with the containers that hold them, its memory and hugepages (pinned by
the memory manager under its Static policy), its devices and their holders. Then the
largest Guaranteed pod that would still be admitted, found by trying admissions on the
restored node (each trial undone by removing the pod, as stale-state removal would):

* ``packed``: the largest one-container pod the node's own policies admit (managers'
  admit handler, then the resource-fit predicate);
* ``singleNuma``: the largest such pod whose CPUs all land on one NUMA node.

Admission is monotone in the CPU count here (a pod of N CPUs that fits means N-1 fits,
and under ``full-pcpus-only`` the same holds per whole core), so a binary search finds
each answer in a logarithmic number of trials. A trial pod asks for 1 MiB of memory.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

from cpumanager.core.allocation.options import StaticPolicyOptions
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.ids import ContainerName, PodUID
from cpumanager.core.workload import Container, Pod
from cpumanager.formats.kubelet_config import KubeletConfig
from cpumanager.nodeanswers.fit import Allocatable, node_allocatable, resource_fit
from cpumanager.nodeanswers.restore import Restored, restore_node
from cpumanager.nodeview.snapshot import NodeSnapshot

__all__ = ["largest_pods", "managers", "node_picture"]


def managers(kubelet: KubeletConfig) -> dict[str, Any]:
    """The resource managers' policies as the node picture names them (whole or degraded)."""
    return {
        "cpuManagerPolicy": kubelet.cpu_manager_policy,
        "cpuManagerPolicyOptions": dict(kubelet.cpu_manager_policy_options),
        "topologyManagerPolicy": kubelet.topology_manager_policy,
        "topologyManagerScope": kubelet.topology_manager_scope,
        "memoryManagerPolicy": kubelet.memory_manager_policy,
    }

_TRIAL_UID = PodUID("cpumanager-show-trial")
_TRIAL_MEMORY = Fraction(2**20)


def _trial_pod(cpus: int) -> Pod:
    amounts = {"cpu": Fraction(cpus), "memory": _TRIAL_MEMORY}
    container = Container(ContainerName("trial"), requests=amounts, limits=amounts)
    return Pod(_TRIAL_UID, "largest-guaranteed", "cpumanager", (), (container,))


def _try(restored: Restored, allocatable: Allocatable, cpus: int) -> CPUSet | None:
    """The CPUs a pod of ``cpus`` would get, or None when it is not admitted; undone."""
    pod = _trial_pod(cpus)
    node = restored.node
    result = node.admit(pod)
    placed: CPUSet | None = None
    if result.admitted and not resource_fit(pod, restored.active, allocatable):
        placed = node.placement(pod, pod.containers[0]).cpus
    node.remove_pod(pod.uid)
    return placed


def _largest(low: int, high: int, fits: Callable[[int], bool]) -> int:
    """The largest n in [low, high] with fits(n), assuming fits is monotone; 0 if none."""
    best = 0
    while low <= high:
        mid = (low + high) // 2
        if fits(mid):
            best, low = mid, mid + 1
        else:
            high = mid - 1
    return best


def largest_pods(restored: Restored, allocatable: Allocatable) -> dict[str, int]:
    """``{"packed": N, "singleNuma": M}``: the largest Guaranteed pods still admitted."""
    if restored.kubelet.cpu_manager_policy != "static":
        return {"packed": 0, "singleNuma": 0}
    topology = restored.topology
    options = StaticPolicyOptions.parse(
        restored.kubelet.cpu_manager_policy_options, alpha_enabled=True, beta_enabled=True
    )
    step = topology.cpus_per_core if options.full_pcpus_only else 1
    free = len(restored.node.snapshot().cpu.default_cpuset)
    top = free // step

    def packed(units: int) -> bool:
        return _try(restored, allocatable, units * step) is not None

    def single(units: int) -> bool:
        placed = _try(restored, allocatable, units * step)
        return placed is not None and len(topology.numa_of(placed)) == 1

    best_packed = _largest(1, top, packed)
    per_node = max((len(topology.cpus_in_numa_nodes([n])) for n in topology.numa_ids()), default=0)
    best_single = _largest(1, min(best_packed, per_node // step), single)
    return {"packed": best_packed * step, "singleNuma": best_single * step}


def _holders(restored: Restored, names: dict[str, str]) -> list[tuple[CPUSet, str]]:
    state = restored.node.snapshot().cpu
    held = []
    for uid, containers in state.assignments.items():
        for name, cpus in containers.items():
            held.append((cpus, f"{names.get(str(uid), str(uid))} {name}"))
    return sorted(held, key=lambda item: (min(item[0]) if item[0] else -1, item[1]))


def node_picture(snapshot: NodeSnapshot) -> dict[str, Any]:
    """Everything ``node show`` prints, as JSON values."""
    restored = restore_node(snapshot)
    topology = restored.topology
    kubelet = restored.kubelet
    state = restored.node.snapshot()
    names = {str(p.pod.uid): p.pod.display_name for p in snapshot.pods or ()}
    reserved = kubelet.reserved_cpus or CPUSet()
    if kubelet.cpu_manager_policy == "static" and not reserved and kubelet.num_reserved_cpus:
        reserved = topology.all_cpus - state.cpu.default_cpuset - state.cpu.assigned_cpus()
    shared = (
        state.cpu.default_cpuset if kubelet.cpu_manager_policy == "static" else topology.all_cpus
    )
    holders = _holders(restored, names)
    nodes = []
    for node_id in topology.numa_ids():
        cpus = topology.cpus_in_numa_nodes([node_id])
        entry: dict[str, Any] = {
            "id": node_id,
            "sockets": list(topology.sockets_in_numa_nodes([node_id])),
            "cpus": str(cpus),
            "reserved": str(cpus & reserved),
            "shared": str(cpus & shared),
            "exclusive": [
                {"cpus": str(held & cpus), "holder": who} for held, who in holders if held & cpus
            ],
            "memory": _memory(snapshot, restored, node_id),
            "devices": _devices(restored, names, node_id),
        }
        nodes.append(entry)
    allocatable = node_allocatable(
        topology, kubelet, hugepages=snapshot.hugepages, devices=state.devices
    )
    shared_pods = [
        p.display_name
        for p in restored.active
        if not any(uid == p.uid for uid in state.cpu.assignments)
    ]
    return {
        "node": snapshot.node_name,
        **managers(kubelet),
        "reserved": str(reserved),
        "shared": str(shared),
        "sharedPoolPods": sorted(shared_pods),
        "numaNodes": nodes,
        "largestGuaranteedPod": largest_pods(restored, allocatable),
        "notes": list(restored.notes),
    }


def _memory(snapshot: NodeSnapshot, restored: Restored, node_id: int) -> dict[str, Any]:
    memory = restored.node.snapshot().memory
    if memory is not None and node_id in memory.nodes:
        return {
            name: {"total": t.total, "allocatable": t.allocatable, "free": t.free}
            for name, t in sorted(memory.nodes[node_id].tables.items())
        }
    size = restored.topology.numa_node(node_id).memory_bytes or 0
    pools = snapshot.hugepages.get(node_id, {})
    regular = max(0, size - sum(pools.values()))  # hugepages are not regular memory
    found: dict[str, Any] = {"memory": {"total": size, "allocatable": regular, "free": regular}}
    for name, total in sorted(pools.items()):
        found[name] = {"total": total, "allocatable": total, "free": total}
    return found


def _devices(restored: Restored, names: dict[str, str], node_id: int) -> dict[str, Any]:
    devices = restored.node.snapshot().devices
    if devices is None:
        return {}
    owners: dict[tuple[str, str], str] = {}
    for key, per in devices.allocations.items():
        for resource, ids in per.items():
            for device_id in ids:
                pod = names.get(str(key.pod_uid), str(key.pod_uid))
                owners[(resource, device_id)] = f"{pod} {key.container_name}"
    found: dict[str, Any] = {}
    for resource, table in sorted(devices.devices.items()):
        here = sorted(d.id for d in table.values() if node_id in d.numa_nodes)
        if here:
            found[resource] = [{"id": i, "holder": owners.get((resource, i), "")} for i in here]
    return found
