"""The memory manager's machine state (the kubelet's ``memorymanager/state``), immutable.

Per NUMA node and memory type (``memory``, ``hugepages-2Mi``, ...) a table of total /
system-reserved / allocatable / reserved / free bytes, plus the node's number of
assignments and its *group* (``cells``): the nodes it was last allocated together with.
Containers' blocks and the admitting pod's reusable memory (left by its init containers)
ride along. Every change returns a new :class:`MemoryState`.

The rules hints and allocation share live here, once: whether a mask's allocatable or free
memory covers a request, and the group rule (a node serves single-node allocations or one
multi-node group, never both).

The kubelet keeps these amounts in uint64: a reservation larger than what a node has
wraps its allocatable around to nearly 2^64 bytes (it starts anyway), and the sums over a
mask wrap too. Both are reproduced here, so such a node is offered as the kubelet offers it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.ids import ContainerKey, PodUID
from cpumanager.core.topology import CPUTopology
from cpumanager.errors import MachineError

__all__ = ["MemoryBlock", "MemoryState", "MemoryTable", "NodeMemory"]


@dataclass(frozen=True, slots=True)
class MemoryTable:
    """One memory type on one node, in bytes."""

    total: int
    system_reserved: int
    allocatable: int
    reserved: int
    free: int


@dataclass(frozen=True, slots=True)
class NodeMemory:
    """A NUMA node's memory tables, assignment count and allocation group."""

    tables: Mapping[str, MemoryTable]
    assignments: int
    cells: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class MemoryBlock:
    """Memory of one type given to a container, and the NUMA nodes it comes from."""

    numa_affinity: tuple[int, ...]
    size: int
    resource: str

    @property
    def mask(self) -> NUMAMask:
        return NUMAMask(self.numa_affinity)


_U64 = (1 << 64) - 1  # Go's uint64 arithmetic wraps modulo 2^64

_Reusable = Mapping[tuple[int, str], int]  # (mask bits, resource) -> bytes


@dataclass(frozen=True, slots=True)
class MemoryState:
    """Machine memory state, containers' blocks, and the admitting pod's reusable memory."""

    nodes: Mapping[int, NodeMemory]
    blocks: Mapping[ContainerKey, tuple[MemoryBlock, ...]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    reusable_pod: PodUID | None = None
    reusable: _Reusable = field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def create(
        cls,
        memory: Mapping[int, int],
        *,
        hugepages: Mapping[int, Mapping[str, int]] | None = None,
        system_reserved: Mapping[int, Mapping[str, int]] | None = None,
    ) -> MemoryState:
        """The kubelet's default machine state.

        ``memory`` is each node's memory in bytes, ``hugepages`` each node's hugepage pools
        (``{"hugepages-2Mi": total bytes}``) and ``system_reserved`` the ``reservedMemory``
        per node. Regular memory's allocatable excludes the node's hugepages; when the
        reservation exceeds what is left it wraps around (uint64), as the kubelet's does.
        """
        hugepages = hugepages or {}
        reserved = system_reserved or {}
        nodes: dict[int, NodeMemory] = {}
        for node, size in sorted(memory.items()):
            tables: dict[str, MemoryTable] = {}
            in_pages = 0
            for resource, total in sorted(hugepages.get(node, {}).items()):
                held = reserved.get(node, {}).get(resource, 0)
                tables[resource] = _table(total, held, total - held)
                in_pages += total
            held = reserved.get(node, {}).get("memory", 0)
            tables["memory"] = _table(size, held, size - held - in_pages)
            nodes[node] = NodeMemory(MappingProxyType(tables), 0, (node,))
        return cls(nodes=MappingProxyType(nodes))

    @classmethod
    def from_topology(
        cls,
        topology: CPUTopology,
        *,
        hugepages: Mapping[int, Mapping[str, int]] | None = None,
        system_reserved: Mapping[int, Mapping[str, int]] | None = None,
    ) -> MemoryState:
        """The state of a machine whose NUMA nodes all declare their memory size."""
        memory: dict[int, int] = {}
        for node in topology.numa_nodes:
            if node.memory_bytes is None:
                msg = f"NUMA node {node.id} has no memory size; describe it in the machine"
                raise MachineError(msg)
            memory[node.id] = node.memory_bytes
        return cls.create(memory, hugepages=hugepages, system_reserved=system_reserved)

    def without_reuse(self) -> MemoryState:
        """This state without the admitting pod's reusable memory: what a restarted kubelet
        has, since that bookkeeping is not in its checkpoint."""
        if self.reusable_pod is None and not self.reusable:
            return self
        return replace(self, reusable_pod=None, reusable=MappingProxyType({}))

    def wraps(self) -> bool:
        """A node's table wrapped around (a reservation beyond what the node has): the sums
        over its masks wrap too, which only the listed hints reproduce."""
        return any(
            table.allocatable > _U64 >> 1
            for info in self.nodes.values()
            for table in info.tables.values()
        )

    # --- queries --------------------------------------------------------------------------

    def node_ids(self) -> tuple[int, ...]:
        return tuple(sorted(self.nodes))

    def free(self, node: int, resource: str) -> int:
        table = self.nodes[node].tables.get(resource)
        return 0 if table is None else table.free

    def allocatable(self, node: int, resource: str) -> int:
        table = self.nodes[node].tables.get(resource)
        return 0 if table is None else table.allocatable

    def reusable_for(self, pod_uid: PodUID, bits: int, resource: str) -> int:
        if self.reusable_pod != pod_uid:
            return 0
        return self.reusable.get((bits, resource), 0)

    # --- the rules hints and allocation share ---------------------------------------------

    def allocatable_covers(self, nodes: tuple[int, ...], requests: Mapping[str, int]) -> bool:
        """The nodes' allocatable memory covers every request (free or not); the sum wraps
        as the kubelet's uint64 sum does."""
        return all(
            sum(self.allocatable(n, r) for n in nodes) & _U64 >= need
            for r, need in requests.items()
        )

    def free_covers(
        self, mask: NUMAMask, requests: Mapping[str, int], *, reusing: PodUID | None = None
    ) -> bool:
        """The mask's free memory covers every request; with ``reusing``, memory that pod's
        init containers left on exactly this mask counts too (the kubelet's hints do so,
        its allocation check does not). The sum wraps as the kubelet's uint64 sum does."""
        nodes = mask.ids()
        for resource, need in requests.items():
            have = sum(self.free(n, resource) for n in nodes)
            if reusing is not None:
                have += self.reusable_for(reusing, mask.bits, resource)
            if have & _U64 < need:
                return False
        return True

    def violates_groups(self, nodes: tuple[int, ...], *, hinting: bool) -> bool:
        """The kubelet's rule that a node serves single-node allocations or one multi-node
        group, never both: a multi-node mask violates it when one of its used nodes serves
        single-node allocations or another group.

        A single node never violates it at allocation (``isAffinityViolatingNUMAAllocations``);
        when ``hinting`` (``calculateHints``) a node whose group lists several nodes is kept
        out of single-node masks. Like the kubelet, only the group's length counts for a single
        node: an empty group (as in hand-made states) is no group.
        """
        if len(nodes) == 1:
            return hinting and len(self.nodes[nodes[0]].cells) > 1
        return any(
            self.nodes[n].assignments > 0
            and (len(self.nodes[n].cells) == 1 or sorted(self.nodes[n].cells) != list(nodes))
            for n in nodes
        )


def _table(total: int, held: int, allocatable: int) -> MemoryTable:
    allocatable &= _U64
    return MemoryTable(total, held, allocatable, 0, allocatable)
