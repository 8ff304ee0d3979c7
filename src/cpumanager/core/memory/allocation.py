"""Memory allocation and release, as the kubelet memory manager's static policy does them.

Allocation (``Allocate``) takes the merged hint (or, when the merge has no affinity, the
best own hint), widens it to the narrowest own hint containing it when its free memory is
short, refuses masks that break the group rule, and charges the nodes in ascending order;
charged nodes form one group. Memory a pod's regular init containers held is reusable by its
later containers on the same mask: it is charged once, and taken off the init containers'
blocks. Release (``RemoveContainer``) gives a container's memory back; once a container
starts, the regular init containers before it have finished and are released
(``AddContainer``). Nothing here persists: every step returns a new :class:`MemoryState`.

Errors are :class:`UnexpectedAdmissionError` with the kubelet's admission wording.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import MappingProxyType

from cpumanager.core.hints.hint import TopologyHint
from cpumanager.core.ids import ContainerKey
from cpumanager.core.memory.hints import best_hint
from cpumanager.core.memory.requests import container_memory_requests
from cpumanager.core.memory.state import MemoryBlock, MemoryState, NodeMemory
from cpumanager.core.workload import (
    Container,
    ContainerKind,
    Pod,
    QoSClass,
    pod_level_resources_set,
    qos_class,
)
from cpumanager.errors import UnexpectedAdmissionError

__all__ = [
    "MemoryAllocation",
    "allocate_memory",
    "release_started_init_containers",
    "remove_container_memory",
]


@dataclass(frozen=True, slots=True)
class MemoryAllocation:
    """Blocks given to one container and the state after the allocation."""

    blocks: tuple[MemoryBlock, ...]
    state: MemoryState


def _unexpected(detail: str) -> UnexpectedAdmissionError:
    return UnexpectedAdmissionError(f"Allocate failed due to {detail}, which is unexpected")


def allocate_memory(
    state: MemoryState,
    pod: Pod,
    container: Container,
    hint: TopologyHint | None,
    *,
    pod_level_resources: bool = True,
    implicit: bool | None = None,
) -> MemoryAllocation:
    """Reserve the container's memory on the hint's nodes (None = the zero hint).

    ``implicit`` picks how the own hints are searched (see :func:`best_hint`); the answer
    is the same either way.
    """
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
        default = best_hint(state, pod.uid, requests, implicit=implicit)
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
    if not state.free_covers(best.mask, requests):
        widened = best_hint(state, pod.uid, requests, containing=best.mask.bits, implicit=implicit)
        if widened is None:
            msg = "[memorymanager] failed to find NUMA nodes to extend the current topology hint"
            raise _unexpected(msg)
        if not widened.preferred and best.preferred:
            msg = "[memorymanager] failed to find the extended preferred hint"
            raise _unexpected(msg)
        best = widened
    assert best.mask is not None
    if state.violates_groups(best.mask.ids(), hinting=False):
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
