"""``node nrt``: the node as a NodeResourceTopology object (``topology.node.k8s.io/v1alpha2``).

Field names follow the public API (k8stopologyawareschedwg/noderesourcetopology-api):
``zones`` (``name``, ``type``, ``costs`` [{name, value}], ``attributes``, ``resources``
[{name, capacity, allocatable, available}]) and top-level ``attributes`` [{name, value}].
One zone ``node-N`` of type ``Node`` per NUMA node, costs from the SLIT distance matrix.

``available`` is computed from the node's restored managers, not estimated from pod
requests as NFD's topology-updater does:

* cpu: allocatable leaves out the reserved CPUs *by id* (their NUMA node is known);
  available is allocatable minus the CPUs held exclusively (shared-pool pods and
  fractional-CPU Guaranteed pods hold none, so they are not charged); under
  ``full-pcpus-only`` only CPUs of whole free cores count, since the static policy hands
  out nothing else;
* memory and hugepages: the memory manager's per-NUMA tables under its Static policy;
  without it nothing is pinned per NUMA node, so available equals allocatable (regular
  memory excludes the node's hugepage pools);
* devices: healthy devices per NUMA node minus those allocated.

Attributes: ``topologyManagerPolicy``, ``topologyManagerScope`` and
``topologyManagerMaxNUMANodes`` (the ``max-allowable-numa-nodes`` limit, 8 by default).
"""

from __future__ import annotations

from typing import Any

from cpumanager.core.allocation.options import StaticPolicyOptions
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.devices import DeviceState
from cpumanager.core.memory import MemoryState
from cpumanager.core.topology import CPUTopology
from cpumanager.nodeanswers.restore import Restored, restore_node
from cpumanager.nodeview.snapshot import NodeSnapshot

__all__ = ["API_VERSION", "node_resource_topology", "whole_free_cores"]

API_VERSION = "topology.node.k8s.io/v1alpha2"
_DEFAULT_MAX_NUMA = 8


def whole_free_cores(topology: CPUTopology, free: CPUSet) -> CPUSet:
    """The CPUs of ``free`` whose every hyperthread sibling is free too."""
    return CPUSet([cpu for cpu in free if topology.siblings(cpu) <= free])


def _resource(name: str, capacity: int, allocatable: int, available: int) -> dict[str, Any]:
    return {
        "name": name,
        "capacity": str(capacity),
        "allocatable": str(allocatable),
        "available": str(max(0, available)),
    }


def _cpu(restored: Restored, node_id: int) -> dict[str, Any]:
    topology = restored.topology
    cpus = topology.cpus_in_numa_nodes([node_id])
    kubelet = restored.kubelet
    state = restored.node.snapshot().cpu
    if kubelet.cpu_manager_policy != "static":
        return _resource("cpu", len(cpus), len(cpus), len(cpus))
    reserved = kubelet.reserved_cpus or CPUSet()
    if not reserved and kubelet.num_reserved_cpus:
        # The static policy picks the reserved CPUs itself: those outside the default set
        # and every assignment are the reserved ones it keeps out.
        reserved = topology.all_cpus - state.default_cpuset - state.assigned_cpus()
    allocatable = cpus - reserved
    free = allocatable - state.assigned_cpus()
    options = StaticPolicyOptions.parse(
        kubelet.cpu_manager_policy_options, alpha_enabled=True, beta_enabled=True
    )
    if options.full_pcpus_only:
        free = whole_free_cores(topology, free)
    return _resource("cpu", len(cpus), len(allocatable), len(free))


def _memory(
    snapshot: NodeSnapshot, topology: CPUTopology, memory: MemoryState | None, node_id: int
) -> list[dict[str, Any]]:
    if memory is not None and node_id in memory.nodes:
        return [
            _resource(name, table.total, table.allocatable, table.free)
            for name, table in sorted(memory.nodes[node_id].tables.items())
        ]
    pools = dict(snapshot.hugepages.get(node_id, {}))
    size = topology.numa_node(node_id).memory_bytes or 0
    regular = max(0, size - sum(pools.values()))
    found = [_resource("memory", size, regular, regular)]
    found += [_resource(name, total, total, total) for name, total in sorted(pools.items())]
    return sorted(found, key=lambda r: str(r["name"]))


def _devices(devices: DeviceState | None, node_id: int) -> list[dict[str, Any]]:
    if devices is None:
        return []
    found = []
    for resource, table in sorted(devices.devices.items()):
        here = [d for d in table.values() if node_id in d.numa_nodes]
        if not here:
            continue
        healthy = {d.id for d in here if d.healthy}
        taken = devices.allocated(resource) & healthy
        found.append(_resource(resource, len(here), len(healthy), len(healthy - taken)))
    return found


def _max_numa(options: dict[str, str]) -> int:
    raw = options.get("max-allowable-numa-nodes", "")
    return int(raw) if raw.isdigit() else _DEFAULT_MAX_NUMA


def node_resource_topology(snapshot: NodeSnapshot) -> dict[str, Any]:
    """The NodeResourceTopology object of the snapshot's node, after restore."""
    restored = restore_node(snapshot)
    topology = restored.topology
    state = restored.node.snapshot()
    zones = []
    for node_id in topology.numa_ids():
        costs = [
            {"name": f"node-{other}", "value": distance}
            for other in topology.numa_ids()
            if (distance := topology.distance(node_id, other)) is not None
        ]
        resources = [_cpu(restored, node_id)] if topology.cpus_in_numa_nodes([node_id]) else []
        resources += _memory(snapshot, topology, state.memory, node_id)
        resources += _devices(state.devices, node_id)
        zone: dict[str, Any] = {"name": f"node-{node_id}", "type": "Node"}
        if costs:
            zone["costs"] = costs
        zone["resources"] = sorted(resources, key=lambda r: str(r["name"]))
        zones.append(zone)
    kubelet = restored.kubelet
    return {
        "apiVersion": API_VERSION,
        "kind": "NodeResourceTopology",
        "metadata": {"name": snapshot.node_name},
        "attributes": [
            {"name": "topologyManagerPolicy", "value": kubelet.topology_manager_policy},
            {"name": "topologyManagerScope", "value": kubelet.topology_manager_scope},
            {
                "name": "topologyManagerMaxNUMANodes",
                "value": str(_max_numa(dict(kubelet.topology_manager_policy_options))),
            },
        ],
        "zones": zones,
    }
