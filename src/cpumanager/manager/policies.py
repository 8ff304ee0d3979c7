"""The CPU manager policy and the topology manager option levels one kubelet release
builds from a KubeletConfiguration (``release`` None: the newest release).

A release brings its static policy option levels (``core.versions`` ``option.*``: an option
it lacks is unknown there, an alpha or beta one needs its gate) and its allocation rules
(``alloc.*``, as StaticPolicyOptions flags). Errors of the static policy's construction
carry the kubelet's ``new static policy error: `` prefix, as its CPU manager wraps them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from cpumanager.core import versions
from cpumanager.core.allocation.options import Maturity, StaticPolicyOptions
from cpumanager.core.merge.options import Maturity as TopologyMaturity
from cpumanager.core.policy.base import Policy
from cpumanager.core.policy.none import NonePolicy
from cpumanager.core.policy.static import StaticPolicy
from cpumanager.core.topology import CPUTopology
from cpumanager.errors import ConfigError
from cpumanager.formats.kubelet_config import KubeletConfig

__all__ = ["STATIC_POLICY_ERROR", "build_cpu_policy", "topology_levels"]

# The kubelet's cpumanager.NewManager prefix for every error of NewStaticPolicy.
STATIC_POLICY_ERROR = "new static policy error: "

_LEVELS = {"alpha": Maturity.ALPHA, "beta": Maturity.BETA, "ga": Maturity.STABLE}


def _release_options(
    raw: Mapping[str, str], kubelet: KubeletConfig, release: versions.Release | None
) -> StaticPolicyOptions:
    """The static policy options as kubelet ``release`` parses and runs them (None: the
    newest): its option levels, and its allocation rules (core/versions.py ``alloc.*``)."""
    alpha = kubelet.feature_gate("CPUManagerPolicyAlphaOptions", default=False)
    beta = kubelet.feature_gate("CPUManagerPolicyBetaOptions", default=True)
    if release is None:
        return StaticPolicyOptions.parse(raw, alpha_enabled=alpha, beta_enabled=beta)
    profile = versions.profile(release, kubelet.feature_gates)
    levels = {
        name: _LEVELS[level]
        for name, level in profile.options.items()
        if level in _LEVELS and name in raw
    }
    for name, level in levels.items():  # before 1.23 no maturity gate existed to check
        gate = f"CPUManagerPolicy{level.name.capitalize()}Options"
        if level is not Maturity.STABLE and profile.gate_levels.get(gate) == "absent":
            levels[name] = Maturity.STABLE
    options = StaticPolicyOptions.parse(
        raw, alpha_enabled=alpha, beta_enabled=beta, maturity_of=levels
    )
    return replace(
        options,
        uncore_odd_requests=profile.uncore_partial != "floor",
        distributed_by_socket=profile.distributed_socket != "ignored",
        real_free_sizes=profile.free_test != "declared",
    )


_TOPOLOGY_LEVELS: dict[str, TopologyMaturity] = {"alpha": "alpha", "beta": "beta", "ga": "stable"}


def topology_levels(kubelet: KubeletConfig, release: versions.Release | None) -> dict[str, Any]:
    """The topology manager option levels of kubelet ``release`` (none: the newest), and
    the wording of its maturity refusal."""
    if release is None:
        return {}
    profile = versions.profile(release, kubelet.feature_gates)
    names = kubelet.topology_manager_policy_options
    levels = {
        name: _TOPOLOGY_LEVELS[level]
        for name, level in profile.options.items()
        if level in _TOPOLOGY_LEVELS and name in names
    }
    return {"maturity": levels, "gate_text": profile.topology_option_gate_text}


def build_cpu_policy(
    topology: CPUTopology, kubelet: KubeletConfig, *, release: versions.Release | None = None
) -> Policy:
    """The CPU manager policy the kubelet would build from this configuration; ``release``
    picks that kubelet's option levels and allocation rules (default: the newest)."""
    if kubelet.cpu_manager_policy == "none":
        if kubelet.cpu_manager_policy_options:
            msg = "None policy: received unsupported options; remove cpuManagerPolicyOptions"
            raise ConfigError(msg)
        return NonePolicy(topology)
    if kubelet.cpu_manager_policy != "static":
        msg = f'unknown policy: "{kubelet.cpu_manager_policy}"; use "none" or "static"'
        raise ConfigError(msg)
    kubelet.check_reserved_cpus_on(topology.all_cpus)
    try:
        options = _release_options(kubelet.cpu_manager_policy_options, kubelet, release)
        return StaticPolicy(
            topology,
            options=options,
            num_reserved_cpus=kubelet.num_reserved_cpus,
            reserved_cpus=kubelet.reserved_cpus,
            topology_manager_policy=kubelet.topology_manager_policy,
            pod_level_resources=kubelet.feature_gate("PodLevelResources", default=True),
        )
    except ConfigError as err:  # the kubelet's NewManager wraps NewStaticPolicy's errors
        msg = f"{STATIC_POLICY_ERROR}{err.message}"
        raise ConfigError(msg) from err
