"""The part of a ``KubeletConfiguration`` the CPU, memory and topology managers read (pure).

Built from an already-parsed mapping (the YAML file's content) and validated the way the
kubelet validates it at start-up, with the kubelet's own message first and the remedy after
a ``;``. Fields not listed here are ignored, as the kubelet ignores unknown fields with a
warning.

Reserved CPUs, the kubelet's way:

* ``reservedSystemCPUs`` (an explicit CPU list) overrides the cpu of ``kubeReserved`` and
  ``systemReserved``: the kubelet drops ``kubeReserved.cpu`` and sets ``systemReserved.cpu``
  to the size of the list;
* ``num_reserved_cpus`` = ceil(systemReserved.cpu + kubeReserved.cpu) (milli-CPU exact);
* the static policy needs that sum to be non-zero. The node-allocatable reservation the
  kubelet hands to the CPU manager drops zero entries, so a zero or missing reservation
  surfaces as ``[cpumanager] unable to determine reserved CPU resources for static policy``
  (the kubelet's other message, "... requires systemreserved.cpu + kubereserved.cpu to be
  greater than zero", cannot be reached from a configuration file).

Policy option maps stay raw ``Mapping[str, str]``; their typed parsers live with the
policies (``core/allocation/options.py``, ``core/merge/options.py``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from types import MappingProxyType
from typing import NoReturn

from cpumanager.core.cpuset import CPUSet
from cpumanager.core.quantity import milli_value, parse_quantity
from cpumanager.errors import ConfigError, InvalidCPUSetError, WorkloadError

__all__ = [
    "CPU_MANAGER_POLICIES",
    "MEMORY_MANAGER_POLICIES",
    "TOPOLOGY_MANAGER_POLICIES",
    "TOPOLOGY_MANAGER_SCOPES",
    "KubeletConfig",
    "MemoryReservation",
    "parse_go_duration",
    "reserved_memory_per_node",
]

CPU_MANAGER_POLICIES = ("none", "static")
TOPOLOGY_MANAGER_POLICIES = ("none", "best-effort", "restricted", "single-numa-node")
TOPOLOGY_MANAGER_SCOPES = ("container", "pod")
MEMORY_MANAGER_POLICIES = ("None", "Static")  # "BestEffort" exists on Windows only
_RESERVABLE = ("cpu", "memory", "ephemeral-storage", "pid")
_DEFAULT_EVICTION_HARD = MappingProxyType({"memory.available": "100Mi"})
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_DURATION_UNITS = {
    "ns": Fraction(1, 10**9),
    "us": Fraction(1, 10**6),
    "µs": Fraction(1, 10**6),
    "μs": Fraction(1, 10**6),
    "ms": Fraction(1, 1000),
    "s": Fraction(1),
    "m": Fraction(60),
    "h": Fraction(3600),
}


def _empty() -> Mapping[str, str]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True)
class MemoryReservation:
    """One ``reservedMemory`` entry: bytes reserved per memory type on one NUMA node."""

    numa_node: int
    limits: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class KubeletConfig:
    """Typed, validated view of the fields the resource managers read."""

    cpu_manager_policy: str = "none"
    cpu_manager_policy_options: Mapping[str, str] = field(default_factory=_empty)
    cpu_manager_reconcile_period_seconds: Fraction = Fraction(10)
    reserved_system_cpus: CPUSet | None = None
    kube_reserved: Mapping[str, Fraction] = field(default_factory=lambda: MappingProxyType({}))
    system_reserved: Mapping[str, Fraction] = field(default_factory=lambda: MappingProxyType({}))
    eviction_hard: Mapping[str, str] = field(default_factory=lambda: _DEFAULT_EVICTION_HARD)
    topology_manager_policy: str = "none"
    topology_manager_scope: str = "container"
    topology_manager_policy_options: Mapping[str, str] = field(default_factory=_empty)
    feature_gates: Mapping[str, bool] = field(default_factory=lambda: MappingProxyType({}))
    memory_manager_policy: str = "None"
    reserved_memory: tuple[MemoryReservation, ...] = ()

    @classmethod
    def from_mapping(cls, raw: object) -> KubeletConfig:
        """Parse and validate a KubeletConfiguration mapping (YAML already loaded)."""
        return _parse(raw)

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
            total += _eviction_bytes(threshold, memory_capacity_bytes)
        return total


# --- parsing ---------------------------------------------------------------------------


def _parse(raw: object) -> KubeletConfig:
    body = _mapping(raw, "configuration")
    kind = body.get("kind")
    if kind is not None and kind != "KubeletConfiguration":
        _fail(f"kind {kind!r} is not KubeletConfiguration; give a KubeletConfiguration file")
    cpu_policy = _str(body, "cpuManagerPolicy", "none")
    tm_policy = _str(body, "topologyManagerPolicy", "none")
    tm_scope = _str(body, "topologyManagerScope", "container")
    mm_policy = _str(body, "memoryManagerPolicy", "None")
    reserved_text = _str(body, "reservedSystemCPUs", "")
    reserved_cpus = _parse_reserved_cpus(reserved_text) if reserved_text else None
    if reserved_cpus is not None and (
        _str(body, "systemReservedCgroup", "") or _str(body, "kubeReservedCgroup", "")
    ):
        _fail(
            "invalid configuration: can't use reservedSystemCPUs (--reserved-cpus) with "
            "systemReservedCgroup (--system-reserved-cgroup) or kubeReservedCgroup "
            "(--kube-reserved-cgroup); drop one of them"
        )
    config = KubeletConfig(
        cpu_manager_policy=cpu_policy,
        cpu_manager_policy_options=_options(body, "cpuManagerPolicyOptions"),
        cpu_manager_reconcile_period_seconds=parse_go_duration(
            _str(body, "cpuManagerReconcilePeriod", "10s"), field="cpuManagerReconcilePeriod"
        ),
        reserved_system_cpus=reserved_cpus,
        kube_reserved=_reservation(body, "kubeReserved"),
        system_reserved=_reservation(body, "systemReserved"),
        eviction_hard=_eviction_hard(body),
        topology_manager_policy=tm_policy,
        topology_manager_scope=tm_scope,
        topology_manager_policy_options=_options(body, "topologyManagerPolicyOptions"),
        feature_gates=_feature_gates(body),
        memory_manager_policy=mm_policy,
        reserved_memory=_reserved_memory(body),
    )
    _validate(config)
    return config


def _validate(config: KubeletConfig) -> None:
    if config.topology_manager_policy not in TOPOLOGY_MANAGER_POLICIES:
        choices = " ".join(f'"{p}"' for p in TOPOLOGY_MANAGER_POLICIES)
        _fail(
            "invalid configuration: topologyManagerPolicy (--topology-manager-policy) "
            f'"{config.topology_manager_policy}" must be one of: [{choices}]'
        )
    if config.topology_manager_scope not in TOPOLOGY_MANAGER_SCOPES:
        _fail(
            "invalid configuration: topologyManagerScope (--topology-manager-scope) "
            f'"{config.topology_manager_scope}" must be one of: "container", or "pod"'
        )
    if config.cpu_manager_policy not in CPU_MANAGER_POLICIES:
        _fail(
            f'unknown policy: "{config.cpu_manager_policy}"; cpuManagerPolicy is "none" or "static"'
        )
    if config.memory_manager_policy not in MEMORY_MANAGER_POLICIES:
        _fail(
            f'unknown policy: "{config.memory_manager_policy}"; memoryManagerPolicy is "None" '
            'or "Static"'
        )
    if config.cpu_manager_reconcile_period_seconds <= 0:
        _fail("cpuManagerReconcilePeriod must be greater than zero; e.g. '10s'")
    if config.cpu_manager_policy == "static" and config.reserved_cpu_quantity == 0:
        _fail(
            "[cpumanager] unable to determine reserved CPU resources for static policy; "
            "the static policy needs a CPU reservation: set kubeReserved.cpu or "
            "systemReserved.cpu, or list CPUs in reservedSystemCPUs"
        )
    _validate_reserved_memory(config)


def _validate_reserved_memory(config: KubeletConfig) -> None:
    seen: set[tuple[int, str]] = set()
    for entry in config.reserved_memory:
        for resource, amount in entry.limits.items():
            if not (resource == "memory" or resource.startswith("hugepages-")):
                _fail(
                    f'invalid configuration: the limit type "{resource}" for NUMA node '
                    f"{entry.numa_node} is not supported, only [memory hugepages-<HugePageSize>]"
                    " is accepted"
                )
            if amount == 0:
                _fail(
                    "invalid configuration: reserved memory may not be zero for NUMA node "
                    f'{entry.numa_node} and resource "{resource}"'
                )
            if (entry.numa_node, resource) in seen:
                _fail(
                    "invalid configuration: the reserved memory has a duplicate value for NUMA "
                    f'node {entry.numa_node} and resource "{resource}"'
                )
            seen.add((entry.numa_node, resource))
    if config.memory_manager_policy == "Static":
        total = sum(e.limits.get("memory", 0) for e in config.reserved_memory)
        if total <= 0:
            _fail(
                "[memorymanager] you should specify the system reserved memory; list it per "
                "NUMA node under reservedMemory (numaNode, limits.memory)"
            )


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
    for entry in config.reserved_memory:
        if entry.numa_node not in numa_node_ids:
            _fail(
                "the reserved memory configuration references a NUMA node "
                f"{entry.numa_node} that does not exist on this machine; the machine has "
                f"nodes {list(numa_node_ids)}"
            )
        for resource, amount in entry.limits.items():
            per_node.setdefault(entry.numa_node, {})[resource] = amount
            totals[resource] = totals.get(resource, 0) + amount
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
            _fail(
                f'the total amount "{_bytes(have)}" of type "{resource}" is not equal to the '
                f'value "{_bytes(want)}" determined by Node Allocatable feature; make '
                "reservedMemory add up to kubeReserved + systemReserved + evictionHard"
            )
    return per_node


# --- field helpers ---------------------------------------------------------------------


def parse_go_duration(text: str, *, field: str = "duration") -> Fraction:
    """Go's ``time.ParseDuration`` for non-negative durations, in seconds."""
    if text == "0":
        return Fraction(0)
    rest = text
    total = Fraction(0)
    if not rest:
        _fail(f"{field}: {text!r} is not a duration; write e.g. '10s', '500ms' or '1m30s'")
    while rest:
        match = _DURATION_PART.match(rest)
        if match is None:
            _fail(f"{field}: {text!r} is not a duration; write e.g. '10s', '500ms' or '1m30s'")
        total += Fraction(match[1]) * _DURATION_UNITS[match[2]]
        rest = rest[match.end() :]
    return total


def _parse_reserved_cpus(text: str) -> CPUSet:
    try:
        return CPUSet.parse(text)
    except InvalidCPUSetError as err:
        _fail(
            "invalid configuration: unable to parse reservedSystemCPUs (--reserved-cpus) "
            f"{text}, error: {err.detail}; write a CPU list such as '0-1,8'"
        )


def _reservation(body: Mapping[str, object], key: str) -> Mapping[str, Fraction]:
    raw = body.get(key)
    if raw is None:
        return MappingProxyType({})
    out: dict[str, Fraction] = {}
    for resource, amount in _mapping(raw, key).items():
        if resource not in _RESERVABLE:
            _fail(f'{key}: cannot reserve "{resource}" resource; reserve one of {_RESERVABLE}')
        quantity = _quantity(amount, f"{key}.{resource}")
        if quantity < 0:
            _fail(f'{key}: resource quantity for "{resource}" cannot be negative: {amount}')
        out[resource] = quantity
    return MappingProxyType(out)


def _reserved_memory(body: Mapping[str, object]) -> tuple[MemoryReservation, ...]:
    raw = body.get("reservedMemory")
    if raw is None:
        return ()
    if not isinstance(raw, list):
        _fail("reservedMemory: expected a list of {numaNode, limits} entries")
    out = []
    for index, item in enumerate(raw):
        path = f"reservedMemory[{index}]"
        entry = _mapping(item, path)
        node = entry.get("numaNode")
        if isinstance(node, bool) or not isinstance(node, int) or node < 0:
            _fail(f"{path}.numaNode: expected a NUMA node id (an integer >= 0), got {node!r}")
        limits: dict[str, int] = {}
        for resource, amount in _mapping(entry.get("limits", {}), f"{path}.limits").items():
            quantity = _quantity(amount, f"{path}.limits.{resource}")
            if quantity < 0 or quantity.denominator != 1:
                _fail(f"{path}.limits.{resource}: {amount!r} is not a whole number of bytes")
            limits[resource] = int(quantity)
        out.append(MemoryReservation(numa_node=node, limits=MappingProxyType(limits)))
    return tuple(out)


def _eviction_hard(body: Mapping[str, object]) -> Mapping[str, str]:
    raw = body.get("evictionHard")
    if raw is None:
        return _DEFAULT_EVICTION_HARD
    out = {}
    for signal, threshold in _mapping(raw, "evictionHard").items():
        if not isinstance(threshold, str):
            _fail(f"evictionHard.{signal}: expected a string such as '100Mi' or '5%'")
        out[signal] = threshold
    return MappingProxyType(out)


def _eviction_bytes(threshold: str, capacity: int | None) -> Fraction:
    if threshold.endswith("%"):
        try:
            percent = Fraction(threshold[:-1])
        except ValueError:
            _fail(f"evictionHard.memory.available: {threshold!r} is not a percentage")
        if capacity is None:
            _fail(
                "evictionHard.memory.available is a percentage; the machine's memory size is "
                "needed to check reservedMemory"
            )
        return Fraction(math.ceil(percent * capacity / 100))
    return _quantity(threshold, "evictionHard.memory.available")


def _options(body: Mapping[str, object], key: str) -> Mapping[str, str]:
    raw = body.get(key)
    if raw is None:
        return _empty()
    out = {}
    for name, value in _mapping(raw, key).items():
        # YAML turns an unquoted true / 8 into bool / int; the kubelet wants strings.
        text = value
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, int):
            text = str(value)
        if not isinstance(text, str):
            _fail(f'{key}.{name}: expected a string value such as "true", got {value!r}')
        out[name] = text
    return MappingProxyType(out)


def _feature_gates(body: Mapping[str, object]) -> Mapping[str, bool]:
    raw = body.get("featureGates")
    if raw is None:
        return MappingProxyType({})
    out = {}
    for name, value in _mapping(raw, "featureGates").items():
        if not isinstance(value, bool):
            _fail(f"featureGates.{name}: expected true or false, got {value!r}")
        out[name] = value
    return MappingProxyType(out)


def _quantity(amount: object, path: str) -> Fraction:
    if isinstance(amount, bool) or not isinstance(amount, str | int | float):
        _fail(f"{path}: expected a quantity such as '1' or '500m', got {amount!r}")
    try:
        return parse_quantity(amount, field=path)
    except WorkloadError as err:
        raise ConfigError(err.message) from err


def _str(body: Mapping[str, object], key: str, default: str) -> str:
    value = body.get(key)
    if value is None:
        return default
    if not isinstance(value, str):
        _fail(f"{key}: expected a string, got {value!r}")
    return value


def _mapping(raw: object, path: str) -> Mapping[str, object]:
    if not isinstance(raw, Mapping) or not all(isinstance(k, str) for k in raw):
        _fail(f"{path}: expected a mapping with string keys, got {type(raw).__name__}")
    return raw


def _bytes(amount: Fraction | int) -> str:
    amount = Fraction(amount)
    for suffix, size in (("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if amount and amount % size == 0:
            return f"{amount // size}{suffix}"
    return str(amount.numerator) if amount.denominator == 1 else str(float(amount))


def _fail(message: str) -> NoReturn:
    raise ConfigError(message)
