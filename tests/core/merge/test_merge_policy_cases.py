"""Kubelet topology-manager unit tests not already in tests/data/merge_vectors.json.

Facts ported (inputs and expected outputs) from pkg/kubelet/cm/topologymanager: the
admission rule of each policy (``canAdmitPodResult``), ``filterProvidersHints``, the NUMA
distance average and the ``Closest`` tie-break (numa_info_test.go), ``NewNUMAInfo`` and the
policy options parser (policy_options_test.go). Every row id starts with the kubelet test's
name. Merge rows run through both merges, exact and fast, which must agree.

Not ported, and why: the merge tables of policy_test.go, TestMaxOfMinAffinityCounts,
TestCompareHintsNarrowest, TestPolicySingleNumaNodeFilterHints, TestPolicyNoneMerge and all
of bitmask_test.go are already in tests/data/*_vectors.json; numa_info_test.go's
TestGetDistances / TestSplitDistances read sysfs files (adapters, not the merge); tests of
hint scores and allocation strategies, ``allowed-numa-nodes`` and requested NUMA placement
come from prototypes that no kubelet release ships.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

import pytest

from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.hints.hint import NO_PREFERENCE, TopologyHint
from cpumanager.core.merge.exact import (
    AnyProviderHints,
    HintMerger,
    filter_providers_hints,
    merge_exact,
    min_affinity_count,
)
from cpumanager.core.merge.fast import merge_fast
from cpumanager.core.merge.options import (
    NUMAInfo,
    TopologyPolicyOptions,
    build_topology_manager_config,
    parse_policy_options,
)
from cpumanager.core.merge.policies import merge
from cpumanager.errors import ConfigError

Maturity: TypeAlias = Literal["alpha", "beta", "stable"]

TWO = NUMAInfo.of([0, 1], {0: [10, 11], 1: [11, 10]})
FOUR_ROWS = {0: [10, 11, 12, 12], 1: [11, 10, 12, 12], 2: [12, 12, 10, 11], 3: [12, 12, 11, 10]}


def h(*nodes: int, preferred: bool = True) -> TopologyHint:
    return TopologyHint(NUMAMask.of(*nodes), preferred)


def nil(preferred: bool) -> TopologyHint:
    return TopologyHint(None, preferred)


def both(
    policy: str, numa: NUMAInfo, providers: Sequence[AnyProviderHints], *, closest: bool = False
) -> tuple[TopologyHint, bool]:
    """Merge with both methods; they must agree, and the shared answer is returned."""
    exact = merge_exact(policy, numa, providers, prefer_closest=closest)
    fast = merge_fast(policy, numa, providers, prefer_closest=closest)
    assert fast == exact
    return exact


# --- canAdmitPodResult: the merged hint decides admission --------------------------------

# (kubelet test, policy, the provider's single hint, expected merged hint, expected admit)
ADMIT_ROWS = [
    ("TestPolicyBestEffortCanAdmitPodResult-preferred false", "best-effort", nil(False),
     h(0, 1, preferred=False), True),
    ("TestPolicyBestEffortCanAdmitPodResult-preferred true", "best-effort", nil(True),
     h(0, 1), True),
    ("TestPolicyRestrictedCanAdmitPodResult-preferred false", "restricted", nil(False),
     h(0, 1, preferred=False), False),
    ("TestPolicyRestrictedCanAdmitPodResult-preferred true", "restricted", nil(True),
     h(0, 1), True),
    ("TestPolicySingleNumaNodeCanAdmitPodResult-preferred false", "single-numa-node",
     nil(False), nil(False), False),
    ("TestPolicySingleNumaNodeCanAdmitPodResult-preferred true", "single-numa-node",
     nil(True), nil(True), True),
    ("TestPolicyNoneCanAdmitPodResult-preferred false", "none", nil(False), nil(False), True),
    ("TestPolicyNoneCanAdmitPodResult-preferred true", "none", nil(True), nil(False), True),
]  # fmt: skip


@pytest.mark.parametrize(
    ("policy", "given", "merged", "admit"),
    [pytest.param(*row[1:], id=row[0]) for row in ADMIT_ROWS],
)
def test_can_admit_pod_result(
    policy: str, given: TopologyHint, merged: TopologyHint, admit: bool
) -> None:
    assert both(policy, TWO, [{"resource": (given,)}]) == (merged, admit)
    assert merge(policy, TWO, [{"resource": (given,)}], method="exact").admit is admit


@pytest.mark.parametrize(
    "policy",
    [
        pytest.param("best-effort", id="TestPolicyBestEffortName"),
        pytest.param("restricted", id="TestPolicyRestrictedName"),
        pytest.param("single-numa-node", id="TestPolicySingleNumaNodeName"),
        pytest.param("none", id="TestPolicyNoneName"),
    ],
)
def test_policy_names(policy: str) -> None:
    config = build_topology_manager_config(policy=policy, numa_nodes=[0, 1])
    assert config.policy == policy
    assert merge(policy, TWO, []).policy == policy


# --- maxOfMinAffinityCounts: the kubelet's running minimum (from its source) ---------------

# (row, the counts of one list's non-nil masks in list order, the list's minimum)
MIN_COUNT_ROWS = [
    ("maxOfMinAffinityCounts-no masks", [], 0),
    ("maxOfMinAffinityCounts-plain minimum", [3, 1, 2], 1),
    ("maxOfMinAffinityCounts-empty mask first is overwritten", [0, 3], 3),
    ("maxOfMinAffinityCounts-empty mask last sticks", [3, 0], 0),
    ("maxOfMinAffinityCounts-empty mask between", [2, 0, 3], 3),
]


@pytest.mark.parametrize(
    ("counts", "expected"), [pytest.param(*row[1:], id=row[0]) for row in MIN_COUNT_ROWS]
)
def test_min_affinity_count(counts: list[int], expected: int) -> None:
    assert min_affinity_count(counts) == expected


def test_empty_mask_before_a_wider_one_raises_bnp() -> None:
    """bnp is 3 here (not 1), so {1,3} (count 2) beats {0} (count 1) in the kubelet."""
    four = NUMAInfo.of([0, 1, 2, 3])
    empty = TopologyHint(NUMAMask(), False)
    providers: list[AnyProviderHints] = [
        {"r1": (h(0, preferred=False), h(1, 3, preferred=False))},
        {"r2": (empty, h(0, 1, 3, preferred=False))},
    ]
    assert both("best-effort", four, providers) == (h(1, 3, preferred=False), True)


# --- filterProvidersHints: one list per resource, absence mapped the kubelet's way ------------

# (kubelet test row, providers' answers, expected {resource: [lists]})
FILTER_ROWS: list[tuple[str, list[AnyProviderHints], Mapping[str, list[list[TopologyHint]]]]] = [
    ("TestFilterProvidersHints-no providers", [], {}),
    ("TestFilterProvidersHints-provider with no preference for any resource", [None],
     {"": [[nil(True)]]}),
    ("TestFilterProvidersHints-provider with no preference for a resource",
     [{"cpu": NO_PREFERENCE}], {"cpu": [[nil(True)]]}),
    ("TestFilterProvidersHints-provider with no possible affinity for a resource",
     [{"cpu": ()}], {"cpu": [[nil(False)]]}),
    ("TestFilterProvidersHints-several resources from several providers",
     [{"cpu": (h(0), h(1))}, {"memory": (h(1),), "nvidia.com/gpu": (h(0, preferred=False),)},
      None],
     {"cpu": [[h(0), h(1)]], "memory": [[h(1)]], "nvidia.com/gpu": [[h(0, preferred=False)]],
      "": [[nil(True)]]}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("providers", "expected"), [pytest.param(*row[1:], id=row[0]) for row in FILTER_ROWS]
)
def test_filter_providers_hints(
    providers: list[AnyProviderHints], expected: Mapping[str, list[list[TopologyHint]]]
) -> None:
    got: dict[str, list[list[TopologyHint]]] = {}
    for (_index, resource), raw in filter_providers_hints(providers):
        hints = [
            TopologyHint(None if bits is None else NUMAMask.from_bits(bits), pref)
            for bits, pref in raw
        ]
        got.setdefault(resource, []).append(hints)
    assert got == expected


# --- numa_info_test.go ----------------------------------------------------------------------

# (kubelet test row, node ids in the mask, distance rows by node id, expected average)
AVERAGE_ROWS: list[tuple[str, list[int], dict[int, list[int]], float]] = [
    ("TestCalculateAvgDistanceFor-1 NUMA node", [0], {0: [10]}, 10),
    ("TestCalculateAvgDistanceFor-2 NUMA node, 1 set in bitmask", [0],
     {0: [10, 11], 1: [11, 10]}, 10),
    ("TestCalculateAvgDistanceFor-2 NUMA node, 2 set in bitmask", [0, 1],
     {0: [10, 11], 1: [11, 10]}, 10.5),
    ("TestCalculateAvgDistanceFor-4 NUMA node, 2 set in bitmask", [0, 2], FOUR_ROWS, 11),
    ("TestCalculateAvgDistanceFor-4 NUMA node, 3 set in bitmask", [0, 2, 3], FOUR_ROWS,
     11.11111111111111),
    ("TestCalculateAvgDistanceFor-0 NUMA node, 0 set in bitmask", [], {}, 0),
]  # fmt: skip


@pytest.mark.parametrize(
    ("mask", "rows", "expected"), [pytest.param(*row[1:], id=row[0]) for row in AVERAGE_ROWS]
)
def test_average_distance(mask: list[int], rows: dict[int, list[int]], expected: float) -> None:
    numa = NUMAInfo.of(sorted(rows), rows)
    assert numa.average_distance(NUMAMask(mask).bits) == expected


SAME = {n: [10, 10, 10, 10] for n in range(4)}

# (kubelet test row, current, candidate, distance rows, which one Closest keeps)
CLOSEST_ROWS: list[tuple[str, list[int], list[int], dict[int, list[int]], str]] = [
    ("TestClosest-length differs, current narrower", [0], [0, 2], {}, "current"),
    ("TestClosest-same length and distance, current has lower bits", [0, 1], [0, 2], SAME,
     "current"),
    ("TestClosest-same length and distance, candidate has lower bits", [0, 3], [0, 2], SAME,
     "candidate"),
    ("TestClosest-same length, candidate closer", [0, 3], [0, 1], FOUR_ROWS, "candidate"),
    ("TestClosest-same length, current closer", [2, 3], [0, 3], FOUR_ROWS, "current"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("current", "candidate", "rows", "kept"),
    [pytest.param(*row[1:], id=row[0]) for row in CLOSEST_ROWS],
)
def test_closest(
    current: list[int], candidate: list[int], rows: dict[int, list[int]], kept: str
) -> None:
    numa = NUMAInfo.of(sorted(rows), rows)
    merger = HintMerger(numa, (), closest=True, bnp=0)
    wins = merger.better(NUMAMask(current).bits, NUMAMask(candidate).bits)
    assert ("candidate" if wins else "current") == kept


# (kubelet test row, node ids, whether every node has a distance row, expected nodes or None)
NUMA_INFO_ROWS: list[tuple[str, list[int], bool, list[int] | None]] = [
    ("TestNUMAInfo-positive test 1 node", [0], True, [0]),
    ("TestNUMAInfo-positive test 2 nodes", [0, 1], True, [0, 1]),
    ("TestNUMAInfo-positive test 3 nodes", [0, 1, 2], True, [0, 1, 2]),
    ("TestNUMAInfo-positive test 4 nodes", [0, 1, 2, 3], True, [0, 1, 2, 3]),
    ("TestNUMAInfo-negative test 1 node (no distances for node 9)", [9], False, None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("nodes", "has_rows", "expected"), [pytest.param(*row[1:], id=row[0]) for row in NUMA_INFO_ROWS]
)
def test_numa_info(nodes: list[int], has_rows: bool, expected: list[int] | None) -> None:
    rows = {n: FOUR_ROWS[n] for n in nodes} if has_rows else {}
    if expected is None:
        with pytest.raises(ConfigError, match="error getting NUMA distances"):
            NUMAInfo.of(nodes, rows, require_distances=True)
        return
    numa = NUMAInfo.of(nodes, rows, require_distances=True)
    assert list(numa.nodes) == expected
    assert {n: list(numa.distances[n]) for n in nodes} == {n: FOUR_ROWS[n] for n in nodes}


# --- policy_options_test.go -------------------------------------------------------------------

FANCY_BETA = "fancy-new-option"
FANCY_ALPHA = "fancy-alpha-option"
# The option table of the release the test was written for: max-allowable-numa-nodes beta,
# prefer-closest-numa-nodes GA, plus the test's own made-up options.
BETA_ERA: dict[str, Maturity] = {
    "prefer-closest-numa-nodes": "stable",
    "max-allowable-numa-nodes": "beta",
    FANCY_BETA: "beta",
    FANCY_ALPHA: "alpha",
}
BETA_GATE = "TopologyManagerPolicyBetaOptions"
ALPHA_GATE = "TopologyManagerPolicyAlphaOptions"


@dataclass(frozen=True)
class OptionsRow:
    options: dict[str, str]
    gates: dict[str, bool]
    expected: TopologyPolicyOptions | None = None
    error: str = ""


# The kubelet test ignores the result once NewPolicyOptions fails; for its made-up options
# the kubelet's parser fails with "unsupported topologymanager option" after the gate check,
# which is what the two "success" rows below assert.
OPTIONS_ROWS = {
    "TestNewTopologyManagerOptions-PreferClosestNUMA set to true": OptionsRow(
        {"prefer-closest-numa-nodes": "true", "max-allowable-numa-nodes": "8"}, {},
        TopologyPolicyOptions(True, 8)),
    "TestNewTopologyManagerOptions-MaxAllowableNUMANodes set to 12": OptionsRow(
        {"max-allowable-numa-nodes": "12"}, {BETA_GATE: True}, TopologyPolicyOptions(False, 12)),
    "TestNewTopologyManagerOptions-beta gate not set": OptionsRow(
        {"max-allowable-numa-nodes": "8"}, {BETA_GATE: False},
        error="topology manager policy beta-level options not enabled,"),
    "TestNewTopologyManagerOptions-return empty TopologyManagerOptions": OptionsRow(
        {}, {}, TopologyPolicyOptions(False, 8)),
    "TestNewTopologyManagerOptions-error PreferClosestNUMANodes": OptionsRow(
        {"prefer-closest-numa-nodes": "not a boolean"}, {}, error="bad value for option"),
    "TestNewTopologyManagerOptions-error MaxAllowableNUMANodes": OptionsRow(
        {"max-allowable-numa-nodes": "can't parse to int"}, {ALPHA_GATE: True},
        error="unable to convert policy option to integer"),
    "TestNewTopologyManagerOptions-test beta options success": OptionsRow(
        {FANCY_BETA: "true"}, {BETA_GATE: True}, error="unsupported topologymanager option"),
    "TestNewTopologyManagerOptions-test beta options fail": OptionsRow(
        {FANCY_BETA: "true"}, {BETA_GATE: False},
        error="topology manager policy beta-level options not enabled,"),
    "TestNewTopologyManagerOptions-test alpha options success": OptionsRow(
        {FANCY_ALPHA: "true"}, {ALPHA_GATE: True}, error="unsupported topologymanager option"),
    "TestNewTopologyManagerOptions-test alpha options fail": OptionsRow(
        {FANCY_ALPHA: "true"}, {},
        error="topology manager policy alpha-level options not enabled,"),
}  # fmt: skip


@pytest.mark.parametrize("name", list(OPTIONS_ROWS))
def test_new_policy_options(name: str) -> None:
    row = OPTIONS_ROWS[name]
    if row.error:
        with pytest.raises(ConfigError) as info:
            parse_policy_options(row.options, feature_gates=row.gates, maturity=BETA_ERA)
        assert row.error in str(info.value)
        return
    got = parse_policy_options(row.options, feature_gates=row.gates, maturity=BETA_ERA)
    assert got == row.expected


# (kubelet test row, option, gate, gate value, available); current table: both options GA.
AVAILABLE_ROWS: list[tuple[str, str, str, bool, bool]] = [
    ("TestPolicyDefaultsAvailable-unknown option", "this-option-does-not-exist", "", False, False),
    ("TestPolicyDefaultsAvailable-prefer-closest", "prefer-closest-numa-nodes", "", False, True),
    ("TestPolicyDefaultsAvailable-max-allowable", "max-allowable-numa-nodes", "", False, True),
    ("TestPolicyOptionsAvailable-unknown, beta off", "this-option-does-not-exist", BETA_GATE,
     False, False),
    ("TestPolicyOptionsAvailable-unknown, beta on", "this-option-does-not-exist", BETA_GATE,
     True, False),
    ("TestPolicyOptionsAvailable-prefer-closest, beta off", "prefer-closest-numa-nodes",
     BETA_GATE, False, True),
    ("TestPolicyOptionsAvailable-prefer-closest, alpha off", "prefer-closest-numa-nodes",
     ALPHA_GATE, False, True),
    ("TestPolicyOptionsAvailable-alpha option, alpha on", FANCY_ALPHA, ALPHA_GATE, True, True),
    ("TestPolicyOptionsAvailable-alpha option, alpha off", FANCY_ALPHA, ALPHA_GATE, False, False),
    ("TestPolicyOptionsAvailable-beta option, beta on", FANCY_BETA, BETA_GATE, True, True),
    ("TestPolicyOptionsAvailable-beta option, beta off", FANCY_BETA, BETA_GATE, False, False),
]  # fmt: skip


@pytest.mark.parametrize(
    ("option", "gate", "enabled", "available"),
    [pytest.param(*row[1:], id=row[0]) for row in AVAILABLE_ROWS],
)
def test_policy_option_available(option: str, gate: str, enabled: bool, available: bool) -> None:
    maturity: dict[str, Maturity] = {
        "prefer-closest-numa-nodes": "stable",
        "max-allowable-numa-nodes": "stable",
        FANCY_BETA: "beta",
        FANCY_ALPHA: "alpha",
    }
    gates = {gate: enabled} if gate else {}
    value = "8" if option == "max-allowable-numa-nodes" else "true"
    try:
        parse_policy_options({option: value}, feature_gates=gates, maturity=maturity)
        problem = ""
    except ConfigError as err:
        problem = str(err)
    # Past the availability check the made-up options fail as unsupported: still available.
    assert (not problem or "unsupported topologymanager option" in problem) is available
