"""Topology discovery from sysfs, read by hand: see :mod:`.reader` for the rules.

``files`` reads single files defensively, ``grouping`` forms cores, sockets and L3 groups
from per-CPU facts, ``numa`` reads the NUMA nodes, ``reader`` puts the machine together.
"""

from cpumanager.adapters.sysfs.files import parse_hex_mask
from cpumanager.adapters.sysfs.grouping import CacheFacts, CPUFacts
from cpumanager.adapters.sysfs.reader import SysfsReader, discover

__all__ = ["CPUFacts", "CacheFacts", "SysfsReader", "discover", "parse_hex_mask"]
