"""Decode a (defaulted) KubeletConfiguration mapping into :class:`KubeletConfig` (pure).

Two kinds of failure, as in the kubelet: a field of the wrong type stops decoding at once
(one :class:`ConfigError`); a well-typed value the kubelet refuses is a validation error, and
validation lists every one of them (:class:`KubeletConfigInvalidError`).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

from cpumanager.core.cpuset import CPUSet
from cpumanager.errors import InvalidCPUSetError, KubeletConfigInvalidError
from cpumanager.formats.kubelet_config import fields as f
from cpumanager.formats.kubelet_config.defaults import DEFAULT_EVICTION_HARD, apply_defaults
from cpumanager.formats.kubelet_config.validation import option_errors, validation_errors
from cpumanager.formats.kubelet_config.values import MemoryReservation

if TYPE_CHECKING:
    from cpumanager.formats.kubelet_config.model import KubeletConfig

__all__ = ["build_config", "check_kind", "decode", "load_config"]


def load_config(raw: object, config_type: type[KubeletConfig]) -> KubeletConfig:
    """One configuration file's content: defaulted, decoded and validated.

    ``config_type`` is :class:`KubeletConfig` (passed in: the model calls this module).
    """
    body = check_kind(raw)
    defaulted, _ = apply_defaults(body)
    return build_config(defaulted, config_type)


def check_kind(raw: object) -> Mapping[str, object]:
    """The mapping, after checking it is a KubeletConfiguration (when it names a kind)."""
    body = f.mapping(raw, "configuration")
    kind = body.get("kind")
    if kind is not None and kind != "KubeletConfiguration":
        f.fail(f"kind {kind!r} is not KubeletConfiguration; give a KubeletConfiguration file")
    return body


def build_config(
    raw: Mapping[str, object], config_type: type[KubeletConfig], *, with_options: bool = False
) -> KubeletConfig:
    """Decode and validate an already defaulted mapping; every validation error at once.

    ``with_options`` adds the policy options' checks the managers make when built.
    """
    config, errors = decode(raw, config_type)
    errors = [*errors, *validation_errors(config)]
    if with_options:
        errors += option_errors(config)
    if errors:
        raise KubeletConfigInvalidError(tuple(errors))
    return config


def decode(
    raw: Mapping[str, object], config_type: type[KubeletConfig]
) -> tuple[KubeletConfig, list[str]]:
    """The typed configuration, and the validation errors found while decoding."""
    body = f.mapping(raw, "configuration")
    errors: list[str] = []
    reserved_text = f.str_field(body, "reservedSystemCPUs")
    reserved_cpus = None
    if reserved_text:
        try:
            reserved_cpus = CPUSet.parse(reserved_text)
        except InvalidCPUSetError as err:
            errors.append(
                "invalid configuration: unable to parse reservedSystemCPUs (--reserved-cpus) "
                f"{reserved_text}, error: {err.detail}; write a CPU list such as '0-1,8'"
            )
    config = config_type(
        cpu_manager_policy=f.str_field(body, "cpuManagerPolicy", "none"),
        cpu_manager_policy_options=f.options(body, "cpuManagerPolicyOptions"),
        cpu_manager_reconcile_period_seconds=f.parse_go_duration(
            f.str_field(body, "cpuManagerReconcilePeriod", "10s"),
            field="cpuManagerReconcilePeriod",
        ),
        reserved_system_cpus=reserved_cpus,
        kube_reserved=f.reservation(body, "kubeReserved"),
        system_reserved=f.reservation(body, "systemReserved"),
        reservation_formats=_reservation_formats(body),
        eviction_hard=f.eviction_hard(body, DEFAULT_EVICTION_HARD),
        topology_manager_policy=f.str_field(body, "topologyManagerPolicy", "none"),
        topology_manager_scope=f.str_field(body, "topologyManagerScope", "container"),
        topology_manager_policy_options=f.options(body, "topologyManagerPolicyOptions"),
        feature_gates=f.feature_gates(body),
        memory_manager_policy=f.str_field(body, "memoryManagerPolicy", "None"),
        reserved_memory=_reserved_memory(body),
        merge_default_eviction_settings=f.bool_field(body, "mergeDefaultEvictionSettings", False),
        enforce_node_allocatable=f.str_list(body, "enforceNodeAllocatable", ("pods",)),
        kube_reserved_cgroup=f.str_field(body, "kubeReservedCgroup"),
        system_reserved_cgroup=f.str_field(body, "systemReservedCgroup"),
        cgroups_per_qos=f.bool_field(body, "cgroupsPerQOS", True),
        cgroup_driver=f.str_field(body, "cgroupDriver", "cgroupfs"),
        cgroup_root=f.str_field(body, "cgroupRoot"),
        max_pods=f.int_field(body, "maxPods", 110),
        pods_per_core=f.int_field(body, "podsPerCore"),
    )
    return config, errors


def _reservation_formats(body: Mapping[str, object]) -> Mapping[str, str]:
    """Go's Quantity format of each kubeReserved / systemReserved amount as written."""
    out: dict[str, str] = {}
    for key in ("kubeReserved", "systemReserved"):
        raw = body.get(key)
        if isinstance(raw, Mapping):
            for resource, amount in raw.items():
                out[f"{key}.{resource}"] = f.quantity_format(amount)
    return MappingProxyType(out)


def _reserved_memory(body: Mapping[str, object]) -> tuple[MemoryReservation, ...]:
    raw = body.get("reservedMemory")
    if raw is None:
        return ()
    if not isinstance(raw, list):
        f.fail("reservedMemory: expected a list of {numaNode, limits} entries")
    out = []
    for index, item in enumerate(raw):
        path = f"reservedMemory[{index}]"
        entry = f.mapping(item, path)
        node = entry.get("numaNode")
        if isinstance(node, bool) or not isinstance(node, int) or node < 0:
            f.fail(f"{path}.numaNode: expected a NUMA node id (an integer >= 0), got {node!r}")
        limits: dict[str, int] = {}
        formats: dict[str, str] = {}
        for resource, amount in f.mapping(entry.get("limits", {}), f"{path}.limits").items():
            amount_q = f.quantity(amount, f"{path}.limits.{resource}")
            if amount_q < 0 or amount_q.denominator != 1:
                f.fail(f"{path}.limits.{resource}: {amount!r} is not a whole number of bytes")
            limits[resource] = int(amount_q)
            formats[resource] = f.quantity_format(amount)
        out.append(
            MemoryReservation(
                numa_node=node,
                limits=MappingProxyType(limits),
                formats=MappingProxyType(formats),
            )
        )
    return tuple(out)
