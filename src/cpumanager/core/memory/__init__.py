"""The memory manager (the kubelet's ``memorymanager``, static policy), pure.

``state`` holds the machine's memory tables and the rules hints and allocation share,
``requests`` what a container or pod asks for, ``hints`` the topology hints (listed or as
a rule, one entry), ``allocation`` allocation and release. The names below are the
package's surface; the modules behind them are internal.
"""

from cpumanager.core.memory.allocation import (
    MemoryAllocation,
    allocate_memory,
    release_started_init_containers,
    remove_container_memory,
)
from cpumanager.core.memory.hints import MemoryHints, best_hint, memory_hints
from cpumanager.core.memory.requests import container_memory_requests, pod_memory_requests
from cpumanager.core.memory.state import MemoryBlock, MemoryState, MemoryTable, NodeMemory

__all__ = [
    "MemoryAllocation",
    "MemoryBlock",
    "MemoryHints",
    "MemoryState",
    "MemoryTable",
    "NodeMemory",
    "allocate_memory",
    "best_hint",
    "container_memory_requests",
    "memory_hints",
    "pod_memory_requests",
    "release_started_init_containers",
    "remove_container_memory",
]
