from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cpumanager.core.cpuset import CPUSet
from cpumanager.core.ids import ContainerName, PodUID
from cpumanager.core.state import StateSnapshot
from tests.builders import cpus, snapshot

ALL = cpus("0-7")


@pytest.mark.parametrize(
    ("state", "problem"),
    [
        pytest.param(snapshot("0-7"), None, id="fresh"),
        pytest.param(snapshot("4-7", p1={"c": "0-3"}), None, id="one-pod"),
        pytest.param(snapshot("4-7", p1={"a": "0-1", "b": "0-3"}), None, id="init-reuse"),
        pytest.param(snapshot("4-7", p1={"c": "0-3"}, p2={"c": "3"}), "another pod", id="ovl"),
        pytest.param(snapshot("3-7", p1={"c": "0-3"}), "default set", id="default-overlap"),
        pytest.param(snapshot("5-7", p1={"c": "0-3"}), "machine's CPUs", id="missing-cpu"),
        pytest.param(snapshot("4-7", p1={"c": ""}), "empty set", id="empty"),
    ],
)
def test_invariant_violations(state: StateSnapshot, problem: str | None) -> None:
    found = state.invariant_violations(ALL)
    if problem is None:
        assert found == ()
    else:
        assert any(problem in text for text in found), found


def test_reserved_and_strict_reservation() -> None:
    state = snapshot("2-7", p1={"c": "0-1"})
    assert any("reserved" in p for p in state.invariant_violations(ALL, reserved=cpus("0")))
    strict = snapshot("4-7", p1={"c": "1-3"})
    assert strict.invariant_violations(ALL, reserved=cpus("0"), strict_reservation=True) == ()
    assert strict.invariant_violations(ALL, reserved=cpus("0")) != ()


def test_changes_return_new_snapshots() -> None:
    base = snapshot("0-7")
    pod, name = PodUID("p"), ContainerName("c")
    changed = base.with_assignment(pod, name, cpus("0-1")).with_default(cpus("2-7"))
    assert base == snapshot("0-7")
    assert changed.cpuset_of(pod, name) == cpus("0-1")
    assert changed.cpuset_or_default(pod, ContainerName("x")) == cpus("2-7")
    assert changed.without_assignment(pod, name).assignments == {}
    assert changed.without_assignment(pod, ContainerName("missing")) is changed
    assert changed.pod_cpus(pod) == cpus("0-1")
    assert changed.assigned_cpus() == cpus("0-1")
    assert list(changed.container_keys()) == [(pod, name)]
    assert changed.cleared() == StateSnapshot("static")


def test_snapshot_is_immutable() -> None:
    state = snapshot("0-3", p={"c": "4"})
    with pytest.raises(AttributeError):
        state.policy_name = "none"  # type: ignore[misc]
    with pytest.raises(TypeError):
        state.assignments[PodUID("q")] = {}  # type: ignore[index]


@given(st.lists(st.tuples(st.sampled_from("pqr"), st.sampled_from("abc"), st.integers(0, 7))))
def test_partitioning_keeps_invariants(steps: list[tuple[str, str, int]]) -> None:
    state = StateSnapshot("static", ALL)
    for pod_name, container_name, cpu in steps:
        one = CPUSet([cpu])
        if one <= state.default_cpuset:
            key = (PodUID(pod_name), ContainerName(container_name))
            held = state.cpuset_of(*key) or CPUSet()
            state = state.with_assignment(*key, held | one).with_default(state.default_cpuset - one)
        assert state.invariant_violations(ALL) == ()


def test_the_constructor_sorts_what_it_is_given() -> None:
    state = StateSnapshot(
        "static",
        cpus("0"),
        {PodUID("b"): {ContainerName("y"): cpus("1"), ContainerName("x"): cpus("2")},
         PodUID("a"): {}},
    )  # fmt: skip
    assert list(state.assignments) == ["a", "b"]
    assert list(state.assignments["b"]) == ["x", "y"]


def test_from_sorted_adopts_sorted_mappings_and_equals_the_constructor() -> None:
    from types import MappingProxyType

    inner = MappingProxyType({ContainerName("x"): cpus("2"), ContainerName("y"): cpus("1")})
    outer = MappingProxyType({PodUID("a"): MappingProxyType({}), PodUID("b"): inner})
    adopted = StateSnapshot.from_sorted("static", cpus("0"), outer)
    built = StateSnapshot("static", cpus("0"), {"b": {"y": cpus("1"), "x": cpus("2")}, "a": {}})
    assert adopted == built
    assert adopted.assignments is outer  # no copy
    assert list(adopted.assignments) == list(built.assignments)
    assert [list(c) for c in adopted.assignments.values()] == [
        list(c) for c in built.assignments.values()
    ]
    assert hash(adopted) == hash(built)
    with pytest.raises(AttributeError):
        adopted.policy_name = "none"  # type: ignore[misc]


@given(
    st.lists(
        st.tuples(st.sampled_from("rqp"), st.sampled_from("cba"), st.integers(0, 7), st.booleans())
    )
)
def test_changes_keep_the_frozen_sorted_form(steps: list[tuple[str, str, int, bool]]) -> None:
    state = StateSnapshot("static", CPUSet.range(0, 8))
    plain: dict[PodUID, dict[ContainerName, CPUSet]] = {}
    for pod_uid, name, cpu, add in steps:
        pod, container = PodUID(pod_uid), ContainerName(name)
        if add:
            two_steps = state.with_assignment(pod, container, CPUSet([cpu]))
            rest = two_steps.default_cpuset - CPUSet([cpu])
            one_step = state.with_assignment(pod, container, CPUSet([cpu]), default=rest)
            assert one_step == two_steps.with_default(rest)
            assert list(one_step.assignments) == list(two_steps.assignments)
            assert [list(c) for c in one_step.assignments.values()] == [
                list(c) for c in two_steps.assignments.values()
            ]
            state = two_steps
            plain.setdefault(pod, {})[container] = CPUSet([cpu])
        else:
            state = state.without_assignment(pod, container)
            plain.get(pod, {}).pop(container, None)
            if pod in plain and not plain[pod]:
                del plain[pod]
        state = state.with_default(CPUSet.range(0, 8) - state.assigned_cpus())
        rebuilt = StateSnapshot("static", state.default_cpuset, plain)  # frozen from scratch
        assert state == rebuilt
        assert list(state.assignments) == list(rebuilt.assignments)
        assert [list(c) for c in state.assignments.values()] == [
            list(c) for c in rebuilt.assignments.values()
        ]
        assert repr(state) == repr(rebuilt)
