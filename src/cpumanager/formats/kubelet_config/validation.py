"""The kubelet's checks of a decoded configuration, with its messages, all at once (pure).

First ``ValidateKubeletConfiguration`` (pkg/kubelet/apis/config/validation) for the fields
we read, in its order; then the refusals the container manager gives at start-up when it
builds the CPU and memory managers (``unknown policy``, the static policies' reservations).
Both phases are listed here so that one run shows everything to fix; with a kubelet
release, ``assemble`` instead follows the kubelet's stages (``whole.py`` validates every
field and the feature gates, then :func:`start_order_errors` gives the managers' refusals
in the order they are built).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cpumanager.core.allocation.options import StaticPolicyOptions
from cpumanager.core.merge.options import parse_policy_options
from cpumanager.errors import ConfigError
from cpumanager.formats.kubelet_config.values import (
    CPU_MANAGER_POLICIES,
    MEMORY_MANAGER_POLICIES,
    TOPOLOGY_MANAGER_POLICIES,
    TOPOLOGY_MANAGER_SCOPES,
)

if TYPE_CHECKING:
    from cpumanager.formats.kubelet_config.model import KubeletConfig

__all__ = [
    "ENFORCEMENT_KEYS",
    "option_errors",
    "start_order_errors",
    "startup_errors",
    "validation_errors",
]

_PODS, _NONE = "pods", "none"
_SYSTEM, _SYSTEM_C = "system-reserved", "system-reserved-compressible"
_KUBE, _KUBE_C = "kube-reserved", "kube-reserved-compressible"
ENFORCEMENT_KEYS = (_PODS, _SYSTEM, _SYSTEM_C, _KUBE, _KUBE_C, _NONE)
_ENFORCE = "enforceNodeAllocatable (--enforce-node-allocatable)"


def validation_errors(config: KubeletConfig) -> list[str]:
    """Every message validation and the managers' construction would give, in order."""
    return [*_validate(config), *startup_errors(config)]


def _validate(config: KubeletConfig) -> list[str]:
    errors: list[str] = []
    if config.max_pods < 0:
        errors.append(
            f"invalid configuration: maxPods (--max-pods) {config.max_pods} must not be a "
            "negative number"
        )
    if config.pods_per_core < 0:
        errors.append(
            f"invalid configuration: podsPerCore (--pods-per-core) {config.pods_per_core} "
            "must not be a negative number"
        )
    if config.topology_manager_policy not in TOPOLOGY_MANAGER_POLICIES:
        choices = " ".join(f'"{p}"' for p in TOPOLOGY_MANAGER_POLICIES)
        errors.append(
            "invalid configuration: topologyManagerPolicy (--topology-manager-policy) "
            f'"{config.topology_manager_policy}" must be one of: [{choices}]'
        )
    if config.topology_manager_scope not in TOPOLOGY_MANAGER_SCOPES:
        errors.append(
            "invalid configuration: topologyManagerScope (--topology-manager-scope) "
            f'"{config.topology_manager_scope}" must be one of: "container", or "pod"'
        )
    errors += _enforcement_errors(config)
    if config.reserved_system_cpus is not None and (
        config.system_reserved_cgroup or config.kube_reserved_cgroup
    ):
        errors.append(
            "invalid configuration: can't use reservedSystemCPUs (--reserved-cpus) with "
            "systemReservedCgroup (--system-reserved-cgroup) or kubeReservedCgroup "
            "(--kube-reserved-cgroup); drop one of them"
        )
    errors += _reserved_memory_errors(config)
    return errors


def _enforcement_errors(config: KubeletConfig) -> list[str]:
    errors: list[str] = []
    levels = config.enforce_node_allocatable
    for plain, compressible in ((_SYSTEM, _SYSTEM_C), (_KUBE, _KUBE_C)):
        if plain in levels and compressible in levels:
            errors.append(
                f'invalid configuration: both "{plain}" and "{compressible}" cannot be '
                f"specified together in {_ENFORCE}"
            )
    seen: set[str] = set()
    for level in levels:
        if level in seen:
            errors.append(f'invalid configuration: duplicated enforcements "{level}" in {_ENFORCE}')
            continue
        seen.add(level)
        if level in (_SYSTEM, _SYSTEM_C) and not config.system_reserved_cgroup:
            errors.append(
                "invalid configuration: systemReservedCgroup (--system-reserved-cgroup) must be "
                f'specified when "{_SYSTEM}" or "{_SYSTEM_C}" included in {_ENFORCE}'
            )
        elif level in (_KUBE, _KUBE_C) and not config.kube_reserved_cgroup:
            errors.append(
                "invalid configuration: kubeReservedCgroup (--kube-reserved-cgroup) must be "
                f'specified when "{_KUBE}" or "{_KUBE_C}" included in {_ENFORCE}'
            )
        elif level == _NONE:
            if len(levels) > 1:
                errors.append(
                    f"invalid configuration: {_ENFORCE} may not contain additional "
                    f'enforcements when "{_NONE}" is specified'
                )
            continue
        elif level not in ENFORCEMENT_KEYS:
            valid = ", ".join(f'"{key}"' for key in ENFORCEMENT_KEYS[:-1])
            errors.append(
                f'invalid configuration: option "{level}" specified for {_ENFORCE}. Valid '
                f'options are {valid} or "{_NONE}"'
            )
            continue
        if not config.cgroups_per_qos:
            errors.append(
                "invalid configuration: cgroupsPerQOS (--cgroups-per-qos) must be set to true "
                f'when "{level}" contained in {_ENFORCE}'
            )
    return errors


def _reserved_memory_errors(config: KubeletConfig) -> list[str]:
    errors: list[str] = []
    seen: set[tuple[int, str]] = set()
    for entry in config.reserved_memory:
        for resource, amount in entry.limits.items():
            if not (resource == "memory" or resource.startswith("hugepages-")):
                errors.append(
                    f'invalid configuration: the limit type "{resource}" for NUMA node '
                    f"{entry.numa_node} is not supported, only [memory hugepages-<HugePageSize>]"
                    " is accepted"
                )
            if amount == 0:
                errors.append(
                    "invalid configuration: reserved memory may not be zero for NUMA node "
                    f'{entry.numa_node} and resource "{resource}"'
                )
            if (entry.numa_node, resource) in seen:
                errors.append(
                    "invalid configuration: the reserved memory has a duplicate value for NUMA "
                    f'node {entry.numa_node} and resource "{resource}"'
                )
            seen.add((entry.numa_node, resource))
    return errors


def start_order_errors(config: KubeletConfig) -> list[str]:
    """Every refusal of the managers' construction, in the order the container manager
    builds them: the topology manager (its options), the CPU manager (policy, reservation,
    then options), the memory manager. The kubelet stops at the first."""
    topology = _topology_option_errors(config)
    cpu = _cpu_manager_errors(config) or _cpu_option_errors(config)
    memory = startup_errors(config)[len(_cpu_manager_errors(config)) :]
    return [*topology, *cpu, *memory]


def _topology_option_errors(config: KubeletConfig) -> list[str]:
    if config.topology_manager_policy == "none":
        return []  # the kubelet's topology manager returns before parsing its options
    try:
        parse_policy_options(
            config.topology_manager_policy_options, feature_gates=config.feature_gates
        )
    except ConfigError as err:
        return [err.message]
    return []


def _cpu_option_errors(config: KubeletConfig) -> list[str]:
    if config.cpu_manager_policy == "none" and config.cpu_manager_policy_options:
        return ["None policy: received unsupported options; remove cpuManagerPolicyOptions"]
    if config.cpu_manager_policy == "static":
        try:
            StaticPolicyOptions.parse(
                config.cpu_manager_policy_options,
                alpha_enabled=config.feature_gate("CPUManagerPolicyAlphaOptions", default=False),
                beta_enabled=config.feature_gate("CPUManagerPolicyBetaOptions", default=True),
            )
        except ConfigError as err:
            return [f"new static policy error: {err.message}"]  # as NewManager wraps it
    return []


def option_errors(config: KubeletConfig) -> list[str]:
    """The policy options' refusals, as the topology and CPU managers give them when built.

    Kept apart from :func:`validation_errors` because building a :class:`KubeletConfig`
    does not build the managers (``manager/node.py`` does, and refuses there); the
    effective-configuration report lists them with the rest.
    """
    return [*_topology_option_errors(config), *_cpu_option_errors(config)]


def startup_errors(config: KubeletConfig) -> list[str]:
    """The CPU and memory managers' refusals of their policy and reservation when built.

    Checks that need the machine (reserved CPUs online, ``align-by-socket``,
    reservedMemory's NUMA nodes and totals) come later, with a topology.
    """
    errors = _cpu_manager_errors(config)
    if config.memory_manager_policy not in MEMORY_MANAGER_POLICIES:
        errors.append(
            f'unknown policy: "{config.memory_manager_policy}"; memoryManagerPolicy is "None" '
            'or "Static"'
        )
    elif config.memory_manager_policy == "Static":
        total = sum(e.limits.get("memory", 0) for e in config.reserved_memory)
        if total <= 0:
            errors.append(
                "[memorymanager] you should specify the system reserved memory; list it per "
                "NUMA node under reservedMemory (numaNode, limits.memory)"
            )
    return errors


def _cpu_manager_errors(config: KubeletConfig) -> list[str]:
    if config.cpu_manager_policy not in CPU_MANAGER_POLICIES:
        return [
            f'unknown policy: "{config.cpu_manager_policy}"; cpuManagerPolicy is "none" or "static"'
        ]
    if config.cpu_manager_policy == "static" and config.reserved_cpu_quantity == 0:
        return [
            "[cpumanager] unable to determine reserved CPU resources for static policy; "
            "the static policy needs a CPU reservation: set kubeReserved.cpu or "
            "systemReserved.cpu, or list CPUs in reservedSystemCPUs"
        ]
    return []
