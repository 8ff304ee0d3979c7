"""Placement and capacity from per-node answers (pure)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cpumanager.fleet.placement import (
    UNUSABLE,
    CopyVerdict,
    NodeAnswer,
    capacity,
    place,
    score,
)


def _node(name: str, scores: list[int], refusal: str | None = "OutOfcpu") -> NodeAnswer:
    copies = [CopyVerdict(True, free_cpus=s, score=s) for s in scores]
    if refusal is not None:
        copies.append(CopyVerdict(False, refusal, f"{name} says no"))
    return NodeAnswer(name, tuple(copies), limit=100)


def test_score_is_the_free_share_in_tenths() -> None:
    assert score(64, 64) == 10
    assert score(31, 64) == 4
    assert score(0, 64) == 0
    assert score(5, 0) == 0


def test_each_replica_goes_to_the_best_next_copy() -> None:
    answers = [_node("a", [6, 2]), _node("b", [5, 4, 3]), _node("c", [], "TopologyAffinityError")]
    fit = place(answers, 4)
    assert fit.placements == ("a", "b", "b", "b")
    assert fit.per_node == {"a": 1, "b": 3}
    reasons = {g.reason: g.nodes for g in fit.rejections}
    assert reasons == {"OutOfcpu": ("b",), "TopologyAffinityError": ("c",)}


def test_ties_go_to_more_free_cpus_then_the_name() -> None:
    tied = [
        NodeAnswer("b", (CopyVerdict(True, free_cpus=9, score=5),)),
        NodeAnswer("a", (CopyVerdict(True, free_cpus=9, score=5),)),
        NodeAnswer("c", (CopyVerdict(True, free_cpus=10, score=5),)),
    ]
    assert place(tied, 3).placements == ("c", "a", "b")


def test_unschedulable_replicas_and_unusable_snapshots() -> None:
    answers = [_node("a", [3]), NodeAnswer("bad", error="the snapshot has no machine")]
    fit = place(answers, 3)
    assert fit.placements == ("a", None, None)
    assert fit.placed == 1
    reasons = {g.reason: g.nodes for g in fit.rejections}
    assert reasons == {"OutOfcpu": ("a",), UNUSABLE: ("bad",)}


def test_capacity_sums_nodes_and_flags_capped_ones() -> None:
    answers = [_node("a", [3, 2]), _node("b", [1, 1, 1], refusal=None), _node("c", [])]
    result = capacity(answers)
    assert result.per_node == {"a": 2, "b": 3, "c": 0}
    assert result.total == 5
    assert result.capped == ("b",)
    assert [(g.reason, g.nodes) for g in result.limits] == [("OutOfcpu", ("a", "c"))]


answer_lists = st.lists(
    st.tuples(st.lists(st.integers(0, 10), max_size=6), st.booleans()),
    max_size=8,
)


@given(answer_lists, st.integers(1, 40))
def test_placement_uses_exactly_the_admitted_copies(specs, replicas: int) -> None:
    answers = [
        _node(f"n{i}", scores, "OutOfcpu" if refused else None)
        for i, (scores, refused) in enumerate(specs)
    ]
    fit = place(answers, replicas)
    total = capacity(answers).total
    assert fit.placed == min(replicas, total)
    for answer in answers:
        assert fit.per_node.get(answer.node, 0) <= answer.admitted
    # unplaced replicas only once every node's admitted copies are used
    if fit.placed < replicas:
        assert all(fit.per_node.get(a.node, 0) == a.admitted for a in answers)
