"""The part of a ``KubeletConfiguration`` the resource managers and node allocatable read (pure).

:class:`KubeletConfig` holds the fields already defaulted and decoded; building one from a
mapping runs the kubelet's v1beta1 defaulting (``defaults.py``), decoding (``decode.py``) and
validation (``validation.py``), with the kubelet's own messages first and the remedy after
a ``;``. Fields not listed here are ignored, as the kubelet ignores unknown fields with a
warning.

Reserved CPUs, the kubelet's way:

* ``reservedSystemCPUs`` (an explicit CPU list) overrides the cpu of ``kubeReserved`` and
  ``systemReserved``: the kubelet drops ``kubeReserved.cpu`` and sets ``systemReserved.cpu``
  to the size of the list;
* ``num_reserved_cpus`` = ceil(systemReserved.cpu + kubeReserved.cpu) (milli-CPU exact);
* the static policy needs that sum to be non-zero. The node-allocatable reservation the
  kubelet hands to the CPU manager drops zero entries, so a zero or missing reservation
  surfaces as ``[cpumanager] unable to determine reserved CPU resources for static policy``.

Policy option maps stay raw ``Mapping[str, str]``; their typed parsers live with the
policies (``core/allocation/options.py``, ``core/merge/options.py``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from types import MappingProxyType

from cpumanager.core.cpuset import CPUSet
from cpumanager.core.quantity import milli_value
from cpumanager.errors import ConfigError
from cpumanager.formats.kubelet_config.defaults import DEFAULT_EVICTION_HARD
from cpumanager.formats.kubelet_config.fields import (
    empty_map,
    eviction_bytes,
    fail,
    format_bytes,
    format_go_duration,
    go_quantity_text,
    quantity_format,
)
from cpumanager.formats.kubelet_config.values import (
    CPU_MANAGER_POLICIES,
    MEMORY_MANAGER_POLICIES,
    TOPOLOGY_MANAGER_POLICIES,
    TOPOLOGY_MANAGER_SCOPES,
    MemoryReservation,
)

__all__ = [
    "CPU_MANAGER_POLICIES",
    "MEMORY_MANAGER_POLICIES",
    "TOPOLOGY_MANAGER_POLICIES",
    "TOPOLOGY_MANAGER_SCOPES",
    "KubeletConfig",
    "MemoryReservation",
    "reserved_memory_per_node",
]


def _no_reservation() -> Mapping[str, Fraction]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True)
class KubeletConfig:
    """Typed, defaulted view of the fields the resource managers and node allocatable read."""

    cpu_manager_policy: str = "none"
    cpu_manager_policy_options: Mapping[str, str] = field(default_factory=empty_map)
    cpu_manager_reconcile_period_seconds: Fraction = Fraction(10)
    reserved_system_cpus: CPUSet | None = None
    kube_reserved: Mapping[str, Fraction] = field(default_factory=_no_reservation)
    system_reserved: Mapping[str, Fraction] = field(default_factory=_no_reservation)
    # "kubeReserved.memory" -> Go's Quantity format as written (for the kubelet's messages)
    reservation_formats: Mapping[str, str] = field(default_factory=empty_map)
    eviction_hard: Mapping[str, str] = field(default_factory=lambda: DEFAULT_EVICTION_HARD)
    topology_manager_policy: str = "none"
    topology_manager_scope: str = "container"
    topology_manager_policy_options: Mapping[str, str] = field(default_factory=empty_map)
    feature_gates: Mapping[str, bool] = field(default_factory=lambda: MappingProxyType({}))
    memory_manager_policy: str = "None"
    reserved_memory: tuple[MemoryReservation, ...] = ()
    merge_default_eviction_settings: bool = False
    enforce_node_allocatable: tuple[str, ...] = ("pods",)
    kube_reserved_cgroup: str = ""
    system_reserved_cgroup: str = ""
    cgroups_per_qos: bool = True
    cgroup_driver: str = "cgroupfs"
    cgroup_root: str = ""
    max_pods: int = 110
    pods_per_core: int = 0

    @classmethod
    def from_mapping(cls, raw: object) -> KubeletConfig:
        """Default, decode and validate a KubeletConfiguration mapping (YAML already loaded).

        Raises :class:`KubeletConfigInvalidError` with every message the kubelet would give.
        """
        from cpumanager.formats.kubelet_config.decode import load_config

        return load_config(raw, cls)

    # --- reservation --------------------------------------------------------------------

    def effective_system_reserved(self) -> Mapping[str, Fraction]:
        """systemReserved after the reservedSystemCPUs override."""
        if self.reserved_system_cpus is None:
            return self.system_reserved
        return MappingProxyType(
            {**self.system_reserved, "cpu": Fraction(len(self.reserved_system_cpus))}
        )

    def effective_kube_reserved(self) -> Mapping[str, Fraction]:
        """kubeReserved after the reservedSystemCPUs override (its cpu is dropped)."""
        if self.reserved_system_cpus is None:
            return self.kube_reserved
        return MappingProxyType({k: v for k, v in self.kube_reserved.items() if k != "cpu"})

    @property
    def reserved_cpu_quantity(self) -> Fraction:
        """systemReserved.cpu + kubeReserved.cpu, after the override."""
        zero = Fraction(0)
        return self.effective_system_reserved().get("cpu", zero) + (
            self.effective_kube_reserved().get("cpu", zero)
        )

    @property
    def num_reserved_cpus(self) -> int:
        """The kubelet's ``numReservedCPUs``: the reservation rounded up to whole CPUs."""
        return math.ceil(Fraction(milli_value(self.reserved_cpu_quantity), 1000))

    @property
    def reserved_cpus(self) -> CPUSet | None:
        """The explicit reserved CPU list, or None when the policy picks them itself."""
        return self.reserved_system_cpus

    def feature_gate(self, name: str, *, default: bool) -> bool:
        """A feature gate's value, ``default`` when the configuration does not set it."""
        return self.feature_gates.get(name, default)

    def with_gate_values(self, values: Mapping[str, bool]) -> KubeletConfig:
        """This configuration with every gate in ``values`` set (a release's view of its gates,
        ``core.versions.gate_values``), so that no reader falls back to the newest default."""
        merged = {**values, **self.feature_gates}
        if merged == dict(self.feature_gates):
            return self
        return replace(self, feature_gates=MappingProxyType(merged))

    def check_reserved_cpus_on(self, online_cpus: CPUSet) -> None:
        """The kubelet's check that reservedSystemCPUs names only online CPUs."""
        cpus = self.reserved_system_cpus
        if cpus is not None and not cpus <= online_cpus:
            msg = (
                f"reserved-cpus: {cpus} is not a subset of online-cpus: {online_cpus}; "
                "name only CPUs this machine has in reservedSystemCPUs"
            )
            raise ConfigError(msg)

    def memory_reservation_bytes(self, memory_capacity_bytes: int | None = None) -> Fraction:
        """Node-allocatable memory reservation: system + kube reserved + hard eviction."""
        total = self.effective_system_reserved().get("memory", Fraction(0))
        total += self.effective_kube_reserved().get("memory", Fraction(0))
        threshold = self.eviction_hard.get("memory.available")
        if threshold is not None:
            total += eviction_bytes(threshold, memory_capacity_bytes)
        return total

    # --- output -------------------------------------------------------------------------

    def to_v1beta1(self, *, omit_empty: bool = True) -> dict[str, object]:
        """The fields under their v1beta1 names, as the kubelet's /configz would print them.

        ``omit_empty`` drops empty optional fields, as the API's ``omitempty`` tags do.
        """
        out: dict[str, object] = {
            "cpuManagerPolicy": self.cpu_manager_policy,
            "cpuManagerReconcilePeriod": format_go_duration(
                self.cpu_manager_reconcile_period_seconds
            ),
            "memoryManagerPolicy": self.memory_manager_policy,
            "topologyManagerPolicy": self.topology_manager_policy,
            "topologyManagerScope": self.topology_manager_scope,
            "evictionHard": dict(self.eviction_hard),
            "mergeDefaultEvictionSettings": self.merge_default_eviction_settings,
            "enforceNodeAllocatable": list(self.enforce_node_allocatable),
            "cgroupsPerQOS": self.cgroups_per_qos,
            "cgroupDriver": self.cgroup_driver,
            "maxPods": self.max_pods,
        }
        optional: dict[str, object] = {
            "cpuManagerPolicyOptions": dict(self.cpu_manager_policy_options),
            "topologyManagerPolicyOptions": dict(self.topology_manager_policy_options),
            "reservedSystemCPUs": "" if self.reserved_cpus is None else str(self.reserved_cpus),
            "kubeReserved": {k: _quantity_text(v) for k, v in self.kube_reserved.items()},
            "systemReserved": {k: _quantity_text(v) for k, v in self.system_reserved.items()},
            "kubeReservedCgroup": self.kube_reserved_cgroup,
            "systemReservedCgroup": self.system_reserved_cgroup,
            "cgroupRoot": self.cgroup_root,
            "podsPerCore": self.pods_per_core,
            "featureGates": dict(self.feature_gates),
            "reservedMemory": [
                {
                    "numaNode": entry.numa_node,
                    "limits": {k: format_bytes(v) for k, v in entry.limits.items()},
                }
                for entry in self.reserved_memory
            ],
        }
        out.update({name: value for name, value in optional.items() if value or not omit_empty})
        return dict(sorted(out.items()))


def _quantity_text(amount: Fraction) -> str:
    """A quantity as the API prints it: whole numbers plain, else milli or binary units."""
    if amount.denominator == 1:
        if amount >= 2**10 and amount % 2**10 == 0:
            return format_bytes(amount)
        return str(amount.numerator)
    return f"{milli_value(amount)}m"


def _reservation_format(config: KubeletConfig) -> str:
    """The Quantity format of the kubelet's node-allocatable memory reservation: that of its
    first non-zero term (systemReserved, kubeReserved, then the hard eviction threshold)."""
    terms = (
        ("systemReserved", config.effective_system_reserved()),
        ("kubeReserved", config.effective_kube_reserved()),
    )
    for key, amounts in terms:
        if amounts.get("memory"):
            return config.reservation_formats.get(f"{key}.memory", "BinarySI")
    threshold = config.eviction_hard.get("memory.available", "")
    return "BinarySI" if threshold.endswith("%") else quantity_format(threshold)


def reserved_memory_per_node(
    config: KubeletConfig,
    numa_node_ids: tuple[int, ...],
    *,
    memory_capacity_bytes: int | None = None,
) -> dict[int, dict[str, int]]:
    """reservedMemory as node -> resource -> bytes, checked against the machine.

    The kubelet's memory manager checks that every reservation names an existing NUMA node
    and that, per memory type, the reservations add up to the node-allocatable reservation
    (system + kube reserved + the hard eviction threshold for ``memory``).
    """
    per_node: dict[int, dict[str, int]] = {}
    totals: dict[str, int] = {}
    shown_as: dict[str, str] = {}  # the format the kubelet's sum keeps: the last non-zero one
    for entry in config.reserved_memory:
        if entry.numa_node not in numa_node_ids:
            fail(
                "the reserved memory configuration references a NUMA node "
                f"{entry.numa_node} that does not exist on this machine; the machine has "
                f"nodes {list(numa_node_ids)}"
            )
        for resource, amount in entry.limits.items():
            per_node.setdefault(entry.numa_node, {})[resource] = amount
            totals[resource] = totals.get(resource, 0) + amount
            if amount or resource not in shown_as:
                shown_as[resource] = entry.formats.get(resource, "BinarySI")
    if config.memory_manager_policy != "Static":
        return per_node
    expected: dict[str, Fraction] = {}
    memory = config.memory_reservation_bytes(memory_capacity_bytes)
    if memory:
        expected["memory"] = memory
    for resource in sorted(set(totals) | set(expected)):
        want = expected.get(resource, Fraction(0))
        have = totals.get(resource, 0)
        if want != have:
            have_text = go_quantity_text(have, shown_as.get(resource, "DecimalSI"))
            want_text = go_quantity_text(int(want), _reservation_format(config))
            fail(
                f'the total amount "{have_text}" of type "{resource}" is not equal to '
                f'the value "{want_text}" determined by Node Allocatable feature; make '
                "reservedMemory add up to kubeReserved + systemReserved + evictionHard"
            )
    return per_node
