"""Topology Manager configuration: policy, scope, policy options and the NUMA view (kubelet parity).

The kubelet's ``NewManager`` validates in this order, and so do we
(:func:`build_topology_manager_config`):

1. policy ``none``: nothing else is parsed (no options, no NUMA limit, any scope);
2. the policy options (unknown option, option gated off by its maturity, bad value);
3. the NUMA view (with ``prefer-closest-numa-nodes`` every node needs a distance row);
4. the NUMA limit: more nodes than ``max-allowable-numa-nodes`` (default 8) is refused;
5. unknown policy, then unknown scope.

Error messages start with the kubelet's own text and end with what to do (the current
kubelet's: its gate errors are lower case, "topology manager policy beta-level options not
enabled, ...", since the release that made ``max-allowable-numa-nodes`` beta).

Option maturity is an explicit input (no global feature gates). The default table is the
current kubelet's: both options GA. Older kubelets had ``prefer-closest-numa-nodes`` beta
(1.28-1.31) and ``max-allowable-numa-nodes`` beta (1.31-1.34); pass ``maturity=`` to model
them. A gated-off option is refused unless the matching feature gate
(``TopologyManagerPolicyAlphaOptions`` default off, ``TopologyManagerPolicyBetaOptions``
default on) is enabled in ``feature_gates``.

Where the spec and the kubelet differ we follow the kubelet: ``max-allowable-numa-nodes``
below 8 is refused (``the minimum value of ... should not be less than 8``); an explicit 0 is
therefore an error, not "the default".
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final, Literal

from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.gocompat import go_quote, parse_go_bool
from cpumanager.errors import ConfigError

__all__ = [
    "DEFAULT_MAX_ALLOWABLE_NUMA_NODES",
    "MAX_ALLOWABLE_NUMA_NODES",
    "OPTION_MATURITY",
    "POLICIES",
    "PREFER_CLOSEST_NUMA_NODES",
    "SCOPES",
    "NUMAInfo",
    "TopologyManagerConfig",
    "TopologyPolicyOptions",
    "build_topology_manager_config",
    "parse_policy_options",
]

Policy = Literal["none", "best-effort", "restricted", "single-numa-node"]
Scope = Literal["container", "pod"]
Maturity = Literal["alpha", "beta", "stable"]

POLICIES: Final[tuple[str, ...]] = ("none", "best-effort", "restricted", "single-numa-node")
SCOPES: Final[tuple[str, ...]] = ("container", "pod")
PREFER_CLOSEST_NUMA_NODES: Final = "prefer-closest-numa-nodes"
MAX_ALLOWABLE_NUMA_NODES: Final = "max-allowable-numa-nodes"
DEFAULT_MAX_ALLOWABLE_NUMA_NODES: Final = 8

OPTION_MATURITY: Final[Mapping[str, Maturity]] = MappingProxyType(
    {PREFER_CLOSEST_NUMA_NODES: "stable", MAX_ALLOWABLE_NUMA_NODES: "stable"}
)
_GATES: Final[Mapping[str, tuple[str, bool]]] = MappingProxyType(
    {
        "alpha": ("TopologyManagerPolicyAlphaOptions", False),
        "beta": ("TopologyManagerPolicyBetaOptions", True),
    }
)
_INT = re.compile(r"[+-]?[0-9]+")
_INT64_MAX = (1 << 63) - 1


def _parse_bool(name: str, value: str) -> bool:
    parsed = parse_go_bool(value)
    if parsed is not None:
        return parsed
    msg = (
        f"bad value for option {go_quote(name)}: strconv.ParseBool: parsing "
        f"{go_quote(value)}: invalid syntax; use true or false"
    )
    raise ConfigError(msg)


def _parse_int(name: str, value: str) -> int:
    problem = "invalid syntax"
    if _INT.fullmatch(value):
        number = int(value)
        if -_INT64_MAX - 1 <= number <= _INT64_MAX:
            return number
        problem = "value out of range"
    msg = (
        f"unable to convert policy option to integer {go_quote(name)}: strconv.Atoi: "
        f"parsing {go_quote(value)}: {problem}; use a whole number such as 8 or 64"
    )
    raise ConfigError(msg)


@dataclass(frozen=True, slots=True)
class TopologyPolicyOptions:
    """The parsed ``topologyManagerPolicyOptions``."""

    prefer_closest_numa: bool = False
    max_allowable_numa_nodes: int = DEFAULT_MAX_ALLOWABLE_NUMA_NODES


def _check_available(
    name: str, maturity: Mapping[str, Maturity], gates: Mapping[str, bool], gate_text: str
) -> None:
    level = maturity.get(name)
    if level is None:
        known = ", ".join(sorted(maturity))
        msg = f"unknown Topology Manager Policy option: {go_quote(name)}; use one of: {known}"
        raise ConfigError(msg)
    if level == "stable":
        return
    gate, default = _GATES[level]
    if not gates.get(gate, default):
        head = f"topology manager policy {level}-level options not enabled"
        if gate_text == "capitalized":  # the kubelet's text before the newest releases
            head = f"Topology Manager Policy {level.capitalize()}-level Options not enabled"
        msg = (
            f"{head}, but option {go_quote(name)} provided; enable the feature gate {gate} "
            "or drop the option"
        )
        raise ConfigError(msg)


def parse_policy_options(
    options: Mapping[str, str],
    *,
    feature_gates: Mapping[str, bool] | None = None,
    maturity: Mapping[str, Maturity] = OPTION_MATURITY,
    gate_text: str = "lower",
) -> TopologyPolicyOptions:
    """Parse ``topologyManagerPolicyOptions`` as the kubelet's ``NewPolicyOptions`` does.

    Options are checked in sorted name order so that the first error is deterministic (the
    kubelet walks a Go map, whose order is random).
    """
    gates = feature_gates or {}
    prefer_closest = False
    max_nodes = DEFAULT_MAX_ALLOWABLE_NUMA_NODES
    for name in sorted(options):
        value = options[name]
        _check_available(name, maturity, gates, gate_text)
        if name == PREFER_CLOSEST_NUMA_NODES:
            prefer_closest = _parse_bool(name, value)
        elif name == MAX_ALLOWABLE_NUMA_NODES:
            number = _parse_int(name, value)
            if number < DEFAULT_MAX_ALLOWABLE_NUMA_NODES:
                msg = (
                    f"the minimum value of {go_quote(name)} should not be less than "
                    f"{DEFAULT_MAX_ALLOWABLE_NUMA_NODES}; use {DEFAULT_MAX_ALLOWABLE_NUMA_NODES} "
                    "or more"
                )
                raise ConfigError(msg)
            max_nodes = number
        else:
            msg = f"unsupported topologymanager option: {go_quote(name)} ({value})"
            raise ConfigError(msg)
    return TopologyPolicyOptions(
        prefer_closest_numa=prefer_closest, max_allowable_numa_nodes=max_nodes
    )


def _row(row: Sequence[int] | Mapping[int, int]) -> tuple[int, ...]:
    """A distance row as a tuple indexed by node id (a mapping row fills gaps with 0)."""
    if isinstance(row, Mapping):
        width = max((int(node) for node in row), default=-1) + 1
        return tuple(int(row.get(node, 0)) for node in range(width))
    return tuple(int(value) for value in row)


@dataclass(frozen=True, slots=True)
class NUMAInfo:
    """The NUMA nodes the merge works on (kubelet ``NUMAInfo``): ids in order, distance rows.

    ``distances[i][j]`` is the distance from node ``i`` to node ``j`` (rows indexed by node
    id, as the kernel's ``distance`` file lists them). Rows are only needed for
    ``prefer-closest-numa-nodes``.
    """

    nodes: tuple[int, ...]
    distances: Mapping[int, tuple[int, ...]] = field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def of(
        cls,
        nodes: Sequence[int],
        distances: Mapping[int, Sequence[int] | Mapping[int, int]] | None = None,
        *,
        require_distances: bool = False,
    ) -> NUMAInfo:
        """Build and validate; ``require_distances`` mirrors the prefer-closest check."""
        rows = {int(node): _row(row) for node, row in (distances or {}).items()}
        if len(set(nodes)) != len(nodes) or any(node < 0 for node in nodes):
            msg = f"NUMA node ids {list(nodes)} must be distinct and non-negative"
            raise ConfigError(msg)
        if require_distances:
            top = max(nodes, default=-1)
            for node in nodes:
                row = rows.get(node)
                if row is None:
                    msg = (
                        "cannot discover NUMA topology: error getting NUMA distances from "
                        f"cadvisor (node {node} has no distance row); give every NUMA node "
                        "its distances or drop prefer-closest-numa-nodes"
                    )
                    raise ConfigError(msg)
                if len(row) <= top:
                    msg = (
                        f"the distance row of NUMA node {node} has {len(row)} entries but "
                        f"node ids go up to {top}; give one distance per node id"
                    )
                    raise ConfigError(msg)
        return cls(nodes=tuple(nodes), distances=MappingProxyType(rows))

    @property
    def default_bits(self) -> int:
        """The kubelet's default affinity: every NUMA node."""
        bits = 0
        for node in self.nodes:
            bits |= 1 << node
        return bits

    def default_mask(self) -> NUMAMask:
        return NUMAMask.from_bits(self.default_bits)

    def average_distance(self, bits: int) -> float:
        """Mean of ``d[i][j]`` over all ordered pairs of nodes in the mask (kubelet float math)."""
        if bits == 0:
            return 0.0
        ids = NUMAMask.from_bits(bits).ids()
        total = 0.0
        count = 0.0
        for first in ids:
            row = self.distances[first]
            for second in ids:
                total += float(row[second])
                count += 1
        return total / count


@dataclass(frozen=True, slots=True)
class TopologyManagerConfig:
    """A validated Topology Manager configuration (``numa`` is None for policy none)."""

    policy: Policy
    scope: Scope
    options: TopologyPolicyOptions
    numa: NUMAInfo | None


def build_topology_manager_config(
    *,
    policy: str,
    scope: str = "container",
    options: Mapping[str, str] | None = None,
    numa_nodes: Sequence[int],
    distances: Mapping[int, Sequence[int] | Mapping[int, int]] | None = None,
    feature_gates: Mapping[str, bool] | None = None,
    maturity: Mapping[str, Maturity] = OPTION_MATURITY,
    gate_text: str = "lower",
) -> TopologyManagerConfig:
    """Validate a Topology Manager configuration in the kubelet's ``NewManager`` order."""
    if policy == "none":
        return TopologyManagerConfig(
            policy="none",
            scope="container" if scope != "pod" else "pod",
            options=TopologyPolicyOptions(),
            numa=None,
        )
    parsed = parse_policy_options(
        options or {}, feature_gates=feature_gates, maturity=maturity, gate_text=gate_text
    )
    numa = NUMAInfo.of(numa_nodes, distances, require_distances=parsed.prefer_closest_numa)
    limit = parsed.max_allowable_numa_nodes
    if len(numa.nodes) > limit:
        msg = (
            f"unsupported on machines with more than {limit} NUMA Nodes; this machine has "
            f"{len(numa.nodes)}: set the topology manager policy option "
            f"{MAX_ALLOWABLE_NUMA_NODES} to at least {len(numa.nodes)}"
        )
        raise ConfigError(msg)
    if policy not in POLICIES:
        msg = f'unknown policy: "{policy}"; use one of: {", ".join(POLICIES)}'
        raise ConfigError(msg)
    if scope not in SCOPES:
        msg = f'unknown scope: "{scope}"; use one of: {", ".join(SCOPES)}'
        raise ConfigError(msg)
    return TopologyManagerConfig(
        policy=policy,  # type: ignore[arg-type]  # checked against POLICIES above
        scope=scope,  # type: ignore[arg-type]  # checked against SCOPES above
        options=parsed,
        numa=numa,
    )
