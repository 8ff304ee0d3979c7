"""The NodeResourceTopology NFD's topology-updater would write for a node (its rules, restated).

Inputs are what NFD reads on the node: the PodResources answers (GetAllocatableResources:
allocatable CPU ids, devices, memory blocks; List: every pod's containers with their CPU
ids, devices and memory blocks), the pods' specs (through its pod informer, for QoS and
integral CPUs), the NUMA topology and distances, and each NUMA node's memory and hugepage
capacity. The rules, from node-feature-discovery's resourcemonitor package:

* per NUMA node, what GetAllocatableResources lists there: cpu (the allocatable CPU ids
  of the node), each device resource (devices counted in every NUMA node their topology
  names), memory and hugepages (the Static memory manager's allocatable blocks); capacity
  is allocatable for devices, allocatable plus the node's non-allocatable CPUs for cpu,
  the NUMA node's total for memory and hugepages; available starts at allocatable;
* a NUMA node with nothing allocatable gets only cpu: capacity its CPUs, allocatable and
  available 0;
* pods counted: Guaranteed ones, and any with a device in List; a pod's CPU ids are
  charged only when it is Guaranteed and a container asks for an integral CPU count; each
  device id is charged to its NUMA node; each memory block is taken from the NUMA nodes of
  its affinity in order, each down to zero before the next;
* attributes: topologyManagerPolicy and topologyManagerScope, and (with the fingerprint
  on, as NFD runs by default) nodeTopologyPodsFingerprint over every pod List reports.

Quantities are written as NFD's (plain integers). The object's ``topologyPolicies`` holds
the deprecated combined policy name NFD also writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cpumanager.core.podfingerprint import ATTRIBUTE, fingerprint
from cpumanager.core.topology import CPUTopology
from cpumanager.core.workload import Pod, QoSClass, qos_class
from cpumanager.nodeview.podresources import PodResourcesAnswers

__all__ = ["nfd_object"]

_POLICIES = {
    ("single-numa-node", "container"): "SingleNUMANodeContainerLevel",
    ("single-numa-node", "pod"): "SingleNUMANodePodLevel",
    ("restricted", "container"): "RestrictedContainerLevel",
    ("restricted", "pod"): "RestrictedPodLevel",
    ("best-effort", "container"): "BestEffortContainerLevel",
    ("best-effort", "pod"): "BestEffortPodLevel",
}


def _integral_cpus(pod: Pod) -> bool:
    for container in pod.all_containers():
        cpu = container.requests.get("cpu")
        if cpu is not None and cpu.denominator == 1:
            return True
    return False


def nfd_object(
    *,
    name: str,
    topology: CPUTopology,
    answers: PodResourcesAnswers,
    pods: Mapping[tuple[str, str], Pod],
    memory_capacity: Mapping[int, Mapping[str, int]],
    policy: str,
    scope: str,
) -> dict[str, Any]:
    """NFD's object; ``pods`` by (namespace, name), ``memory_capacity`` per NUMA node."""
    allocatable = answers.allocatable
    assert allocatable is not None
    assert answers.pods is not None
    per_numa: dict[int, dict[str, int]] = {}
    device_numa: dict[str, dict[str, int]] = {}
    cpu_numa = {
        cpu: numa for numa in topology.numa_ids() for cpu in topology.cpus_in_numa_nodes([numa])
    }
    for cpu in allocatable.cpu_ids:
        numa = cpu_numa[cpu]
        per_numa.setdefault(numa, {})
        per_numa[numa]["cpu"] = per_numa[numa].get("cpu", 0) + 1
        device_numa.setdefault("cpu", {})[str(cpu)] = numa
    for device in allocatable.devices:
        for numa in device.numa_nodes or ():
            table = per_numa.setdefault(numa, {})
            table[device.resource_name] = table.get(device.resource_name, 0) + len(
                device.device_ids
            )
            for device_id in device.device_ids:
                device_numa.setdefault(device.resource_name, {})[device_id] = numa
    for block in allocatable.memory:
        for numa in block.numa_nodes or ():
            table = per_numa.setdefault(numa, {})
            table[block.memory_type] = table.get(block.memory_type, 0) + block.size_bytes
    reserved = {
        numa: len([c for c in topology.cpus_in_numa_nodes([numa]) if c not in allocatable.cpu_ids])
        for numa in topology.numa_ids()
    }
    zones: dict[int, dict[str, list[int]]] = {}
    for numa in topology.numa_ids():
        if numa not in per_numa:
            zones[numa] = {"cpu": [reserved[numa], 0, 0]}
            continue
        resources: dict[str, list[int]] = {}
        for resource, amount in per_numa[numa].items():
            if resource == "cpu":
                capacity = amount + reserved[numa]
            elif resource == "memory" or resource.startswith("hugepages-"):
                capacity = memory_capacity.get(numa, {}).get(resource, amount)
            else:
                capacity = amount
            resources[resource] = [capacity, amount, amount]
        zones[numa] = resources
    for listed in answers.pods:
        pod = pods.get((listed.namespace, listed.name))
        has_device = any(c.devices for c in listed.containers)
        guaranteed = pod is not None and qos_class(pod) is QoSClass.GUARANTEED
        if not (guaranteed or has_device):
            continue
        exclusive_cpus = guaranteed and pod is not None and _integral_cpus(pod)
        for container in listed.containers:
            if exclusive_cpus:
                for cpu in container.cpu_ids:
                    _charge(zones, device_numa, "cpu", str(cpu))
            for device in container.devices:
                for device_id in device.device_ids:
                    _charge(zones, device_numa, device.resource_name, device_id)
            for block in container.memory:
                _take_memory(zones, block.memory_type, block.size_bytes, block.numa_nodes or ())
    out_zones = []
    for numa in topology.numa_ids():
        costs = [
            {"name": f"node-{other}", "value": distance}
            for other in topology.numa_ids()
            if (distance := topology.distance(numa, other)) is not None
        ]
        out_zones.append(
            {
                "name": f"node-{numa}",
                "type": "Node",
                "costs": costs,
                "resources": [
                    {
                        "name": resource,
                        "capacity": str(values[0]),
                        "allocatable": str(values[1]),
                        "available": str(values[2]),
                    }
                    for resource, values in sorted(zones[numa].items())
                ],
            }
        )
    attributes = [
        {"name": "topologyManagerPolicy", "value": policy},
        {"name": "topologyManagerScope", "value": scope},
    ]
    if answers.pods:
        listed_pods = [(p.namespace, p.name) for p in answers.pods]
        attributes.append({"name": ATTRIBUTE, "value": fingerprint(listed_pods)})
    document: dict[str, Any] = {
        "apiVersion": "topology.node.k8s.io/v1alpha2",
        "kind": "NodeResourceTopology",
        "metadata": {"name": name},
        "attributes": attributes,
        "zones": out_zones,
    }
    combined = _POLICIES.get((policy, scope))
    if combined is not None:
        document["topologyPolicies"] = [combined]
    return document


def _charge(
    zones: dict[int, dict[str, list[int]]],
    device_numa: Mapping[str, Mapping[str, int]],
    resource: str,
    device_id: str,
) -> None:
    numa = device_numa.get(resource, {}).get(device_id)
    if numa is None or numa not in zones or resource not in zones[numa]:
        return
    zones[numa][resource][2] -= 1


def _take_memory(
    zones: dict[int, dict[str, list[int]]], resource: str, size: int, numas: tuple[int, ...]
) -> None:
    if not numas:
        return
    for numa in numas:
        if size == 0:
            return
        if numa not in zones:
            continue
        if resource not in zones[numa]:
            return
        values = zones[numa][resource]
        if values[2] == 0:
            continue
        taken = min(size, values[2])
        values[2] -= taken
        size -= taken
