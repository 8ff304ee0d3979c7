"""``node nrt``: the node as a NodeResourceTopology object (``topology.node.k8s.io/v1alpha2``).

Field names follow the public API (k8stopologyawareschedwg/noderesourcetopology-api):
``zones`` (``name``, ``type``, ``costs`` [{name, value}], ``resources`` [{name, capacity,
allocatable, available}]) and top-level ``attributes`` [{name, value}]. One zone ``node-N``
of type ``Node`` per NUMA node, costs from the SLIT distance matrix.

The object is written for the scheduler-plugins ``NodeResourceTopologyMatch`` plugin, whose
single-numa-node filter asks, per container (or per pod), for one zone whose ``available``
covers every NUMA-affine request; a resource that no zone lists is refused for cpu, memory
and hugepages and waved through for extended resources. So each resource is published with
the meaning that makes the plugin reach the kubelet's verdict:

* cpu, under the static CPU manager: allocatable leaves out the reserved CPUs *by id*;
  available is allocatable minus the CPUs held exclusively (shared-pool pods and
  fractional-CPU Guaranteed containers hold none); under ``full-pcpus-only`` only CPUs of
  whole free cores count, since the static policy hands out nothing else. Under the
  ``none`` policy the kubelet does not align CPUs: every zone lists the node's allocatable
  CPU (no per-NUMA limit; the node-level fit stays the scheduler's NodeResourcesFit job);
* memory and hugepages, under the Static memory manager: its per-NUMA tables (capacity,
  allocatable after reserved memory, free). Under ``None`` the kubelet does not align
  memory: every zone lists the node's allocatable memory and hugepage pools, uncharged;
* devices: every healthy device in the zone of its NUMA node(s) (from GetAllocatableResources,
  else the device checkpoint's allocations, else ``device_numa``, the adapter's sysfs reading
  for PCI-addressed devices), minus those allocated. A device whose NUMA node nothing tells
  is in no zone (the plugin then counts its resource at node level).

Attributes: ``topologyManagerPolicy``, ``topologyManagerScope``,
``topologyManagerMaxNUMANodes`` (the ``max-allowable-numa-nodes`` limit, 8 by default) --
the three the plugin reads -- and, for people and tools, ``topologyManagerPolicyOptions``,
``cpuManagerPolicy``, ``cpuManagerPolicyOptions`` and ``memoryManagerPolicy``; with the
node's pod list, ``nodeTopologyPodsFingerprint`` and ``nodeTopologyPodsFingerprintMethod``
(``core/podfingerprint.py``) so the plugin's reserve cache can resync the node.

Where this differs from NFD's topology-updater, which reads the same PodResources data
(allocatable CPU ids, device ids, memory blocks) and charges per pod what List reports:
NFD publishes cpu with allocatable 0 (or no cpu, in zones listing other resources) under
the ``none`` CPU manager and no memory or hugepages under the ``None`` memory manager (the
plugin then refuses, on single-numa-node nodes, every Guaranteed pod and every pod asking
for memory, which the kubelet admits); it charges exclusive CPUs by id but ignores
``full-pcpus-only`` (a zone with free CPUs only on half-used cores looks usable); it takes
memory blocks greedily from the lowest NUMA id of the block's set rather than from the
memory manager's own per-NUMA accounting; it sets the fingerprint over every pod
PodResources lists without a method attribute; and devices missing from
GetAllocatableResources are not counted at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cpumanager.core.allocation.options import StaticPolicyOptions
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.devices import DeviceState
from cpumanager.core.memory import MemoryState
from cpumanager.core.podfingerprint import (
    ATTRIBUTE,
    ATTRIBUTE_METHOD,
    METHOD_ALL,
    PodEntry,
    fingerprint,
    plugin_podset,
)
from cpumanager.core.topology import CPUTopology
from cpumanager.nodeanswers.fit import Allocatable, node_allocatable
from cpumanager.nodeanswers.restore import Restored, restore_node
from cpumanager.nodeanswers.visible import unseen
from cpumanager.nodeview.snapshot import NodeSnapshot

__all__ = [
    "API_VERSION",
    "node_resource_topology",
    "quantity_text",
    "whole_free_cores",
    "zoned_resources",
]

API_VERSION = "topology.node.k8s.io/v1alpha2"
_DEFAULT_MAX_NUMA = 8


def whole_free_cores(topology: CPUTopology, free: CPUSet) -> CPUSet:
    """The CPUs of ``free`` whose every hyperthread sibling is free too."""
    return CPUSet([cpu for cpu in free if topology.siblings(cpu) <= free])


def quantity_text(name: str, amount: int) -> str:
    """A Kubernetes quantity: cpu from millicores (``4``, ``3500m``), else the integer."""
    if name != "cpu":
        return str(max(0, amount))
    amount = max(0, amount)
    return str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"


def _resource(name: str, capacity: int, allocatable: int, available: int) -> dict[str, Any]:
    return {
        "name": name,
        "capacity": str(capacity),
        "allocatable": str(allocatable),
        "available": str(max(0, available)),
    }


def _node_wide(name: str, node: Allocatable) -> dict[str, Any]:
    """A resource the kubelet does not align: the node's amounts in every zone."""
    allocatable = quantity_text(name, node.allocatable.get(name, 0))
    return {
        "name": name,
        "capacity": quantity_text(name, node.capacity.get(name, 0)),
        "allocatable": allocatable,
        "available": allocatable,
    }


def _cpu(restored: Restored, node_id: int) -> dict[str, Any]:
    topology = restored.topology
    cpus = topology.cpus_in_numa_nodes([node_id])
    kubelet = restored.kubelet
    state = restored.node.snapshot().cpu
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


def _memory(memory: MemoryState | None, node: Allocatable, node_id: int) -> list[dict[str, Any]]:
    if memory is not None:
        if node_id not in memory.nodes:
            return []
        return [
            _resource(name, table.total, table.allocatable, table.free)
            for name, table in sorted(memory.nodes[node_id].tables.items())
        ]
    names = ["memory", *sorted(n for n in node.capacity if n.startswith("hugepages-"))]
    return [_node_wide(name, node) for name in names]


def _devices(
    devices: DeviceState | None, node_id: int, device_numa: Mapping[str, int]
) -> list[dict[str, Any]]:
    if devices is None:
        return []
    found = []
    for resource, table in sorted(devices.devices.items()):
        here = [
            d
            for d in table.values()
            if node_id in (d.numa_nodes or ((device_numa[d.id],) if d.id in device_numa else ()))
        ]
        if not here:
            continue
        healthy = {d.id for d in here if d.healthy}
        taken = devices.allocated(resource) & healthy
        found.append(_resource(resource, len(here), len(healthy), len(healthy - taken)))
    return found


def _max_numa(options: Mapping[str, str]) -> int:
    raw = options.get("max-allowable-numa-nodes", "")
    return int(raw) if raw.isdigit() else _DEFAULT_MAX_NUMA


def _options_text(options: Mapping[str, str]) -> str:
    return ",".join(f"{key}={value}" for key, value in sorted(options.items()))


def zoned_resources(document: Mapping[str, Any]) -> set[str]:
    """The resource names an object's zones list (the plugin's exclusive-resource test)."""
    return {str(r["name"]) for zone in document.get("zones", ()) for r in zone["resources"]}


def node_resource_topology(
    snapshot: NodeSnapshot,
    *,
    method: str = METHOD_ALL,
    informer: str = "dedicated",
    device_numa: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """The NodeResourceTopology object of the snapshot's node, after restore.

    ``method`` and ``informer``: the fingerprint's method and the plugin's pod informer mode
    (``core/podfingerprint.py``). ``device_numa``: NUMA nodes of devices by id, for devices
    no PodResources answer or checkpoint entry places.

    SnapshotError when the snapshot could not read what the kubelet has
    (``nodeanswers/visible.py``): an object from it would offer CPUs the kubelet has given
    away."""
    problem = unseen(snapshot)
    if problem is not None:
        raise problem
    restored = restore_node(snapshot)
    topology = restored.topology
    kubelet = restored.kubelet
    state = restored.node.snapshot()
    node = node_allocatable(topology, kubelet, hugepages=snapshot.hugepages, devices=state.devices)
    static_cpu = kubelet.cpu_manager_policy == "static"
    placed = dict(device_numa or {})
    zones = []
    for node_id in topology.numa_ids():
        costs = [
            {"name": f"node-{other}", "value": distance}
            for other in topology.numa_ids()
            if (distance := topology.distance(node_id, other)) is not None
        ]
        resources = []
        if not static_cpu:
            resources.append(_node_wide("cpu", node))
        elif topology.cpus_in_numa_nodes([node_id]):
            resources.append(_cpu(restored, node_id))
        resources += _memory(state.memory, node, node_id)
        resources += _devices(state.devices, node_id, placed)
        zone: dict[str, Any] = {"name": f"node-{node_id}", "type": "Node"}
        if costs:
            zone["costs"] = costs
        zone["resources"] = sorted(resources, key=lambda r: str(r["name"]))
        zones.append(zone)
    attributes = [
        {"name": "topologyManagerPolicy", "value": kubelet.topology_manager_policy},
        {"name": "topologyManagerScope", "value": kubelet.topology_manager_scope},
        {
            "name": "topologyManagerMaxNUMANodes",
            "value": str(_max_numa(kubelet.topology_manager_policy_options)),
        },
    ]
    if kubelet.topology_manager_policy_options:
        options = _options_text(kubelet.topology_manager_policy_options)
        attributes.append({"name": "topologyManagerPolicyOptions", "value": options})
    attributes.append({"name": "cpuManagerPolicy", "value": kubelet.cpu_manager_policy})
    if kubelet.cpu_manager_policy_options:
        options = _options_text(kubelet.cpu_manager_policy_options)
        attributes.append({"name": "cpuManagerPolicyOptions", "value": options})
    attributes.append({"name": "memoryManagerPolicy", "value": kubelet.memory_manager_policy})
    document: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": "NodeResourceTopology",
        "metadata": {"name": snapshot.node_name},
        "attributes": attributes,
        "zones": zones,
    }
    if snapshot.pods is not None:
        entries = [PodEntry(p.pod, p.phase) for p in snapshot.pods]
        podset = plugin_podset(
            entries, method=method, zoned=zoned_resources(document), informer=informer
        )
        attributes.append({"name": ATTRIBUTE, "value": fingerprint(podset)})
        attributes.append({"name": ATTRIBUTE_METHOD, "value": method})
    return document
