"""The values a :class:`KubeletConfig` field takes: manager policy names, reservedMemory entries.

Kept apart from ``model.py`` so that decoding and validation, which the model's
``from_mapping`` calls, need not import the model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = [
    "CPU_MANAGER_POLICIES",
    "MEMORY_MANAGER_POLICIES",
    "TOPOLOGY_MANAGER_POLICIES",
    "TOPOLOGY_MANAGER_SCOPES",
    "MemoryReservation",
]

CPU_MANAGER_POLICIES = ("none", "static")
TOPOLOGY_MANAGER_POLICIES = ("none", "best-effort", "restricted", "single-numa-node")
TOPOLOGY_MANAGER_SCOPES = ("container", "pod")
MEMORY_MANAGER_POLICIES = ("None", "Static")  # "BestEffort" exists on Windows only


@dataclass(frozen=True, slots=True)
class MemoryReservation:
    """One ``reservedMemory`` entry: bytes reserved per memory type on one NUMA node."""

    numa_node: int
    limits: Mapping[str, int]
    # Go's Quantity format of each amount as written (BinarySI, DecimalSI, ...): the
    # kubelet's refusal prints the totals in it.
    formats: Mapping[str, str] = field(default_factory=dict)
