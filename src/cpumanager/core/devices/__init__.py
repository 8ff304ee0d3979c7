"""The device manager (the kubelet's ``devicemanager``), pure.

``state`` holds the devices and who holds them, ``requests`` what a container or pod asks
for, ``hints`` the topology hints (listed or as a rule, one entry), ``allocation``
allocation and release. The names below are the package's surface; the modules behind
them are internal.
"""

from cpumanager.core.devices.allocation import (
    DeviceAllocation,
    PreferredAllocation,
    allocate_devices,
    release_pod_devices,
)
from cpumanager.core.devices.hints import DeviceHints, device_capacity, device_hints
from cpumanager.core.devices.requests import container_device_requests, pod_device_requests
from cpumanager.core.devices.state import Device, DeviceState

__all__ = [
    "Device",
    "DeviceAllocation",
    "DeviceHints",
    "DeviceState",
    "PreferredAllocation",
    "allocate_devices",
    "container_device_requests",
    "device_capacity",
    "device_hints",
    "pod_device_requests",
    "release_pod_devices",
]
