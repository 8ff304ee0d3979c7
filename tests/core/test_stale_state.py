from __future__ import annotations

from dataclasses import replace
from typing import cast

from hypothesis import given, settings
from hypothesis import strategies as st

from cpumanager.core.containermap import ContainerMap
from cpumanager.core.ids import ContainerKey, ContainerName, PodUID
from cpumanager.core.stale_state import (
    StaleProof,
    active_containers,
    stale_keys,
    stale_keys_proved,
)
from cpumanager.core.state import StateSnapshot
from cpumanager.core.workload import Pod
from tests.builders import container, guaranteed, pod, snapshot


def key(p: str, c: str) -> ContainerKey:
    return ContainerKey(PodUID(p), ContainerName(c))


def test_active_containers_include_init_containers() -> None:
    active = active_containers([pod("p", container("app", "1"), init=(container("init", "1"),))])
    assert active == {PodUID("p"): frozenset({"app", "init"})}


def test_no_active_pods_releases_everything() -> None:
    state = snapshot("4-7", p1={"a": "0-1"}, p2={"b": "2-3"})
    assert stale_keys(state, (), {}) == (key("p1", "a"), key("p2", "b"))


def test_only_containers_missing_from_active_pods_are_stale() -> None:
    state = snapshot("4-7", p1={"a": "0-1", "gone": "2"}, p2={"b": "3"})
    active = active_containers([guaranteed("p1", a="2"), guaranteed("p2", b="1")])
    assert stale_keys(state, (), active) == (key("p1", "gone"),)


def test_container_map_entries_without_state_are_stale_once() -> None:
    state = snapshot("4-7", p1={"a": "0-1"})
    mapped = [key("p1", "a"), key("p9", "x"), key("p9", "x")]
    assert stale_keys(state, mapped, {}) == (key("p1", "a"), key("p9", "x"))


# --- stale_keys_proved: the proof-carrying check gives stale_keys' answer ---------------

UIDS = ("a", "b", "c")
NAMES = ("x", "y", "z")

pod_specs = st.tuples(
    st.sampled_from(UIDS), st.lists(st.sampled_from(NAMES), min_size=1, max_size=2, unique=True)
).map(lambda spec: pod(spec[0], *(container(n, "1") for n in spec[1])))
steps = st.lists(
    st.tuples(
        st.integers(0, 2),  # which snapshot
        st.integers(0, 2),  # which container map
        st.one_of(
            st.tuples(st.just("append"), st.integers(0, 3)),
            st.tuples(st.just("equal copy"), st.integers(0, 3)),
            st.tuples(st.just("reset"), st.lists(st.integers(0, 3), max_size=3)),
            st.tuples(st.just("pop"), st.just(0)),
            st.tuples(st.just("same"), st.just(0)),
        ),
    ),
    min_size=1,
    max_size=12,
)


def _refs(data: st.DataObject, pods: list[Pod]) -> list[tuple[str, str]]:
    """Some containers of the pods (so that states are often clean), maybe a stranger."""
    known = sorted({(str(p.uid), str(c.name)) for p in pods for c in p.all_containers()})
    refs = data.draw(st.lists(st.sampled_from(known), max_size=3, unique=True))
    if data.draw(st.booleans()):
        refs.append(data.draw(st.tuples(st.sampled_from(UIDS), st.sampled_from(NAMES))))
    return refs


def _state(refs: list[tuple[str, str]]) -> StateSnapshot:
    held: dict[str, dict[str, str]] = {}
    for number, (uid, name) in enumerate(refs):
        held.setdefault(uid, {})[name] = str(number)
    return snapshot("8-15", **held)


def test_a_later_pod_with_a_uid_holding_state_is_checked_again() -> None:
    state, first, second = (
        snapshot("4-7", a={"x": "0"}),
        guaranteed("a", x="1"),
        guaranteed("a", y="1"),
    )
    _, proof = stale_keys_proved(None, state, ContainerMap(), [first])
    assert proof.clean is not None  # nothing stale for [first]
    found, _ = stale_keys_proved(proof, state, ContainerMap(), [first, second])
    assert found == (key("a", "x"),)  # the later pod's names replace the earlier one's


@settings(max_examples=500, deadline=None)
@given(pods=st.lists(pod_specs, min_size=4, max_size=4), plan=steps, data=st.data())
def test_proved_check_equals_the_full_check(
    pods: list[Pod], plan: list[tuple[int, int, tuple[str, object]]], data: st.DataObject
) -> None:
    states = [_state(_refs(data, pods)) for _ in range(3)]
    maps = [
        ContainerMap((f"id-{i}", PodUID(u), ContainerName(n)) for i, (u, n) in enumerate(refs))
        for refs in ([], *(_refs(data, pods) for _ in range(2)))
    ]
    proof: StaleProof | None = None
    active: list[Pod] = []
    for state_no, map_no, (op, arg) in plan:
        if op == "append":
            active = [*active, pods[cast(int, arg)]]
        elif op == "equal copy":  # an equal pod object, not the same one
            active = [*active, replace(pods[cast(int, arg)])]
        elif op == "reset":
            active = [pods[i] for i in cast(list[int], arg)]
        elif op == "pop":
            active = active[:-1]
        state, cmap = states[state_no], maps[map_no]
        expected = stale_keys(state, cmap.keys(), active_containers(active))
        found, proof = stale_keys_proved(proof, state, cmap, active)
        assert found == expected
        assert proof.active == active_containers(proof.pods)
