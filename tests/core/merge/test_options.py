"""Topology Manager configuration: the kubelet's checks, order and error texts."""

from __future__ import annotations

import pytest

from cpumanager.core.merge.options import (
    NUMAInfo,
    TopologyPolicyOptions,
    build_topology_manager_config,
    parse_policy_options,
)
from cpumanager.errors import ConfigError

NINE = list(range(9))
ROWS = {n: [10 if n == m else 20 for m in range(9)] for n in range(9)}


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({}, TopologyPolicyOptions(False, 8)),
        ({"prefer-closest-numa-nodes": "true"}, TopologyPolicyOptions(True, 8)),
        ({"prefer-closest-numa-nodes": "F"}, TopologyPolicyOptions(False, 8)),
        ({"max-allowable-numa-nodes": "12"}, TopologyPolicyOptions(False, 12)),
        ({"max-allowable-numa-nodes": "+64"}, TopologyPolicyOptions(False, 64)),
        (
            {"max-allowable-numa-nodes": "8", "prefer-closest-numa-nodes": "1"},
            TopologyPolicyOptions(True, 8),
        ),
    ],
)
def test_parse_options(options: dict[str, str], expected: TopologyPolicyOptions) -> None:
    assert parse_policy_options(options) == expected


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"fancy": "true"}, 'unknown Topology Manager Policy option: "fancy"'),
        (
            {"prefer-closest-numa-nodes": "yes"},
            'bad value for option "prefer-closest-numa-nodes": strconv.ParseBool: parsing "yes": '
            "invalid syntax",
        ),
        (
            {"max-allowable-numa-nodes": "many"},
            'unable to convert policy option to integer "max-allowable-numa-nodes": strconv.Atoi: '
            'parsing "many": invalid syntax',
        ),
        (
            {"max-allowable-numa-nodes": "99999999999999999999"},
            "value out of range",
        ),
        (
            {"max-allowable-numa-nodes": "4"},
            'the minimum value of "max-allowable-numa-nodes" should not be less than 8',
        ),
        (
            {"max-allowable-numa-nodes": "0"},
            'the minimum value of "max-allowable-numa-nodes" should not be less than 8',
        ),
    ],
)
def test_bad_options(options: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_policy_options(options)
    assert message in str(info.value)


def test_maturity_and_gates() -> None:
    beta = {"prefer-closest-numa-nodes": "beta", "max-allowable-numa-nodes": "beta"}
    on = {"prefer-closest-numa-nodes": "true"}
    assert parse_policy_options(on, maturity=beta).prefer_closest_numa  # beta gate defaults on
    with pytest.raises(ConfigError, match="policy beta-level options not enabled"):
        parse_policy_options(
            on, maturity=beta, feature_gates={"TopologyManagerPolicyBetaOptions": False}
        )
    alpha = {"prefer-closest-numa-nodes": "alpha"}
    with pytest.raises(ConfigError, match="policy alpha-level options not enabled, but option"):
        parse_policy_options(on, maturity=alpha)
    gates = {"TopologyManagerPolicyAlphaOptions": True}
    assert parse_policy_options(on, maturity=alpha, feature_gates=gates).prefer_closest_numa


def test_policy_none_parses_nothing() -> None:
    config = build_topology_manager_config(
        policy="none", scope="bogus", options={"fancy": "x"}, numa_nodes=NINE
    )
    assert config.policy == "none"
    assert config.numa is None


def test_numa_limit() -> None:
    with pytest.raises(ConfigError) as info:
        build_topology_manager_config(policy="best-effort", numa_nodes=NINE)
    assert str(info.value).startswith("unsupported on machines with more than 8 NUMA Nodes")
    config = build_topology_manager_config(
        policy="best-effort", numa_nodes=NINE, options={"max-allowable-numa-nodes": "9"}
    )
    assert config.numa is not None
    assert config.numa.nodes == tuple(NINE)


def test_checks_run_in_the_kubelets_order() -> None:
    # Options first, then distances, then the NUMA limit, then policy, then scope.
    with pytest.raises(ConfigError, match="unknown Topology Manager Policy option"):
        build_topology_manager_config(policy="bogus", numa_nodes=NINE, options={"x": "1"})
    with pytest.raises(ConfigError, match="error getting NUMA distances from cadvisor"):
        build_topology_manager_config(
            policy="bogus", numa_nodes=NINE, options={"prefer-closest-numa-nodes": "true"}
        )
    with pytest.raises(ConfigError, match="unsupported on machines"):
        build_topology_manager_config(policy="bogus", numa_nodes=NINE, distances=ROWS)
    with pytest.raises(ConfigError, match='unknown policy: "bogus"'):
        build_topology_manager_config(policy="bogus", numa_nodes=[0, 1])
    with pytest.raises(ConfigError, match='unknown scope: "node"'):
        build_topology_manager_config(policy="restricted", scope="node", numa_nodes=[0, 1])
    config = build_topology_manager_config(
        policy="restricted",
        scope="pod",
        numa_nodes=[0, 1],
        distances={0: [10, 11], 1: [11, 10]},
        options={"prefer-closest-numa-nodes": "true"},
    )
    assert (config.policy, config.scope, config.options.prefer_closest_numa) == (
        "restricted",
        "pod",
        True,
    )


def test_numa_info() -> None:
    numa = NUMAInfo.of([0, 2], {0: {0: 10, 2: 20}, 2: [20, 0, 10]})
    assert numa.default_bits == 0b101
    assert numa.average_distance(0b101) == 15.0
    assert numa.average_distance(0) == 0.0
    with pytest.raises(ConfigError, match="distinct"):
        NUMAInfo.of([0, 0])
    with pytest.raises(ConfigError, match="has 1 entries"):
        NUMAInfo.of([0, 1], {0: [10], 1: [10, 10]}, require_distances=True)


def test_topology_maturity_matches_the_newest_release() -> None:
    from cpumanager.core import versions
    from cpumanager.core.merge.options import OPTION_MATURITY

    newest = versions.profile().options
    for name, level in OPTION_MATURITY.items():
        assert newest[name] == ("ga" if level == "stable" else level), name
