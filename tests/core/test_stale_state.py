from __future__ import annotations

from cpumanager.core.ids import ContainerKey, ContainerName, PodUID
from cpumanager.core.stale_state import active_containers, stale_keys
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
