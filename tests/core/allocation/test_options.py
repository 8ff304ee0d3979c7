"""Static policy options: Go ParseBool values, maturity gates, incompatible pairs, hardware."""

from __future__ import annotations

import pytest

from cpumanager.core.allocation.options import StaticPolicyOptions, validate_align_by_socket
from cpumanager.errors import ConfigError
from tests.kubelet_vectors import kubelet_topology


@pytest.mark.parametrize("text", ["1", "t", "T", "TRUE", "true", "True"])
def test_go_true_spellings(text: str) -> None:
    assert StaticPolicyOptions.parse({"full-pcpus-only": text}).full_pcpus_only


@pytest.mark.parametrize("text", ["0", "f", "F", "FALSE", "false", "False"])
def test_go_false_spellings(text: str) -> None:
    assert not StaticPolicyOptions.parse({"full-pcpus-only": text}).full_pcpus_only


@pytest.mark.parametrize(
    ("raw", "alpha", "beta", "message"),
    [
        ({"bogus": "true"}, True, True, 'unknown CPU Manager Policy option: "bogus"'),
        (
            {"full-pcpus-only": "yes"},
            True,
            True,
            'bad value for option "full-pcpus-only": strconv.ParseBool: parsing "yes": '
            "invalid syntax",
        ),
        (
            {"align-by-socket": "true"},
            False,
            True,
            'CPU Manager Policy Alpha-level Options not enabled, but option "align-by-socket" '
            "provided",
        ),
        (
            {"distribute-cpus-across-numa": "true"},
            True,
            False,
            "CPU Manager Policy Beta-level Options not enabled, but option "
            '"distribute-cpus-across-numa" provided',
        ),
        (
            {"full-pcpus-only": "true", "distribute-cpus-across-cores": "true"},
            True,
            True,
            "static policy options full-pcpus-only and distribute-cpus-across-cores can not be "
            "used at the same time",
        ),
        (
            {"distribute-cpus-across-numa": "true", "distribute-cpus-across-cores": "true"},
            True,
            True,
            "static policy options distribute-cpus-across-numa and distribute-cpus-across-cores "
            "can not be used at the same time",
        ),
        (
            {"prefer-align-cpus-by-uncorecache": "1", "distribute-cpus-across-cores": "1"},
            True,
            True,
            "static policy options prefer-align-cpus-by-uncorecache and "
            "distribute-cpus-across-cores can not be used at the same time",
        ),
        (
            {"prefer-align-cpus-by-uncorecache": "1", "distribute-cpus-across-numa": "1"},
            True,
            True,
            "static policy options prefer-align-cpus-by-uncorecache and "
            "distribute-cpus-across-numa can not be used at the same time",
        ),
    ],
    ids=["unknown", "bad-value", "alpha-off", "beta-off", "i1", "i2", "i3", "i4"],
)
def test_option_errors(raw: dict[str, str], alpha: bool, beta: bool, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        StaticPolicyOptions.parse(raw, alpha_enabled=alpha, beta_enabled=beta)
    assert caught.value.message == message


def test_stable_option_needs_no_gate() -> None:
    opts = StaticPolicyOptions.parse(
        {"full-pcpus-only": "true"}, alpha_enabled=False, beta_enabled=False
    )
    assert opts.enabled_names() == ("full-pcpus-only",)


def test_options_graduated_since_need_no_gate() -> None:
    """GA in 1.35 and 1.36: the beta gate off no longer refuses them (core/versions.py rows)."""
    raw = {"strict-cpu-reservation": "true", "prefer-align-cpus-by-uncorecache": "true"}
    opts = StaticPolicyOptions.parse(raw, alpha_enabled=False, beta_enabled=False)
    assert opts.strict_cpu_reservation
    assert opts.prefer_align_cpus_by_uncorecache


def test_maturity_matches_the_newest_release() -> None:
    from cpumanager.core import versions
    from cpumanager.core.allocation.options import OPTION_MATURITY, Maturity

    levels = {Maturity.ALPHA: "alpha", Maturity.BETA: "beta", Maturity.STABLE: "ga"}
    newest = versions.profile().options
    assert {name: levels[m] for name, m in OPTION_MATURITY.items()} == {
        name: newest[name] for name in OPTION_MATURITY
    }


def test_disabled_incompatible_pair_is_fine() -> None:
    raw = {"full-pcpus-only": "true", "distribute-cpus-across-cores": "false"}
    assert StaticPolicyOptions.parse(raw, alpha_enabled=True).full_pcpus_only


def test_align_by_socket_hardware_checks() -> None:
    opts = StaticPolicyOptions(align_by_socket=True)
    multi_numa = kubelet_topology("topoDualSocketMultiNumaPerSocketHT")
    validate_align_by_socket(opts, multi_numa, "restricted")
    with pytest.raises(ConfigError, match="single-numa-node policy is incompatible"):
        validate_align_by_socket(opts, multi_numa, "single-numa-node")
    with pytest.raises(ConfigError, match="number of sockets are more than number of NUMA"):
        validate_align_by_socket(
            opts, kubelet_topology("fakeTopoMultiSocketDualSocketPerNumaHT"), "none"
        )
    validate_align_by_socket(StaticPolicyOptions(), multi_numa, "single-numa-node")
