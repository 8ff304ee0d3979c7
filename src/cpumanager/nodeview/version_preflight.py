"""Upgrade/downgrade pre-flight of a node snapshot to another kubelet release (pure).

Before the node is touched: will the target release read the node's checkpoints, keep every
assignment, and accept the configuration's options and gates? Each checkpoint gets
``checkpoint/compat.plan`` (as is, convert, drain or refuse); each static-policy and
topology-manager option is checked against the release's maturity levels
(core/versions.py); a feature gate the release does not know stops the kubelet with
``unrecognized feature gate: NAME``, and so does a locked gate (GA, ``LockToDefault``) set
to the other value: ``cannot set feature gate NAME to false, feature is locked to true``.
The verdict is the worst of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from cpumanager.checkpoint import compat
from cpumanager.core import versions
from cpumanager.core.versions import Release
from cpumanager.errors import ConfigError
from cpumanager.formats.kubelet_config import KubeletConfig
from cpumanager.nodeview.snapshot import NodeSnapshot

__all__ = [
    "Finding",
    "VersionPreflight",
    "config_findings",
    "preflight_to_release",
    "recorded_release",
    "startup_refusal",
]

_RANK: Final = {"as-is": 0, "convert": 1, "drain": 2, "refuse": 3}
_KINDS: Final = ("cpu_manager_state", "memory_manager_state")


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing the target release does differently: what, the verdict, the exact text."""

    subject: str
    verdict: str  # as-is | convert | drain | refuse
    text: str
    drain: tuple[str, ...] = ()
    data: bytes = b""
    target_format: str = ""


@dataclass(frozen=True, slots=True)
class VersionPreflight:
    """Every finding and the node's verdict (the worst finding)."""

    release: Release
    from_release: Release | None
    findings: tuple[Finding, ...]

    @property
    def verdict(self) -> str:
        worst = max((_RANK[f.verdict] for f in self.findings), default=0)
        return next(name for name, rank in _RANK.items() if rank == worst)

    @property
    def drain(self) -> tuple[str, ...]:
        return tuple(sorted({pod for f in self.findings for pod in f.drain}))


def _checkpoint_findings(
    snapshot: NodeSnapshot, release: Release, gate: bool | None
) -> list[Finding]:
    found: list[Finding] = []
    name = f"{release[0]}.{release[1]}"
    for kind in _KINDS:
        data = snapshot.checkpoint_bytes(kind)
        if data is None:
            continue
        plan = compat.plan(data, release, gate=gate)
        entry = snapshot.checkpoints.get(kind)
        problem = entry.problem if entry is not None else ""
        fmt = compat.FORMAT_NAMES.get(compat.identify(data)) or (
            f"which does not verify: {problem}" if problem else "an unknown format"
        )
        if plan.verdict == "as-is":
            text = f"{kind} ({fmt}): kubelet {name} reads it and keeps every assignment"
        elif plan.verdict == "convert":
            text = (
                f"{kind} ({fmt}): kubelet {name} "
                + (f"refuses it ({plan.now.error})" if plan.now.error else "drops pod entries")
                + f"; convert it to {plan.target_format.upper()} with 'cpumanager state "
                f"migrate FILE --to-kubelet {name} --in-place' before starting the kubelet"
            )
        elif plan.verdict == "drain":
            refusal = (
                f"would stop with 'could not restore state from checkpoint: {plan.now.error}'"
                if plan.now.error
                else "would drop their pod-level assignments"
            )
            text = f"{kind} ({fmt}): kubelet {name} {refusal}; {plan.reason}"
        else:
            text = f"{kind} ({fmt}): kubelet {name} cannot use it: {plan.reason}"
        found.append(Finding(kind, plan.verdict, text, plan.drain, plan.data, plan.target_format))
    return found


def _config_findings(
    config: KubeletConfig,
    gates: Mapping[str, bool],
    profile: versions.KubeletProfile,
    *,
    option_levels: bool = True,
) -> list[Finding]:
    found: list[Finding] = []
    for option in sorted(config.cpu_manager_policy_options):
        if option in profile.options or option not in versions.known_options():
            ok, why = profile.option_available(option, levels=option_levels)
            if not ok:
                found.append(Finding(f"cpuManagerPolicyOptions.{option}", "refuse", why))
    for option in sorted(config.topology_manager_policy_options):
        if option in versions.known_options():
            ok, why = profile.option_available(
                option, levels=option_levels and config.topology_manager_policy != "none"
            )
            if not ok:
                found.append(Finding(f"topologyManagerPolicyOptions.{option}", "refuse", why))
    for gate in sorted(gates):
        level = profile.gate_levels.get(gate)
        if level == "absent":  # not yet added, or removed after GA (core/versions.py)
            text = f"unrecognized feature gate: {gate} (kubelet {profile.name} does not know it)"
            found.append(Finding(f"featureGates.{gate}", "refuse", text))
        locked = profile.locked_gates.get(gate)
        value = gates[gate]
        if locked is not None and value != locked:  # featuregate's LockToDefault
            text = (
                f"cannot set feature gate {gate} to {_go_bool(value)}, feature is locked to "
                f"{_go_bool(locked)} (kubelet {profile.name} does not start: remove the setting)"
            )
            found.append(Finding(f"featureGates.{gate}", "refuse", text))
    return found


def _go_bool(value: bool) -> str:
    return "true" if value else "false"


def preflight_to_release(
    snapshot: NodeSnapshot,
    release: Release,
    *,
    config: KubeletConfig | None = None,
    gates: Mapping[str, bool] | None = None,
    from_release: Release | None = None,
) -> VersionPreflight:
    """The target release's verdict on the snapshot's files and ``config`` (default: the node's)."""
    config = config if config is not None else snapshot.kubelet_config()
    merged = {**dict(config.feature_gates), **dict(gates or {})}
    profile = versions.profile(release, merged)
    gate = merged.get("PodLevelResourceManagers")
    findings = _checkpoint_findings(snapshot, release, gate)
    findings.extend(_config_findings(config, merged, profile))
    return VersionPreflight(release, from_release, tuple(findings))


def config_findings(
    config: KubeletConfig, release: Release, *, option_levels: bool = True
) -> list[Finding]:
    """What kubelet ``release`` says of ``config``'s options and gates alone (no files).

    ``option_levels=False`` leaves out whether each option exists in the release and its
    maturity gate (a ``Node(release=...)`` refuses those itself, in the kubelet's words),
    keeping the ``...PolicyOptions`` gates and the feature gates the release refuses."""
    gates = config.feature_gates
    return _config_findings(
        config, gates, versions.profile(release, gates), option_levels=option_levels
    )


def recorded_release(snapshot: NodeSnapshot) -> Release:
    """The release the snapshot recorded (``kubeletVersion``), else the newest; a recorded
    release outside the ones modelled is an InputError that says so."""
    recorded = snapshot.kubelet_version
    return versions.parse_release(recorded) if recorded else versions.NEWEST


def startup_refusal(
    snapshot: NodeSnapshot,
    release: Release,
    config: KubeletConfig | None = None,
    *,
    files: bool = True,
) -> ConfigError | None:
    """Why kubelet ``release`` would not start on the node with ``config`` (default: the
    node's), as one error; None when it starts. ``files=False`` leaves the checkpoints out
    (a restore reads them itself and refuses with the kubelet's own words)."""
    if files:
        findings = preflight_to_release(snapshot, release, config=config).findings
    else:
        config = config if config is not None else snapshot.kubelet_config()
        findings = tuple(config_findings(config, release))
    refusals = [f.text for f in findings if f.verdict == "refuse"]
    if not refusals:
        return None
    name = f"{release[0]}.{release[1]}"
    msg = (
        f"kubelet {name} would not start on this node: {'; '.join(refusals)}; "
        f"see 'cpumanager node preflight --to-kubelet {name}'"
    )
    return ConfigError(msg)
