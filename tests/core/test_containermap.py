"""ContainerMap: the kubelet's container ID <-> (pod UID, container name) semantics."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cpumanager.core.containermap import ContainerMap
from cpumanager.core.ids import ContainerID, ContainerKey, ContainerName, PodUID


def cmap(*rows: tuple[str, str, str]) -> ContainerMap:
    """Build from (container id, pod uid, container name) rows."""
    return ContainerMap((ContainerID(c), PodUID(p), ContainerName(n)) for c, p, n in rows)


def key(pod: str, name: str) -> ContainerKey:
    return ContainerKey(PodUID(pod), ContainerName(name))


def test_add_and_lookups() -> None:
    m = ContainerMap().add(PodUID("p"), ContainerName("c"), ContainerID("id1"))
    assert m.container_ref(ContainerID("id1")) == key("p", "c")
    assert m.container_id(PodUID("p"), ContainerName("c")) == "id1"
    assert m.container_ref(ContainerID("nope")) is None
    assert m.container_id(PodUID("p"), ContainerName("x")) is None
    assert len(m) == 1
    assert ContainerID("id1") in m


def test_add_overwrites_the_id_and_keeps_other_ids_of_the_same_container() -> None:
    m = cmap(("id1", "p", "c")).add(PodUID("p"), ContainerName("c"), ContainerID("id2"))
    assert m.as_dict() == {"id1": key("p", "c"), "id2": key("p", "c")}
    m = m.add(PodUID("q"), ContainerName("d"), ContainerID("id1"))
    assert m.container_ref(ContainerID("id1")) == key("q", "d")


def test_container_id_returns_the_first_in_insertion_order() -> None:
    m = cmap(("b", "p", "c"), ("a", "p", "c"))
    assert m.container_id(PodUID("p"), ContainerName("c")) == "b"


def test_remove_by_ref_removes_only_one_duplicate() -> None:
    m = cmap(("b", "p", "c"), ("a", "p", "c"), ("x", "q", "c"))
    once = m.remove_by_container_ref(PodUID("p"), ContainerName("c"))
    assert once.as_dict() == {"a": key("p", "c"), "x": key("q", "c")}
    assert once.remove_by_container_ref(PodUID("zz"), ContainerName("c")) is once


def test_remove_by_id_is_a_noop_for_unknown_ids() -> None:
    m = cmap(("a", "p", "c"))
    assert m.remove_by_container_id(ContainerID("nope")) is m
    assert len(m.remove_by_container_id(ContainerID("a"))) == 0


def test_newest_wins_keeps_one_id_per_container() -> None:
    m = ContainerMap.newest_wins(
        [
            (ContainerID("old"), PodUID("p"), ContainerName("c")),
            (ContainerID("other"), PodUID("p"), ContainerName("d")),
            (ContainerID("new"), PodUID("p"), ContainerName("c")),
        ]
    )
    assert m.as_dict() == {"other": key("p", "d"), "new": key("p", "c")}


def test_is_immutable_and_iteration_is_a_snapshot() -> None:
    m = cmap(("a", "p", "c"), ("b", "p", "d"))
    with pytest.raises(AttributeError):
        m._entries = {}  # type: ignore[misc]
    seen = []
    current = m
    for cid, _ref in m:
        current = current.remove_by_container_id(cid)
        seen.append(cid)
    assert seen == ["a", "b"]
    assert len(current) == 0
    assert len(m) == 2


def test_keys_equality_hash_and_repr() -> None:
    m = cmap(("a", "p", "c"), ("b", "p", "c"), ("x", "q", "d"))
    assert m.keys() == (key("p", "c"), key("q", "d"))
    assert m == cmap(("a", "p", "c"), ("b", "p", "c"), ("x", "q", "d"))
    assert hash(m) == hash(cmap(("a", "p", "c"), ("b", "p", "c"), ("x", "q", "d")))
    assert m != cmap(("b", "p", "c"), ("a", "p", "c"), ("x", "q", "d"))
    assert m.__eq__(1) is NotImplemented
    assert "a: p/c" in repr(m)
    assert m.ref(ContainerID("a")) == key("p", "c")
    assert len(m.remove_id(ContainerID("a")).remove_ref(PodUID("q"), ContainerName("d"))) == 1


ROWS = st.lists(st.tuples(st.sampled_from("abcd"), st.sampled_from("pq"), st.sampled_from("xy")))


@given(ROWS)
def test_changes_never_touch_the_original(rows: list[tuple[str, str, str]]) -> None:
    m = cmap(*rows)
    before = m.as_dict()
    for cid, pod, name in rows:
        m.add(PodUID(pod), ContainerName(name), ContainerID(cid + "!"))
        m.remove_by_container_id(ContainerID(cid))
        m.remove_by_container_ref(PodUID(pod), ContainerName(name))
    assert m.as_dict() == before
