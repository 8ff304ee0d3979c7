"""The merge's front door walks short cross products as the kubelet does: same answers.

``merge`` drops the neutral lists (only a preferred nil hint) and, when what is left has at
most ``SMALL_WALK`` permutations and no rule, runs the kubelet's own walk instead of the fast
search. Both must give the kubelet's answer (``merge_exact`` over every list).
"""

from __future__ import annotations

from hypothesis import given, settings

from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.hints.hint import NO_PREFERENCE, TopologyHint
from cpumanager.core.merge import policies
from cpumanager.core.merge.exact import AnyProviderHints, merge_exact
from cpumanager.core.merge.fast import merge_fast
from cpumanager.core.merge.options import NUMAInfo, TopologyPolicyOptions
from cpumanager.core.merge.policies import merge
from tests.core.merge.test_differential import _HEALTH, merge_inputs


@settings(max_examples=400, deadline=None, suppress_health_check=_HEALTH)
@given(merge_inputs())
def test_front_door_equals_exact(case: tuple[str, NUMAInfo, list[AnyProviderHints], bool]) -> None:
    policy, numa, providers, closest = case
    expected = merge_exact(policy, numa, providers, prefer_closest=closest)
    options = TopologyPolicyOptions(prefer_closest_numa=closest)
    result = merge(policy, numa, providers, options=options)
    assert (result.hint, result.admit) == expected
    small = policies._merge_small(
        policy, numa, providers, closest=closest and policy != "single-numa-node"
    )
    assert small is None or (small.hint, small.admit) == expected
    # answers are kept by everything the walk reads: earlier examples' entries serve later
    # ones with the same key, and each must still be merge_exact's
    again = merge(policy, numa, providers, options=options)
    assert (again.hint, again.admit) == expected


def test_kept_answers_are_bounded_and_explained_calls_get_their_explanation() -> None:
    numa = NUMAInfo.of([0, 1])
    cpu = _hints((0b01, True), (0b10, True), (0b11, False))
    quiet = merge("restricted", numa, [{"cpu": cpu}])
    assert quiet.explanation is None
    assert merge("restricted", numa, [{"cpu": cpu}]) is quiet  # kept
    explained = merge("restricted", numa, [{"cpu": cpu}], explain=True)
    assert explained.explanation is not None
    assert (explained.hint, explained.admit) == (quiet.hint, quiet.admit)
    for bits in range(policies.SMALL_ANSWERS_LIMIT + 5):
        merge("best-effort", NUMAInfo.of(range(13)), [{"cpu": _hints((bits + 1, True))}])
    assert len(policies._SMALL_ANSWERS) <= policies.SMALL_ANSWERS_LIMIT


def _hints(*masks: tuple[int, bool]) -> tuple[TopologyHint, ...]:
    return tuple(TopologyHint(NUMAMask.from_bits(bits), pref) for bits, pref in masks)


def test_neutral_lists_are_dropped_and_long_walks_left_to_the_fast_merge() -> None:
    numa = NUMAInfo.of([0, 1, 2, 3])
    cpu = _hints((0b0001, True), (0b0010, True), (0b0011, False), (0b1111, False))
    neutral: list[AnyProviderHints] = [None, {}, {"memory": NO_PREFERENCE}]
    for policy in ("best-effort", "restricted", "single-numa-node"):
        short = policies._merge_small(policy, numa, [{"cpu": cpu}, *neutral], closest=False)
        assert short is not None
        assert (short.hint, short.admit) == merge_exact(policy, numa, [{"cpu": cpu}, *neutral])
    wide = _hints(*((bits, bits.bit_count() == 1) for bits in range(1, 16)))
    many = [{"a": wide}, {"b": wide}, {"c": cpu}]  # 15 x 15 x 4 permutations
    assert policies._merge_small("restricted", numa, many, closest=False) is None
    assert merge("restricted", numa, many).hint == merge_fast("restricted", numa, many)[0]
