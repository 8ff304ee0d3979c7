"""cpumanager: the kubelet's CPU Manager and Topology Manager, in Python.

Keep this module light: ``cpumanager --version`` and every short command import it first,
so it imports nothing itself. The names below load on first use (PEP 562);
``tests/test_coldstart.py`` checks what ``import cpumanager`` and ``cpumanager.cli.main``
may load (no click, rich, yaml, grpc, prometheus, psutil, nor the allocation code).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

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

# public name -> module that defines it
_LAZY = {
    "NUMAMask": "cpumanager.core.bitmask",
    "iterate_masks": "cpumanager.core.bitmask",
    "CPUSet": "cpumanager.core.cpuset",
    "ContainerID": "cpumanager.core.ids",
    "ContainerKey": "cpumanager.core.ids",
    "ContainerName": "cpumanager.core.ids",
    "PodUID": "cpumanager.core.ids",
    "CPUInfo": "cpumanager.core.topology",
    "CPUTopology": "cpumanager.core.topology",
    "NUMANodeInfo": "cpumanager.core.topology",
    "CpuManagerError": "cpumanager.errors",
}

if TYPE_CHECKING:
    from cpumanager.core.bitmask import NUMAMask, iterate_masks
    from cpumanager.core.cpuset import CPUSet
    from cpumanager.core.ids import ContainerID, ContainerKey, ContainerName, PodUID
    from cpumanager.core.topology import CPUInfo, CPUTopology, NUMANodeInfo
    from cpumanager.errors import CpuManagerError


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        msg = f"module 'cpumanager' has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
