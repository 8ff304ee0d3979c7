"""Memory and hugepages hints, as the kubelet memory manager's static policy gives them.

Guaranteed pods only; others get no hints (and no memory). A pod that sets pod-level
resources (``spec.resources``, with the PodLevelResources gate on) gets none either, in
container and pod scope (kubelet 1.34).

* A container (pod, in pod scope) that already holds memory blocks regenerates one
  preferred hint per block, or gives *no preference* when the blocks do not match the
  request.
* Otherwise every mask of NUMA nodes (all nodes with memory, CPU-less ones included, in the
  kubelet's order) is a hint for every requested type when: its **allocatable** memory
  covers the request (this also sets the minimal affinity), it respects the group rule
  (:meth:`MemoryState.violates_groups`), and its **free** memory (+ memory reusable from the
  pod's init containers) covers the request. Preferred: the hints with the minimal affinity.
* No mask at all gives an empty answer, which the topology manager treats as no preference
  (the allocation then fails).

Form: up to ``IMPLICIT_AFTER`` nodes the hints are listed as the kubelet lists them; past it
(or when asked) the same list comes as a rule (:class:`MultiCapacityHintSource`): nodes
serving no allocation form the family (any mask of them whose free memory covers every
request); nodes serving allocations can only appear alone or as their exact group, and
masks the pod's init containers left memory on get that memory on top, so those few masks
are checked one by one and become the rule's extras. :func:`best_hint` (the kubelet's
``findBestHint`` over these hints, used by allocation) follows the same switch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType

from cpumanager.core.bitmask import NUMAMask, iterate_masks
from cpumanager.core.hints.hint import ResourceHints, TopologyHint
from cpumanager.core.hints.limits import implicit_for
from cpumanager.core.hints.source import (
    MultiCapacityHintSource,
    bits_of,
    fewest_nodes,
    smallest_mask,
)
from cpumanager.core.ids import PodUID
from cpumanager.core.memory.requests import container_memory_requests, pod_memory_requests
from cpumanager.core.memory.state import MemoryBlock, MemoryState
from cpumanager.core.workload import Container, Pod, QoSClass, pod_level_resources_set, qos_class

__all__ = ["MemoryHints", "best_hint", "memory_hints"]

# One answer per requested type: listed hints or the rule (an empty mapping: no preference).
MemoryHints = dict[str, ResourceHints | MultiCapacityHintSource]


def memory_hints(
    state: MemoryState,
    pod: Pod,
    container: Container | None,
    *,
    implicit: bool | None = None,
    pod_level_resources: bool = True,
) -> MemoryHints:
    """The memory manager's hints for ``container`` (the pod's peak need when None, pod scope).

    ``implicit`` picks the form: a list (False), a rule (True), or by the machine's size
    (None: a rule past ``IMPLICIT_AFTER`` NUMA nodes). Both forms hold the same hints.
    """
    found = _request_and_blocks(state, pod, container, pod_level_resources=pod_level_resources)
    if found is None:
        return {}
    requests, blocks = found
    if blocks is not None:
        return _regenerate(blocks, requests)
    if _as_rule(state, implicit):
        source = _rule(state, pod.uid, requests)
        return {} if source is None else dict.fromkeys(requests, source)
    listed = _listed(state, pod.uid, requests)
    return {} if not listed else dict.fromkeys(requests, listed)


def _as_rule(state: MemoryState, implicit: bool | None) -> bool:
    return implicit_for(len(state.nodes)) if implicit is None else implicit


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


def _regenerate(blocks: tuple[MemoryBlock, ...], requests: Mapping[str, int]) -> MemoryHints:
    if len(blocks) != len(requests):
        return {}
    hints: dict[str, list[TopologyHint]] = {resource: [] for resource in requests}
    for block in blocks:
        if block.resource not in requests or block.size != requests[block.resource]:
            return {}
        hints[block.resource].append(TopologyHint(block.mask, preferred=True))
    return {resource: tuple(found) for resource, found in hints.items()}


def _listed(
    state: MemoryState, pod_uid: PodUID, requests: Mapping[str, int]
) -> tuple[TopologyHint, ...]:
    """The masks the memory manager offers, enumerated (same list for every requested type)."""
    min_affinity = len(state.nodes)
    found: list[NUMAMask] = []
    for mask in iterate_masks(state.node_ids()):
        nodes = mask.ids()
        if not state.allocatable_covers(nodes, requests):
            continue
        min_affinity = min(min_affinity, len(nodes))
        if _offered(state, pod_uid, mask, requests):
            found.append(mask)
    return tuple(TopologyHint(mask, mask.count() == min_affinity) for mask in found)


def _offered(
    state: MemoryState, pod_uid: PodUID, mask: NUMAMask, requests: Mapping[str, int]
) -> bool:
    """A mask whose allocatable memory covers the request is a hint when it keeps the group
    rule and its free memory (with the pod's reusable memory) covers the request."""
    return not state.violates_groups(mask.ids(), hinting=True) and state.free_covers(
        mask, requests, reusing=pod_uid
    )


def _rule(
    state: MemoryState, pod_uid: PodUID, requests: Mapping[str, int]
) -> MultiCapacityHintSource | None:
    """The list :func:`_listed` returns, as a rule (None: the list is empty)."""
    resources = tuple(sorted(requests))
    needs = tuple(requests[r] for r in resources)
    order = state.node_ids()
    allocatable = {n: tuple(state.allocatable(n, r) for r in resources) for n in order}
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
        if state.allocatable_covers(nodes, requests) and _offered(state, pod_uid, mask, requests):
            extras.append(TopologyHint(mask, len(nodes) == min_affinity))
    if not extras and family.min_size() == 0:
        return None
    return replace(family, extra_hints=tuple(extras))


def best_hint(
    state: MemoryState,
    pod_uid: PodUID,
    requests: Mapping[str, int],
    *,
    containing: int = 0,
    implicit: bool | None = None,
) -> TopologyHint | None:
    """The kubelet's ``findBestHint`` (preferred first, then narrower; the masks are distinct,
    so there are no ties) over the hints whose masks hold the ``containing`` bits: the
    allocation's default hint and its widening. ``implicit`` as in :func:`memory_hints`."""
    if not _as_rule(state, implicit):
        found = [h for h in _listed(state, pod_uid, requests) if _holds(h, containing)]
        return min(found, key=TopologyHint.sort_key, default=None)
    source = _rule(state, pod_uid, requests)
    if source is None:
        return None
    found = [h for h in source.extras() if _holds(h, containing)]
    if not containing & ~source.universe:
        for size in range(max(1, containing.bit_count()), source.universe.bit_count() + 1):
            bits = smallest_mask(
                source.universe, size, source.free, source.needs, required=containing
            )
            if bits is not None:
                found.append(TopologyHint(NUMAMask.from_bits(bits), size == source.preferred_size))
                break
    return min(found, key=TopologyHint.sort_key, default=None)


def _holds(hint: TopologyHint, bits: int) -> bool:
    return hint.mask is not None and hint.mask.bits & bits == bits
