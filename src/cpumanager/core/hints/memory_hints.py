"""Memory and hugepages hints and allocation, as the kubelet's memory manager (static policy).

Model (the kubelet's machine state): per NUMA node and memory type (``memory``,
``hugepages-2Mi``, ...) a table of total / system-reserved / allocatable / reserved / free
bytes, plus the node's number of assignments and its *group* (``cells``): the nodes it was
last allocated together with. :class:`MemoryState` is immutable.

Rules (Guaranteed pods only; others get no hints and no memory):

* requests are the container's ``memory`` and ``hugepages-*`` requests, whole bytes;
* a container that already has memory blocks regenerates one preferred hint per block, or
  gives *no preference* when the blocks do not match the request;
* otherwise every mask of NUMA nodes (all nodes with memory, CPU-less ones included, in the
  kubelet's order) is a hint for every requested type when: its **allocatable** memory
  covers the request (this also sets the minimal affinity), a single node is not already
  part of a multi-node group, every used node of a multi-node mask belongs to exactly this
  group, and its **free** memory (+ memory reusable from the pod's init containers) covers
  the request. Preferred: the hints with the minimal affinity;
* no mask at all gives an empty answer, which the topology manager treats as no preference
  (the allocation then fails);
* allocation takes the merged hint (or the best own hint when the merge has no affinity),
  widens it to the narrowest own hint containing it when its free memory is short, refuses
  masks that mix single- and multi-node groups, and charges the nodes in ascending order.

Pod-level resources (kubelet 1.34, PodLevelResources gate on: ``pod_level_resources``): a
Guaranteed pod that sets ``spec.resources`` gets no memory hints (no preference) and no
memory, in container and pod scope; the QoS class follows the same gate.

Errors are :class:`UnexpectedAdmissionError` with the kubelet's admission wording.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from cpumanager.core.bitmask import NUMAMask, iterate_masks
from cpumanager.core.hints.hint import ProviderHints, ResourceHints, TopologyHint
from cpumanager.core.hints.source import (
    MultiCapacityHintSource,
    bits_of,
    fewest_nodes,
    smallest_mask,
)
from cpumanager.core.ids import ContainerKey, PodUID
from cpumanager.core.topology import CPUTopology
from cpumanager.core.workload import (
    Container,
    ContainerKind,
    Pod,
    QoSClass,
    pod_level_resources_set,
    qos_class,
)
from cpumanager.errors import MachineError, UnexpectedAdmissionError

__all__ = [
    "MemoryAllocation",
    "MemoryBlock",
    "MemoryState",
    "MemoryTable",
    "NodeMemory",
    "allocate_memory",
    "container_memory_requests",
    "memory_hint_source",
    "memory_hint_sources",
    "memory_hints",
    "pod_memory_hints",
    "pod_memory_requests",
    "release_started_init_containers",
    "remove_container_memory",
]

_MAX_INT64 = (1 << 63) - 1


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
        per node. Regular memory's allocatable excludes the node's hugepages.
        """
        hugepages = hugepages or {}
        reserved = system_reserved or {}
        nodes: dict[int, NodeMemory] = {}
        for node, size in sorted(memory.items()):
            tables: dict[str, MemoryTable] = {}
            in_pages = 0
            for resource, total in sorted(hugepages.get(node, {}).items()):
                held = reserved.get(node, {}).get(resource, 0)
                tables[resource] = _table(node, resource, total, held, total - held)
                in_pages += total
            held = reserved.get(node, {}).get("memory", 0)
            tables["memory"] = _table(node, "memory", size, held, size - held - in_pages)
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

    def node_ids(self) -> tuple[int, ...]:
        return tuple(sorted(self.nodes))

    def free(self, node: int, resource: str) -> int:
        table = self.nodes[node].tables.get(resource)
        return 0 if table is None else table.free

    def reusable_for(self, pod_uid: PodUID, bits: int, resource: str) -> int:
        if self.reusable_pod != pod_uid:
            return 0
        return self.reusable.get((bits, resource), 0)


def _table(node: int, resource: str, total: int, held: int, allocatable: int) -> MemoryTable:
    if allocatable < 0:
        msg = (
            f"NUMA node {node}: reserved {resource} ({held} bytes) exceeds what the node has; "
            "lower reservedMemory for this node"
        )
        raise MachineError(msg)
    return MemoryTable(total, held, allocatable, 0, allocatable)


@dataclass(frozen=True, slots=True)
class MemoryAllocation:
    """Blocks given to one container and the state after the allocation."""

    blocks: tuple[MemoryBlock, ...]
    state: MemoryState


# --- requests ---------------------------------------------------------------------------


def _is_memory(resource: str) -> bool:
    return resource == "memory" or resource.startswith("hugepages-")


def container_memory_requests(container: Container) -> dict[str, int] | None:
    """Memory and hugepages requests in bytes; None when one is not a whole int64."""
    out: dict[str, int] = {}
    for resource, amount in sorted(container.requests.items()):
        if not _is_memory(resource):
            continue
        if amount.denominator != 1 or not -_MAX_INT64 <= amount.numerator <= _MAX_INT64:
            return None
        out[resource] = amount.numerator
    return out


def pod_memory_requests(pod: Pod) -> dict[str, int] | None:
    """The pod's peak memory need per type (sidecars counted throughout)."""
    init_peak: dict[str, int] = {}
    sidecars: dict[str, int] = {}
    for container in pod.init_containers:
        requests = container_memory_requests(container)
        if requests is None:
            return None
        for resource, amount in requests.items():
            init_peak.setdefault(resource, 0)
            if container.kind is ContainerKind.SIDECAR:
                sidecars[resource] = sidecars.get(resource, 0) + amount
            elif sidecars.get(resource, 0) + amount > init_peak[resource]:
                init_peak[resource] = sidecars.get(resource, 0) + amount
    apps: dict[str, int] = {}
    for container in pod.containers:
        requests = container_memory_requests(container)
        if requests is None:
            return None
        for resource, amount in requests.items():
            apps[resource] = apps.get(resource, 0) + amount
    # The kubelet keys the result by the app containers' types only.
    return {r: max(amount + sidecars.get(r, 0), init_peak.get(r, 0)) for r, amount in apps.items()}


# --- hints ------------------------------------------------------------------------------


def memory_hints(
    state: MemoryState, pod: Pod, container: Container, *, pod_level_resources: bool = True
) -> ProviderHints:
    """Container-scope memory hints (an empty answer means no preference)."""
    found = _request_and_blocks(state, pod, container, pod_level_resources=pod_level_resources)
    if found is None:
        return {}
    requests, blocks = found
    if blocks is not None:
        return _regenerate(blocks, requests)
    return _calculate(state, pod.uid, requests)


def pod_memory_hints(
    state: MemoryState, pod: Pod, *, pod_level_resources: bool = True
) -> ProviderHints:
    """Pod-scope memory hints from the pod's peak need."""
    found = _request_and_blocks(state, pod, None, pod_level_resources=pod_level_resources)
    if found is None:
        return {}
    requests, blocks = found
    if blocks is not None:
        return _regenerate(blocks, requests)
    return _calculate(state, pod.uid, requests)


def _request_and_blocks(
    state: MemoryState, pod: Pod, container: Container | None, *, pod_level_resources: bool
) -> tuple[dict[str, int], tuple[MemoryBlock, ...] | None] | None:
    """The container's request (the pod's peak need when ``container`` is None) and the
    blocks it already holds; None when the memory manager gives no hints at all."""
    if qos_class(pod, pod_level_resources=pod_level_resources) is not QoSClass.GUARANTEED:
        return None
    if container is None:
        requests, owners = pod_memory_requests(pod), tuple(pod.all_containers())
    else:
        requests, owners = container_memory_requests(container), (container,)
    if requests is None:
        return None
    if pod_level_resources and pod_level_resources_set(pod):
        return None  # kubelet 1.34: pod-level resources are not supported by the policy
    for owner in owners:
        blocks = state.blocks.get(pod.key(owner.name))
        if blocks is not None:
            return requests, blocks
    return requests, None


def _regenerate(blocks: tuple[MemoryBlock, ...], requests: Mapping[str, int]) -> ProviderHints:
    if len(blocks) != len(requests):
        return {}
    hints: dict[str, list[TopologyHint]] = {resource: [] for resource in requests}
    for block in blocks:
        if block.resource not in requests or block.size != requests[block.resource]:
            return {}
        hints[block.resource].append(TopologyHint(block.mask, preferred=True))
    return {resource: tuple(found) for resource, found in hints.items()}


def _own_hints(
    state: MemoryState, pod_uid: PodUID, requests: Mapping[str, int]
) -> list[TopologyHint]:
    """The masks the memory manager offers (same list for every requested type)."""
    min_affinity = len(state.nodes)
    found: list[NUMAMask] = []
    for mask in iterate_masks(state.node_ids()):
        nodes = mask.ids()
        if any(
            sum(_allocatable(state, n, r) for n in nodes) < need for r, need in requests.items()
        ):
            continue
        min_affinity = min(min_affinity, len(nodes))
        if _allowed(state, nodes) and _fits(state, pod_uid, mask, requests):
            found.append(mask)
    return [TopologyHint(mask, mask.count() == min_affinity) for mask in found]


def _allowed(state: MemoryState, nodes: tuple[int, ...]) -> bool:
    """Group rules: a node of a multi-node group only in exactly that group, a node serving
    single-node allocations only alone. Like the kubelet, a single node is refused only when
    its group lists several nodes (an empty group, as in hand-made states, does not count)."""
    if len(nodes) == 1:
        return len(state.nodes[nodes[0]].cells) <= 1
    return not any(
        state.nodes[n].assignments > 0
        and (len(state.nodes[n].cells) == 1 or sorted(state.nodes[n].cells) != list(nodes))
        for n in nodes
    )


def _fits(state: MemoryState, pod_uid: PodUID, mask: NUMAMask, requests: Mapping[str, int]) -> bool:
    nodes = mask.ids()
    return all(
        sum(state.free(n, r) for n in nodes) + state.reusable_for(pod_uid, mask.bits, r) >= need
        for r, need in requests.items()
    )


# --- hints as a rule (past 8 NUMA nodes) -----------------------------------------------------

ENUMERATE_UP_TO = 8  # NUMA nodes up to which allocation enumerates masks as the kubelet does


def memory_hint_source(
    state: MemoryState, pod_uid: PodUID, requests: Mapping[str, int]
) -> MultiCapacityHintSource | None:
    """The list ``_own_hints`` returns, as a rule (None: the list is empty).

    Nodes serving no allocation form the family (any mask of them whose free memory covers
    every request); nodes that serve allocations can only appear alone or as their exact
    group, and masks the pod's init containers left memory on get that memory on top:
    those few masks are checked one by one and become the extras.
    """
    resources = tuple(sorted(requests))
    needs = tuple(requests[r] for r in resources)
    order = state.node_ids()
    allocatable = {n: tuple(_allocatable(state, n, r) for r in resources) for n in order}
    min_affinity = fewest_nodes(bits_of(order), allocatable, needs) or len(order)
    idle = tuple(
        n for n in order if state.nodes[n].assignments == 0 and len(state.nodes[n].cells) <= 1
    )
    free = {n: tuple(state.free(n, r) for r in resources) for n in idle}
    family = MultiCapacityHintSource(
        universe=bits_of(idle),
        free=MappingProxyType(free),
        needs=needs,
        preferred_size=min_affinity,
        labels=tuple(f"{r} bytes" for r in resources),
        node_order=order,
    )
    candidates: set[tuple[int, ...]] = {(n,) for n in order if n not in idle}
    candidates |= {
        tuple(sorted(state.nodes[n].cells))
        for n in order
        if n not in idle and len(state.nodes[n].cells) > 1
    }
    if state.reusable_pod == pod_uid:
        candidates |= {NUMAMask.from_bits(bits).ids() for bits, _r in state.reusable}
    extras = []
    for nodes in sorted(candidates, key=lambda ids: (len(ids), ids)):
        mask = NUMAMask(nodes)
        if not nodes or family.feasible(mask.bits) or any(n not in state.nodes for n in nodes):
            continue
        if any(sum(allocatable[n][i] for n in nodes) < need for i, need in enumerate(needs)):
            continue
        if _allowed(state, nodes) and _fits(state, pod_uid, mask, requests):
            extras.append(TopologyHint(mask, len(nodes) == min_affinity))
    if not extras and family.min_size() == 0:
        return None
    return replace(family, extra_hints=tuple(extras))


def memory_hint_sources(
    state: MemoryState,
    pod: Pod,
    container: Container | None,
    *,
    pod_level_resources: bool = True,
) -> dict[str, ResourceHints | MultiCapacityHintSource]:
    """:func:`memory_hints` (or, with ``container`` None, :func:`pod_memory_hints`) with
    the computed list given as a rule: the same answer without enumerating masks."""
    found = _request_and_blocks(state, pod, container, pod_level_resources=pod_level_resources)
    if found is None:
        return {}
    requests, blocks = found
    if blocks is not None:
        return dict(_regenerate(blocks, requests))
    return _as_sources(memory_hint_source(state, pod.uid, requests), requests)


def _as_sources(
    source: MultiCapacityHintSource | None, requests: Mapping[str, int]
) -> dict[str, ResourceHints | MultiCapacityHintSource]:
    if source is None:
        return {}
    return dict.fromkeys(requests, source)


def _best_own_hint(
    state: MemoryState, pod_uid: PodUID, requests: Mapping[str, int], containing: int = 0
) -> TopologyHint | None:
    """``findBestHint`` over the own hints whose masks hold ``containing``."""
    if len(state.nodes) <= ENUMERATE_UP_TO:
        return _best(
            h
            for h in _own_hints(state, pod_uid, requests)
            if h.mask is not None and h.mask.bits & containing == containing
        )
    source = memory_hint_source(state, pod_uid, requests)
    if source is None:
        return None
    found = [
        h for h in source.extras() if h.mask is not None and h.mask.bits & containing == containing
    ]
    if not containing & ~source.universe:
        for size in range(max(1, containing.bit_count()), source.universe.bit_count() + 1):
            bits = smallest_mask(
                source.universe, size, source.free, source.needs, required=containing
            )
            if bits is not None:
                found.append(TopologyHint(NUMAMask.from_bits(bits), size == source.preferred_size))
                break
    return min(found, key=TopologyHint.sort_key, default=None)


def _calculate(state: MemoryState, pod_uid: PodUID, requests: Mapping[str, int]) -> ProviderHints:
    hints = _own_hints(state, pod_uid, requests)
    if not hints:
        return {}
    return {resource: tuple(hints) for resource in requests}


def _allocatable(state: MemoryState, node: int, resource: str) -> int:
    table = state.nodes[node].tables.get(resource)
    return 0 if table is None else table.allocatable


def _best(hints: Iterable[TopologyHint]) -> TopologyHint | None:
    """The kubelet's ``findBestHint``: preferred first, then narrower; first one wins ties."""
    best: TopologyHint | None = None
    for hint in hints:
        assert hint.mask is not None
        if best is None or (hint.preferred and not best.preferred):
            best = hint
        elif hint.preferred == best.preferred:
            assert best.mask is not None
            if hint.mask.is_narrower_than(best.mask):
                best = hint
    return best


# --- allocation and release -------------------------------------------------------------


def _unexpected(detail: str) -> UnexpectedAdmissionError:
    return UnexpectedAdmissionError(f"Allocate failed due to {detail}, which is unexpected")


def allocate_memory(
    state: MemoryState,
    pod: Pod,
    container: Container,
    hint: TopologyHint | None,
    *,
    pod_level_resources: bool = True,
) -> MemoryAllocation:
    """Reserve the container's memory on the hint's nodes (None = the zero hint)."""
    if qos_class(pod, pod_level_resources=pod_level_resources) is not QoSClass.GUARANTEED:
        return MemoryAllocation((), state)
    if pod_level_resources and pod_level_resources_set(pod):
        return MemoryAllocation((), state)  # kubelet 1.34: skipped, before held blocks
    key = pod.key(container.name)
    existing = state.blocks.get(key)
    if existing is not None:
        return MemoryAllocation(existing, _update_reusable(state, pod, container, existing))
    requests = container_memory_requests(container)
    if requests is None:
        msg = "[memorymanager] failed to represent quantity as int64"
        raise _unexpected(msg)
    merged = hint if hint is not None else TopologyHint(None, preferred=False)
    best = merged
    if merged.mask is None:
        default = _best_own_hint(state, pod.uid, requests)
        if default is None:
            msg = (
                "[memorymanager] failed to get the default NUMA affinity, no NUMA nodes with "
                "enough memory is available"
            )
            raise _unexpected(msg)
        if not default.preferred and merged.preferred:
            msg = "[memorymanager] failed to find the default preferred hint"
            raise _unexpected(msg)
        best = default
    assert best.mask is not None
    if not _satisfies(state, best.mask, requests):
        widened = _best_own_hint(state, pod.uid, requests, best.mask.bits)
        if widened is None:
            msg = "[memorymanager] failed to find NUMA nodes to extend the current topology hint"
            raise _unexpected(msg)
        if not widened.preferred and best.preferred:
            msg = "[memorymanager] failed to find the extended preferred hint"
            raise _unexpected(msg)
        best = widened
    assert best.mask is not None
    if _violates_groups(state, best.mask):
        msg = "[memorymanager] preferred hint violates NUMA node allocation"
        raise _unexpected(msg)
    nodes = best.mask.ids()
    blocks = []
    for resource, size in requests.items():
        blocks.append(MemoryBlock(nodes, size, resource))
        charge = max(0, size - state.reusable_for(pod.uid, best.mask.bits, resource))
        state = _charge(state, nodes, resource, charge)
    new_blocks = tuple(blocks)
    state = _update_reusable(state, pod, container, new_blocks)
    table = dict(state.blocks)
    table[key] = new_blocks
    state = replace(state, blocks=MappingProxyType(table))
    state = _shrink_init_blocks(state, pod, container, new_blocks)
    return MemoryAllocation(new_blocks, state)


def _satisfies(state: MemoryState, mask: NUMAMask, requests: Mapping[str, int]) -> bool:
    return all(sum(state.free(n, r) for n in mask) >= need for r, need in requests.items())


def _violates_groups(state: MemoryState, mask: NUMAMask) -> bool:
    nodes = mask.ids()
    if len(nodes) == 1:
        return False
    for node in nodes:
        info = state.nodes[node]
        if info.assignments == 0:
            continue
        if len(info.cells) == 1 or sorted(info.cells) != list(nodes):
            return True
    return False


def _charge(state: MemoryState, nodes: tuple[int, ...], resource: str, size: int) -> MemoryState:
    updated = dict(state.nodes)
    for node in nodes:
        info = updated[node]
        tables = dict(info.tables)
        table = tables.get(resource)
        if size and table is not None and table.free > 0:
            take = min(size, table.free)
            tables[resource] = replace(
                table, reserved=table.reserved + take, free=table.free - take
            )
            size -= take
        updated[node] = NodeMemory(MappingProxyType(tables), info.assignments + 1, nodes)
    return replace(state, nodes=MappingProxyType(updated))


def _update_reusable(
    state: MemoryState, pod: Pod, container: Container, blocks: tuple[MemoryBlock, ...]
) -> MemoryState:
    reusable = dict(state.reusable) if state.reusable_pod == pod.uid else {}
    regular_init = any(
        c.name == container.name and c.kind is ContainerKind.INIT for c in pod.init_containers
    )
    for block in blocks:
        key = (block.mask.bits, block.resource)
        if regular_init:
            reusable[key] = max(reusable.get(key, 0), block.size)
        elif reusable.get(key, 0):
            reusable[key] = max(0, reusable[key] - block.size)
    return replace(state, reusable_pod=pod.uid, reusable=MappingProxyType(reusable))


def _shrink_init_blocks(
    state: MemoryState, pod: Pod, container: Container, blocks: tuple[MemoryBlock, ...]
) -> MemoryState:
    """Bookkeeping: memory reused from init containers is taken off their blocks."""
    table = dict(state.blocks)
    for block in blocks:
        left = block.size
        for init in pod.init_containers:
            if init.name == container.name or left == 0:
                break
            if init.kind is ContainerKind.SIDECAR:
                continue
            init_key = pod.key(init.name)
            init_blocks = list(table.get(init_key, ()))
            if not init_blocks:
                continue
            for index, old in enumerate(init_blocks):
                if old.size == 0 or old.resource != block.resource or old.mask != block.mask:
                    continue
                taken = min(old.size, left)
                init_blocks[index] = replace(old, size=old.size - taken)
                left -= taken
            table[init_key] = tuple(init_blocks)
    return replace(state, blocks=MappingProxyType(table))


def remove_container_memory(state: MemoryState, key: ContainerKey) -> MemoryState:
    """Release a container's blocks (the kubelet's ``RemoveContainer``)."""
    blocks = state.blocks.get(key)
    if blocks is None:
        return state
    table = {k: v for k, v in state.blocks.items() if k != key}
    nodes = dict(state.nodes)
    for block in blocks:
        left = block.size
        for node in block.numa_affinity:
            info = nodes[node]
            count = info.assignments - 1
            cells = (node,) if count == 0 else info.cells
            tables = dict(info.tables)
            memory = tables.get(block.resource)
            if left and memory is not None and memory.reserved > 0:
                back = min(left, memory.reserved)
                tables[block.resource] = replace(
                    memory, reserved=memory.reserved - back, free=memory.free + back
                )
                left -= back
            nodes[node] = NodeMemory(MappingProxyType(tables), count, cells)
    return replace(state, nodes=MappingProxyType(nodes), blocks=MappingProxyType(table))


def release_started_init_containers(
    state: MemoryState, pod: Pod, container: Container
) -> MemoryState:
    """The kubelet memory manager's ``AddContainer`` clean-up: once ``container`` starts, the
    regular init containers before it have finished, so their (shrunk) blocks are released.
    Sidecars keep theirs; an init container is released only when a later one starts."""
    for init in pod.init_containers:
        if init.name == container.name:
            break
        if init.kind is not ContainerKind.SIDECAR:
            state = remove_container_memory(state, pod.key(init.name))
    return state
