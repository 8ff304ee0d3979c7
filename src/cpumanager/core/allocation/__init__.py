"""CPU selection: the kubelet's take-by-topology packing and its options."""

from cpumanager.core.allocation.options import StaticPolicyOptions
from cpumanager.core.allocation.take import take_by_topology

__all__ = ["StaticPolicyOptions", "take_by_topology"]
