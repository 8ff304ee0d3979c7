"""Topology discovery from sysfs, read by hand: see :mod:`.reader` for the rules.

``files`` reads single files defensively, ``grouping`` forms cores, sockets and L3 groups
from per-CPU facts, ``numa`` reads the NUMA nodes, ``reader`` puts the machine together
(the kernel's view). ``cadvisor`` reads the tree as cadvisor does and ``kubelet_view``
turns that into the kubelet's topology, the default view.
"""

from cpumanager.adapters.sysfs.files import parse_hex_mask
from cpumanager.adapters.sysfs.grouping import CacheFacts, CPUFacts
from cpumanager.adapters.sysfs.reader import VIEWS, SysfsReader, discover

__all__ = [
    "VIEWS",
    "CPUFacts",
    "CacheFacts",
    "SysfsReader",
    "discover",
    "parse_hex_mask",
]
