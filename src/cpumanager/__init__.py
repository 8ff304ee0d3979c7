"""cpumanager: the kubelet's CPU Manager and Topology Manager, in Python."""

from __future__ import annotations

from cpumanager.core.bitmask import NUMAMask, iterate_masks
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.ids import ContainerID, ContainerKey, ContainerName, PodUID
from cpumanager.core.topology import CPUInfo, CPUTopology, NUMANodeInfo
from cpumanager.errors import CpuManagerError

__version__ = "0.1.0"

__all__ = [
    "CPUInfo",
    "CPUSet",
    "CPUTopology",
    "ContainerID",
    "ContainerKey",
    "ContainerName",
    "CpuManagerError",
    "NUMAMask",
    "NUMANodeInfo",
    "PodUID",
    "__version__",
    "iterate_masks",
]
