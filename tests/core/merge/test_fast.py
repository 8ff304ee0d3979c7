"""The fast merge against every kubelet table, and on shapes the exact merge cannot reach."""

from __future__ import annotations

import pytest

from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.hints.hint import NO_PREFERENCE, TopologyHint
from cpumanager.core.hints.source import CapacityHintSource
from cpumanager.core.merge.exact import merge_exact
from cpumanager.core.merge.fast import FastStats, merge_fast
from cpumanager.core.merge.options import NUMAInfo, TopologyPolicyOptions
from cpumanager.core.merge.policies import merge
from cpumanager.errors import ConfigError
from tests.core.merge._vectors import MERGE_CASES, MergeCase


def _capacity(nodes: int, free: dict[int, int], need: int, preferred: int) -> CapacityHintSource:
    return CapacityHintSource(
        universe=(1 << nodes) - 1, free=free, need=need, preferred_size=preferred
    )


@pytest.mark.parametrize("expand_limit", [10, 0])
@pytest.mark.parametrize("case", MERGE_CASES, ids=lambda c: c.name)
def test_fast_merge_matches_kubelet(case: MergeCase, expand_limit: int) -> None:
    got = merge_fast(
        case.policy,
        case.numa,
        case.providers,
        prefer_closest=case.prefer_closest,
        expand_limit=expand_limit,
    )
    assert got == (case.expected, case.admit)


@pytest.mark.parametrize("method", ["fast", "exact"])
@pytest.mark.parametrize("case", MERGE_CASES[::7], ids=lambda c: c.name)
def test_policies_entry_point(case: MergeCase, method: str) -> None:
    options = TopologyPolicyOptions(prefer_closest_numa=case.prefer_closest)
    result = merge(case.policy, case.numa, case.providers, options=options, method=method)  # type: ignore[arg-type]
    assert (result.hint, result.admit) == (case.expected, case.admit)
    assert result.to_json()["admit"] is case.admit


def test_policies_reject_unknown_policy_and_method() -> None:
    numa = NUMAInfo.of([0, 1])
    with pytest.raises(ConfigError, match='unknown policy: "spread"'):
        merge("spread", numa, [])
    with pytest.raises(ConfigError, match="unknown merge method"):
        merge("restricted", numa, [], method="slow")  # type: ignore[arg-type]


def test_prefer_closest_needs_distances() -> None:
    numa = NUMAInfo.of([0, 1])
    options = TopologyPolicyOptions(prefer_closest_numa=True)
    with pytest.raises(ConfigError, match="error getting NUMA distances"):
        merge("best-effort", numa, [], options=options)


def test_source_outside_the_machine_is_refused() -> None:
    numa = NUMAInfo.of([0, 1])
    src = _capacity(3, {0: 1, 1: 1, 2: 1}, 1, 1)
    with pytest.raises(ConfigError, match="outside the machine"):
        merge_fast("best-effort", numa, [{"cpu": src}])


def test_implicit_source_without_hints_is_no_placement() -> None:
    numa = NUMAInfo.of([0, 1])
    src = _capacity(2, {0: 1, 1: 1}, 5, 2)
    assert src.explicit() == ()
    assert merge_fast("restricted", numa, [{"cpu": src}]) == (
        TopologyHint(NUMAMask.of(0, 1), False),
        False,
    )


# --- 64 NUMA nodes: answers checked by hand -------------------------------------------------

NODES_64 = NUMAInfo.of(
    list(range(64)),
    {a: [10 if a == b else 12 if a // 8 == b // 8 else 30 for b in range(64)] for a in range(64)},
)


def _gpu_on(nodes: list[int], count: int = 1) -> CapacityHintSource:
    return CapacityHintSource(
        universe=(1 << 64) - 1,
        free=dict.fromkeys(nodes, 1),
        need=count,
        preferred_size=count,
        unit="devices",
    )


def test_64_nodes_preferred_single_node() -> None:
    cpu = _capacity(64, dict.fromkeys(range(64), 4), 4, 1)
    gpu = _gpu_on([41, 50])
    stats = FastStats()
    got = merge_fast("restricted", NODES_64, [{"cpu": cpu}, {"gpu": gpu}], stats=stats)
    assert got == (TopologyHint(NUMAMask.of(41), True), True)
    assert stats.phase == "preferred"


def test_64_nodes_non_preferred_when_sizes_disagree() -> None:
    # CPUs need two nodes (4 each, 6 wanted); the GPU is only on node 63.
    cpu = _capacity(64, dict.fromkeys(range(64), 4), 6, 2)
    gpu = _gpu_on([63])
    stats = FastStats()
    hint, admit = merge_fast("restricted", NODES_64, [{"cpu": cpu}, {"gpu": gpu}], stats=stats)
    # bnp = 2: the numerically smallest achievable pair is {0, 63}... but {0,1} AND-s to a
    # pair too: the CPU hint {0,1} and the GPU hint {0,1,63} merge to {0,1}.
    assert hint == TopologyHint(NUMAMask.of(0, 1), False)
    assert admit is False
    assert stats.phase == "non-preferred"


def test_64_nodes_closest_pair() -> None:
    cpu = _capacity(64, dict.fromkeys(range(64), 4), 6, 2)
    free_cpu = CapacityHintSource(
        universe=(1 << 64) - 1, free=dict.fromkeys(range(16, 64), 4), need=6, preferred_size=2
    )
    got = merge_fast("best-effort", NODES_64, [{"cpu": free_cpu}], prefer_closest=True)
    assert got == (TopologyHint(NUMAMask.of(16, 17), True), True)
    assert merge_fast("best-effort", NODES_64, [{"cpu": cpu}, {"x": NO_PREFERENCE}])[0] == (
        TopologyHint(NUMAMask.of(0, 1), True)
    )


def test_explanation_names_the_blocking_resources() -> None:
    numa = NUMAInfo.of([0, 1, 2, 3])
    gpu = (TopologyHint(NUMAMask.of(1), True), TopologyHint(NUMAMask.of(0, 1), False))
    cpu = (
        TopologyHint(NUMAMask.of(0), True),
        TopologyHint(NUMAMask.of(2), True),
        TopologyHint(NUMAMask.of(0, 1), False),
    )
    result = merge("restricted", numa, [{"nvidia.com/gpu": gpu}, {"cpu": cpu}], explain=True)
    assert result.admit is False
    assert result.explanation is not None
    assert result.hint == TopologyHint(NUMAMask.of(0), False)
    assert result.explanation.blocking == ("nvidia.com/gpu",)
    summary = result.explanation.summary
    assert "nvidia.com/gpu: preferred only on node 1" in summary
    assert "cpu: preferred only on nodes 0,2" in summary
    assert "restricted rejects the pod" in summary
    assert result.explanation.to_json()["blocking"] == ["nvidia.com/gpu"]


def test_explanation_of_rules_and_absences() -> None:
    numa = NUMAInfo.of([0, 1])
    cpu = _capacity(2, {0: 2, 1: 4}, 3, 1)
    result = merge(
        "best-effort", numa, [None, {"cpu": cpu, "mem": NO_PREFERENCE, "dev": ()}], explain=True
    )
    assert result.explanation is not None
    lines = result.explanation.lines()
    assert lines[0] == "provider 0: no preference (any NUMA node)"
    assert lines[1].startswith("cpu: preferred only on node 1 (needs 3 free units")
    assert lines[3] == "dev: cannot be placed on any NUMA node (no hint fits)"
    assert result.explanation.blocking == ("dev",)
    assert "admitted anyway (best-effort)" in result.explanation.summary


def test_explanation_for_policy_none() -> None:
    result = merge("none", NUMAInfo.of([0]), [{"cpu": ()}], explain=True)
    assert result.hint == TopologyHint(None, False)
    assert result.explanation is not None
    assert result.explanation.resources == ()


def test_exact_and_fast_agree_on_a_preferred_widened_result() -> None:
    numa = NUMAInfo.of([0, 1])
    both = (TopologyHint(NUMAMask.of(0, 1), True),)
    narrow = (TopologyHint(NUMAMask.of(0), True), TopologyHint(NUMAMask.of(0, 1), True))
    providers = [{"a": both}, {"b": narrow}]
    assert merge_fast("restricted", numa, providers) == merge_exact("restricted", numa, providers)
    result = merge("restricted", numa, providers, explain=True)
    assert result.explanation is not None
    assert result.explanation.widened == ("b",)
