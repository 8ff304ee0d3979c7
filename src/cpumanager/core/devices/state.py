"""The device manager's state (the kubelet devicemanager's view of its plugins), immutable.

Per extended resource (``nvidia.com/gpu``, ``example.com/nic``), the devices a device plugin
reported, each attached to one NUMA node, several, or none, healthy or not; which container
holds which devices; and the admitting pod's reusable devices (left by its init
containers). Allocation and release return a new :class:`DeviceState`.

A resource that is not registered but still held by some container is a device resource
(the kubelet's ``isDevicePluginResource``): it gets no hints and fails allocation as
unregistered.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from cpumanager.core.ids import ContainerKey, PodUID
from cpumanager.errors import MachineError

__all__ = ["Device", "DeviceState"]

_Allocations = Mapping[ContainerKey, Mapping[str, frozenset[str]]]


@dataclass(frozen=True, slots=True)
class Device:
    """One device: its id, the NUMA nodes it is attached to (may be none), its health."""

    id: str
    numa_nodes: tuple[int, ...] = ()
    healthy: bool = True

    def touches(self, bits: int) -> bool:
        return any((bits >> node) & 1 for node in self.numa_nodes)


@dataclass(frozen=True, slots=True)
class DeviceState:
    """Devices per resource, what is allocated to whom, and the pod's reusable devices."""

    numa_node_ids: tuple[int, ...]
    devices: Mapping[str, Mapping[str, Device]]
    allocations: _Allocations = field(default_factory=lambda: MappingProxyType({}))
    reusable_pod: PodUID | None = None
    reusable: Mapping[str, frozenset[str]] = field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def create(
        cls, numa_node_ids: Iterable[int], devices: Mapping[str, Iterable[Device]]
    ) -> DeviceState:
        """A state with nothing allocated; device ids must be unique per resource."""
        nodes = tuple(sorted(set(numa_node_ids)))
        table: dict[str, Mapping[str, Device]] = {}
        for resource, listed in sorted(devices.items()):
            by_id: dict[str, Device] = {}
            for device in listed:
                if device.id in by_id:
                    msg = f"device {device.id!r} of {resource!r} is listed twice; ids are unique"
                    raise MachineError(msg)
                unknown = [n for n in device.numa_nodes if n not in nodes]
                if unknown:
                    msg = (
                        f"device {device.id!r} of {resource!r} is on NUMA node {unknown[0]}, "
                        f"which the machine does not have (nodes {list(nodes)})"
                    )
                    raise MachineError(msg)
                by_id[device.id] = device
            table[resource] = MappingProxyType(by_id)
        return cls(numa_node_ids=nodes, devices=MappingProxyType(table))

    # --- queries --------------------------------------------------------------------------

    def is_device_resource(self, resource: str) -> bool:
        """Registered, or still held by a container (the kubelet's ``isDevicePluginResource``)."""
        return resource in self.devices or any(
            resource in per_resource for per_resource in self.allocations.values()
        )

    def has_topology(self, resource: str) -> bool:
        """The kubelet's ``deviceHasTopologyAlignment``: some device reports a NUMA node."""
        return any(d.numa_nodes for d in self.devices.get(resource, {}).values())

    def healthy(self, resource: str) -> frozenset[str]:
        return frozenset(d.id for d in self.devices.get(resource, {}).values() if d.healthy)

    def allocated(self, resource: str) -> frozenset[str]:
        """Every device of ``resource`` held by any container."""
        held: set[str] = set()
        for per_resource in self.allocations.values():
            held |= per_resource.get(resource, frozenset())
        return frozenset(held)

    def available(self, resource: str) -> frozenset[str]:
        return self.healthy(resource) - self.allocated(resource)

    def container_devices(self, key: ContainerKey, resource: str) -> frozenset[str]:
        return self.allocations.get(key, {}).get(resource, frozenset())

    def pod_devices(self, pod_uid: PodUID, resource: str) -> frozenset[str]:
        held: set[str] = set()
        for key, per_resource in self.allocations.items():
            if key.pod_uid == pod_uid:
                held |= per_resource.get(resource, frozenset())
        return frozenset(held)

    def reusable_for(self, pod_uid: PodUID, resource: str) -> frozenset[str]:
        if self.reusable_pod != pod_uid:
            return frozenset()
        return self.reusable.get(resource, frozenset())
