"""Static policy options (``--cpu-manager-policy-options``), parsed the kubelet's way.

Values are Go ``strconv.ParseBool`` strings. Every option has a maturity; an alpha (beta)
option is refused while the ``CPUManagerPolicyAlphaOptions`` (``...BetaOptions``) gate is
off, with the kubelet's error text. Stable options are always accepted. Four pairs of options
exclude each other. The kubelet walks its option map in random order, so when several
options are wrong the first error it reports is not fixed; we check names in sorted order.

Maturity follows the newest kubelet snapshot we target: full-pcpus-only is stable;
distribute-cpus-across-numa, strict-cpu-reservation and prefer-align-cpus-by-uncorecache
are beta; align-by-socket and distribute-cpus-across-cores are alpha.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

from cpumanager.core.gocompat import go_quote, parse_go_bool
from cpumanager.core.topology import CPUTopology
from cpumanager.errors import ConfigError

__all__ = [
    "ALIGN_BY_SOCKET",
    "DISTRIBUTE_CPUS_ACROSS_CORES",
    "DISTRIBUTE_CPUS_ACROSS_NUMA",
    "FULL_PCPUS_ONLY",
    "OPTION_MATURITY",
    "PREFER_ALIGN_CPUS_BY_UNCORECACHE",
    "STRICT_CPU_RESERVATION",
    "Maturity",
    "StaticPolicyOptions",
    "validate_align_by_socket",
]

FULL_PCPUS_ONLY = "full-pcpus-only"
DISTRIBUTE_CPUS_ACROSS_NUMA = "distribute-cpus-across-numa"
ALIGN_BY_SOCKET = "align-by-socket"
DISTRIBUTE_CPUS_ACROSS_CORES = "distribute-cpus-across-cores"
STRICT_CPU_RESERVATION = "strict-cpu-reservation"
PREFER_ALIGN_CPUS_BY_UNCORECACHE = "prefer-align-cpus-by-uncorecache"


class Maturity(Enum):
    ALPHA = "Alpha"
    BETA = "Beta"
    STABLE = "GA"


# The newest release's levels (core/versions.py has every release's): strict-cpu-reservation
# is GA from 1.35 (#134388), prefer-align-cpus-by-uncorecache from 1.36 (#137055).
OPTION_MATURITY: Mapping[str, Maturity] = {
    FULL_PCPUS_ONLY: Maturity.STABLE,
    DISTRIBUTE_CPUS_ACROSS_NUMA: Maturity.BETA,
    ALIGN_BY_SOCKET: Maturity.ALPHA,
    DISTRIBUTE_CPUS_ACROSS_CORES: Maturity.ALPHA,
    STRICT_CPU_RESERVATION: Maturity.STABLE,
    PREFER_ALIGN_CPUS_BY_UNCORECACHE: Maturity.STABLE,
}


# Checked in this order, as the kubelet does after parsing every option.
_INCOMPATIBLE = (
    (FULL_PCPUS_ONLY, DISTRIBUTE_CPUS_ACROSS_CORES),
    (DISTRIBUTE_CPUS_ACROSS_NUMA, DISTRIBUTE_CPUS_ACROSS_CORES),
    (PREFER_ALIGN_CPUS_BY_UNCORECACHE, DISTRIBUTE_CPUS_ACROSS_CORES),
    (PREFER_ALIGN_CPUS_BY_UNCORECACHE, DISTRIBUTE_CPUS_ACROSS_NUMA),
)


@dataclass(frozen=True, slots=True)
class StaticPolicyOptions:
    """The static policy's switches; all off is the kubelet's behaviour before options."""

    full_pcpus_only: bool = False
    distribute_cpus_across_numa: bool = False
    align_by_socket: bool = False
    distribute_cpus_across_cores: bool = False
    strict_cpu_reservation: bool = False
    prefer_align_cpus_by_uncorecache: bool = False
    # Not a kubelet option: allocate from the distributed search's best NUMA combination as
    # k/k#141238 intends. Off = what released kubelets do (see ``go_append``).
    distributed_combination_fix: bool = False
    # Release rules (core/versions.py ``alloc.*``), on = the newest kubelet. Off:
    # ``uncore_odd_requests`` the partial uncore step of 1.32-1.33 (need // CPUs-per-core
    # cores, so an odd request never fits one cache); ``distributed_by_socket`` the
    # distributed search of 1.23-1.36 (align-by-socket ignored, shares not capped).
    uncore_odd_requests: bool = True
    distributed_by_socket: bool = True
    # ``real_free_sizes`` off: the "free socket / free core" test of 1.18-1.36 (free CPUs
    # equal to the declared CPUsPerSocket / CPUsPerCore, k/k#140498 in 1.37).
    real_free_sizes: bool = True

    @classmethod
    def parse(
        cls,
        raw: Mapping[str, str],
        *,
        alpha_enabled: bool = False,
        beta_enabled: bool = True,
        maturity_of: Mapping[str, Maturity] | None = None,
    ) -> StaticPolicyOptions:
        """Options from ``name -> "true"/"false"``; ConfigError with the kubelet's text.

        ``maturity_of`` is one release's levels (an option it lacks is unknown there);
        default: the newest release's, :data:`OPTION_MATURITY`.
        """
        levels = OPTION_MATURITY if maturity_of is None else maturity_of
        values: dict[str, bool] = {}
        for name in sorted(raw):
            maturity = levels.get(name)
            if maturity is None:
                msg = f"unknown CPU Manager Policy option: {go_quote(name)}"
                raise ConfigError(msg)
            if maturity is Maturity.ALPHA and not alpha_enabled:
                msg = (
                    f"CPU Manager Policy Alpha-level Options not enabled, but option "
                    f"{go_quote(name)} provided"
                )
                raise ConfigError(msg)
            if maturity is Maturity.BETA and not beta_enabled:
                msg = (
                    f"CPU Manager Policy Beta-level Options not enabled, but option "
                    f"{go_quote(name)} provided"
                )
                raise ConfigError(msg)
            value = parse_go_bool(raw[name])
            if value is None:
                msg = (
                    f"bad value for option {go_quote(name)}: strconv.ParseBool: parsing "
                    f"{go_quote(raw[name])}: invalid syntax"
                )
                raise ConfigError(msg)
            values[name] = value
        for first, second in _INCOMPATIBLE:
            if values.get(first) and values.get(second):
                msg = f"static policy options {first} and {second} can not be used at the same time"
                raise ConfigError(msg)
        return cls(**{name.replace("-", "_"): value for name, value in values.items()})

    def enabled_names(self) -> tuple[str, ...]:
        """Names of the options that are on, in the kubelet's spelling."""
        return tuple(
            name for name in OPTION_MATURITY if getattr(self, name.replace("-", "_"), False)
        )


def validate_align_by_socket(
    options: StaticPolicyOptions, topology: CPUTopology, topology_manager_policy: str
) -> None:
    """The kubelet's hardware check for align-by-socket (its texts, typos included)."""
    if not options.align_by_socket:
        return
    if topology_manager_policy == "single-numa-node":
        msg = (
            "Topolgy manager single-numa-node policy is incompatible with CPUManager "
            "align-by-socket policy option"
        )
        raise ConfigError(msg)
    if topology.num_sockets > topology.num_numa_nodes:
        msg = (
            "Align by socket is not compatible with hardware where number of sockets are more "
            "than number of NUMA"
        )
        raise ConfigError(msg)
