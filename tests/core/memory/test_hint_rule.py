"""The memory manager's hints as a rule (used past 8 NUMA nodes) against its enumeration.

Random machines of up to 6 nodes go through random allocations (single nodes, groups,
init containers whose memory the app container may reuse, releases); then the rule's
explicit expansion must equal the enumerated list, and the rule's best hint (the one the
allocation falls back to or widens to) must equal ``findBestHint`` over the enumeration.
A 64-node machine shows the rule answers without enumerating.
"""

from __future__ import annotations

import contextlib
import os
from fractions import Fraction

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.hints.hint import TopologyHint
from cpumanager.core.hints.source import MultiCapacityHintSource
from cpumanager.core.ids import ContainerName, PodUID
from cpumanager.core.memory import (
    MemoryState,
    allocate_memory,
    best_hint,
    container_memory_requests,
    memory_hints,
    remove_container_memory,
)
from cpumanager.core.workload import Container, ContainerKind, Pod
from cpumanager.errors import UnexpectedAdmissionError

PAGES = "hugepages-2Mi"


def _container(name: str, memory: int, pages: int, kind: ContainerKind) -> Container:
    limits = {"cpu": Fraction(1), "memory": Fraction(memory)}
    if pages:
        limits[PAGES] = Fraction(pages)
    return Container(ContainerName(name), requests=dict(limits), limits=limits, kind=kind)


@st.composite
def machines(draw: st.DrawFn) -> MemoryState:
    ids = sorted(draw(st.sets(st.integers(0, 7), min_size=1, max_size=6)))
    memory: dict[int, int] = {}
    pages: dict[int, dict[str, int]] = {}
    reserved: dict[int, dict[str, int]] = {}
    for node in ids:
        huge = draw(st.integers(0, 4))
        size = huge + draw(st.integers(0, 8))
        memory[node] = size
        pages[node] = {PAGES: huge} if huge or draw(st.booleans()) else {}
        reserved[node] = {"memory": draw(st.integers(0, size - huge))}
    return MemoryState.create(memory, hugepages=pages, system_reserved=reserved)


def _masks(state: MemoryState) -> st.SearchStrategy[TopologyHint | None]:
    ids = state.node_ids()
    return st.none() | st.builds(
        lambda picked, pref: TopologyHint(NUMAMask(picked), pref),
        st.lists(st.sampled_from(ids), min_size=1, unique=True),
        st.booleans(),
    )


@st.composite
def histories(draw: st.DrawFn) -> tuple[MemoryState, Pod, Container]:
    """A machine after random allocations and releases, and the container to place next."""
    state = draw(machines())
    live = []
    for index in range(draw(st.integers(0, 5))):
        if live and draw(st.integers(0, 3)) == 0:
            state = remove_container_memory(state, live.pop(draw(st.integers(0, len(live) - 1))))
            continue
        box = _container("c", draw(st.integers(1, 10)), draw(st.integers(0, 4)), ContainerKind.APP)
        the_pod = Pod(uid=PodUID(f"p{index}"), name=f"p{index}", containers=(box,))
        try:
            state = allocate_memory(state, the_pod, box, draw(_masks(state))).state
        except UnexpectedAdmissionError:
            continue
        live.append(the_pod.key(box.name))
    app = _container("app", draw(st.integers(1, 12)), draw(st.integers(0, 5)), ContainerKind.APP)
    init = _container("init", draw(st.integers(1, 10)), draw(st.integers(0, 4)), ContainerKind.INIT)
    with_init = draw(st.booleans())
    query = Pod(
        uid=PodUID("q"), name="q", containers=(app,), init_containers=(init,) if with_init else ()
    )
    if with_init:
        with contextlib.suppress(UnexpectedAdmissionError):
            state = allocate_memory(state, query, init, draw(_masks(state))).state
    return state, query, app


def _expanded(answer: dict[str, object]) -> dict[str, object]:
    return {
        resource: value.explicit() if isinstance(value, MultiCapacityHintSource) else value
        for resource, value in answer.items()
    }


# A bounded slice in the normal run; CPUMANAGER_SLOW=1 runs the long fuzz.
_EXAMPLES = 3000 if os.environ.get("CPUMANAGER_SLOW") else 150
_SETTINGS = settings(
    max_examples=_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@_SETTINGS
@given(histories())
def test_rule_expands_to_the_enumerated_hints(case: tuple[MemoryState, Pod, Container]) -> None:
    state, the_pod, app = case
    for container in (app, None):
        listed = memory_hints(state, the_pod, container, implicit=False)
        assert _expanded(memory_hints(state, the_pod, container, implicit=True)) == listed


@_SETTINGS
@given(histories(), st.data())
def test_rule_finds_the_same_best_hint(
    case: tuple[MemoryState, Pod, Container], data: st.DataObject
) -> None:
    state, the_pod, app = case
    requests = container_memory_requests(app)
    assert requests is not None
    containing = data.draw(st.sampled_from([0, *(1 << n for n in state.node_ids())]))
    expected = best_hint(state, the_pod.uid, requests, containing=containing, implicit=False)
    ruled = best_hint(state, the_pod.uid, requests, containing=containing, implicit=True)
    assert ruled == expected


def test_sixty_four_nodes_answer_without_enumerating() -> None:
    gib = 2**30
    state = MemoryState.create(dict.fromkeys(range(64), 16 * gib))
    box = _container("app", 40 * gib, 0, ContainerKind.APP)
    the_pod = Pod(uid=PodUID("big"), name="big", containers=(box,))
    source = memory_hints(state, the_pod, box)["memory"]  # a rule: 64 nodes is past the limit
    assert isinstance(source, MultiCapacityHintSource)
    assert source.min_size() == 3
    assert source.preferred_size == 3
    assert source.preferred(0b111)
    assert not source.feasible(0b11)
    done = allocate_memory(state, the_pod, box, None)
    assert [block.numa_affinity for block in done.blocks] == [(0, 1, 2)]
    # Nodes 0-2 now serve one group: the rule keeps them out and offers the group as an extra.
    small = _container("app", 8 * gib, 0, ContainerKind.APP)
    next_pod = Pod(uid=PodUID("next"), name="next", containers=(small,))
    after = memory_hints(done.state, next_pod, small)["memory"]
    assert isinstance(after, MultiCapacityHintSource)
    assert not after.universe & 0b111
    assert [h.mask for h in after.extras()] == [NUMAMask((0, 1, 2))]
    assert after.extras()[0].preferred is False
