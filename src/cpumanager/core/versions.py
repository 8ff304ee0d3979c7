"""Every version-dependent kubelet rule, in one table (data + lookup; pure).

A kubelet release is a minor version ``1.N`` (patch releases do not change these rules).
Each :class:`Rule` says what a setting is from a release on (until the next rule for the same
key) and which PR changed it; :func:`profile` folds the table for one release and gate set.
docs/versions.md lists the same rows; tests/core/test_versions.py exercises each one.
Releases before :data:`OLDEST` are refused, the default is :data:`NEWEST`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal

from cpumanager.errors import InputError

__all__ = [
    "NEWEST",
    "OLDEST",
    "RULES",
    "KubeletProfile",
    "Release",
    "Rule",
    "cpu_formats_read",
    "gate_values",
    "known_options",
    "memory_formats_read",
    "parse_release",
    "profile",
    "readers_of",
]

Release = tuple[int, int]
Maturity = Literal["absent", "alpha", "beta", "ga"]

OLDEST: Final[Release] = (1, 18)
NEWEST: Final[Release] = (1, 37)

_VERSION = re.compile(r"v?(\d{1,2})\.(\d{1,3})(?:\.\d{1,4})?(?:[-+][0-9A-Za-z.\-+]{0,64})?")


def parse_release(text: str) -> Release:
    """``1.30``, ``v1.30.2`` or ``v1.30.2-eks-1`` → ``(1, 30)``; InputError outside 1.18..newest."""
    match = _VERSION.fullmatch(text.strip())
    if match is None:
        message = f"kubelet version {text[:40]!r} is not a version: write it like 1.30 or v1.30.2"
        raise InputError(message)
    release = (int(match.group(1)), int(match.group(2)))
    if not OLDEST <= release <= NEWEST:
        message = (
            f"kubelet version {text[:40]!r} is outside the releases modelled "
            f"({_show(OLDEST)} .. {_show(NEWEST)}): give one of those"
        )
        raise InputError(message)
    return release


def _show(release: Release) -> str:
    return f"{release[0]}.{release[1]}"


@dataclass(frozen=True, slots=True)
class Rule:
    """From ``since`` on (until the next rule with the same key), ``key`` is ``value``."""

    key: str
    since: Release
    value: object
    pr: str
    note: str = ""


def _r(key: str, since: str, value: object, pr: str, note: str = "") -> Rule:
    major, minor = since.split(".")
    return Rule(key, (int(major), int(minor)), value, pr, note)


# Gate maturity: ("alpha"|"beta"|"ga", default on?[, "locked"]): a locked gate set to the
# other value stops the kubelet (featuregate's LockToDefault); a removed gate is "absent" again (the
# kubelet then refuses to start with it set). Option level: "alpha"|"beta"|"ga". Sources:
# "kf" is pkg/features/kube_features.go (versioned specs), "#N" a kubernetes/kubernetes PR.
RULES: Final[tuple[Rule, ...]] = (
    # --- checkpoint formats ------------------------------------------------------------------
    _r("cpu.write", "1.18", "v2", "#84462", "pod UID + container name keys"),
    _r("cpu.write", "1.36", "v2|v3", "#134768", "V3 (podEntries) with PodLevelResourceManagers"),
    _r("cpu.write", "1.37", "v4", "#139102", "inline V3 fields, checksum 0, data/dataChecksum"),
    _r("cpu.read", "1.18", ("v1", "v2"), "#84462", "V1 first, then V2"),
    _r("cpu.read", "1.36", ("v3", "v2", "v1"), "#134768", "V3 with the gate; then V2, then V1"),
    _r("cpu.read", "1.37", ("v4", "v3", "v2"), "#139102", "no V1 reader; V2 is the oldest"),
    _r("memory.write", "1.18", "none", "-", "no memory manager before 1.21"),
    _r("memory.write", "1.21", "v1", "#95479"),
    _r("memory.write", "1.36", "v1|v2", "#134768", "V2 (podEntries) with the gate"),
    _r("memory.write", "1.37", "v3", "#139626", "inline V1 fields, data/dataChecksum"),
    _r("memory.read", "1.21", ("v1",), "#95479"),
    _r("memory.read", "1.36", ("v2", "v1"), "#134768", "V2 first with the gate"),
    _r("memory.read", "1.37", ("v3", "v2", "v1"), "#139626"),
    # --- feature gates -----------------------------------------------------------------------
    _r("gate.CPUManager", "1.18", ("beta", True), "kf", "beta since 1.10"),
    _r("gate.CPUManager", "1.26", ("ga", True, "locked"), "#113018", "locked on"),
    _r("gate.CPUManager", "1.33", ("absent", False), "#129296", "removed"),
    _r("gate.CPUManagerPolicyOptions", "1.18", ("absent", False), "-"),
    _r("gate.CPUManagerPolicyOptions", "1.22", ("alpha", False), "#101432"),
    _r("gate.CPUManagerPolicyOptions", "1.23", ("beta", True), "#105012"),
    _r("gate.CPUManagerPolicyOptions", "1.33", ("ga", True, "locked"), "#130535", "locked on"),
    _r("gate.CPUManagerPolicyAlphaOptions", "1.18", ("absent", False), "-"),
    _r("gate.CPUManagerPolicyAlphaOptions", "1.23", ("alpha", False), "#105012"),
    _r("gate.CPUManagerPolicyBetaOptions", "1.18", ("absent", False), "-"),
    _r("gate.CPUManagerPolicyBetaOptions", "1.23", ("beta", True), "#105012"),
    _r("gate.TopologyManager", "1.18", ("beta", True), "KEP-693", "beta since 1.18"),
    _r("gate.TopologyManager", "1.27", ("ga", True, "locked"), "#116093", "locked on"),
    _r("gate.TopologyManager", "1.29", ("absent", False), "#121252", "removed"),
    _r("gate.TopologyManagerPolicyOptions", "1.18", ("absent", False), "-"),
    _r("gate.TopologyManagerPolicyOptions", "1.26", ("alpha", False), "#112914"),
    _r("gate.TopologyManagerPolicyOptions", "1.28", ("beta", True), "#118816"),
    _r("gate.TopologyManagerPolicyOptions", "1.32", ("ga", True), "#128124", "can be turned off"),
    _r("gate.TopologyManagerPolicyOptions", "1.36", ("ga", True, "locked"), "#136380", "locked on"),
    _r("gate.TopologyManagerPolicyAlphaOptions", "1.18", ("absent", False), "-"),
    _r("gate.TopologyManagerPolicyAlphaOptions", "1.26", ("alpha", False), "#112914"),
    _r("gate.TopologyManagerPolicyBetaOptions", "1.18", ("absent", False), "-"),
    _r("gate.TopologyManagerPolicyBetaOptions", "1.26", ("beta", False), "#112914"),
    _r("gate.TopologyManagerPolicyBetaOptions", "1.28", ("beta", True), "#118816"),
    _r("gate.MemoryManager", "1.18", ("absent", False), "-"),
    _r("gate.MemoryManager", "1.21", ("alpha", False), "#95479"),
    _r("gate.MemoryManager", "1.22", ("beta", True), "kf"),
    _r("gate.MemoryManager", "1.32", ("ga", True, "locked"), "#128517", "locked on"),
    _r("gate.MemoryManager", "1.36", ("absent", False), "#136381", "removed"),
    _r("gate.SidecarContainers", "1.18", ("absent", False), "-"),
    _r("gate.SidecarContainers", "1.28", ("alpha", False), "kf"),
    _r("gate.SidecarContainers", "1.29", ("beta", True), "kf"),
    _r("gate.SidecarContainers", "1.33", ("ga", True, "locked"), "#129731", "locked on"),
    _r("gate.SidecarContainers", "1.37", ("absent", False), "#137755", "removed"),
    _r("gate.PodLevelResources", "1.18", ("absent", False), "-"),
    _r("gate.PodLevelResources", "1.32", ("alpha", False), "kf"),
    _r("gate.PodLevelResources", "1.34", ("beta", True), "#132999"),
    _r("gate.PodLevelResourceManagers", "1.18", ("absent", False), "-"),
    _r("gate.PodLevelResourceManagers", "1.36", ("alpha", False), "#134768"),
    _r("gate.PodLevelResourceManagers", "1.37", ("beta", False), "#140573", "off: #141209"),
    _r("gate.InPlacePodVerticalScaling", "1.18", ("absent", False), "-"),
    _r("gate.InPlacePodVerticalScaling", "1.27", ("alpha", False), "#102884"),
    _r("gate.InPlacePodVerticalScaling", "1.33", ("beta", True), "#130905"),
    _r("gate.InPlacePodVerticalScaling", "1.35", ("ga", True, "locked"), "kf", "locked on"),
    _r("gate.InPlacePodVerticalScalingExclusiveCPUs", "1.18", ("absent", False), "-"),
    _r("gate.InPlacePodVerticalScalingExclusiveCPUs", "1.32", ("alpha", False), "#128287"),
    _r("gate.InPlacePodVerticalScalingExclusiveMemory", "1.18", ("absent", False), "-"),
    _r("gate.InPlacePodVerticalScalingExclusiveMemory", "1.34", ("alpha", False), "#132473"),
    # --- static CPU policy options (level decides which maturity gate must be on) -------------
    _r("option.full-pcpus-only", "1.18", "absent", "-"),
    _r("option.full-pcpus-only", "1.22", "alpha", "#101432", "CPUManagerPolicyOptions only"),
    _r("option.full-pcpus-only", "1.23", "beta", "#105012"),
    _r("option.full-pcpus-only", "1.33", "ga", "#130535"),
    _r("option.distribute-cpus-across-numa", "1.18", "absent", "-"),
    _r("option.distribute-cpus-across-numa", "1.23", "alpha", "#105631"),
    _r("option.distribute-cpus-across-numa", "1.33", "beta", "#130541"),
    _r("option.align-by-socket", "1.18", "absent", "-"),
    _r("option.align-by-socket", "1.25", "alpha", "#111278"),
    _r("option.distribute-cpus-across-cores", "1.18", "absent", "-"),
    _r("option.distribute-cpus-across-cores", "1.31", "alpha", "KEP-4176"),
    _r("option.strict-cpu-reservation", "1.18", "absent", "-"),
    _r("option.strict-cpu-reservation", "1.32", "alpha", "#127483"),
    _r("option.strict-cpu-reservation", "1.33", "beta", "#130290"),
    _r("option.strict-cpu-reservation", "1.35", "ga", "#134388"),
    _r("option.prefer-align-cpus-by-uncorecache", "1.18", "absent", "-"),
    _r("option.prefer-align-cpus-by-uncorecache", "1.32", "alpha", "#126750"),
    _r("option.prefer-align-cpus-by-uncorecache", "1.34", "beta", "KEP-4800"),
    _r("option.prefer-align-cpus-by-uncorecache", "1.36", "ga", "#137055"),
    # --- topology manager options ------------------------------------------------------------
    _r("option.prefer-closest-numa-nodes", "1.18", "absent", "-"),
    _r("option.prefer-closest-numa-nodes", "1.26", "alpha", "#112914"),
    _r("option.prefer-closest-numa-nodes", "1.28", "beta", "#118816"),
    _r("option.prefer-closest-numa-nodes", "1.32", "ga", "#128124"),
    _r("option.max-allowable-numa-nodes", "1.18", "absent", "-"),
    _r("option.max-allowable-numa-nodes", "1.31", "beta", "#124148"),
    _r("option.max-allowable-numa-nodes", "1.35", "ga", "#134614"),
    # --- static CPU policy allocation rules (notes: docs/versions.md, docs/allocation.md) ----
    _r("alloc.uncore-partial", "1.32", "floor", "#126750", "need // CPUs-per-core cores"),
    _r("alloc.uncore-partial", "1.34", "ceil", "#131850", "ceil(need / CPUs-per-core) cores"),
    _r("alloc.distributed-socket", "1.18", "ignored", "-", "align-by-socket not consulted"),
    _r("alloc.distributed-socket", "1.37", "aligned", "#139778", "one socket first; shares capped"),
    _r("alloc.free-test", "1.18", "declared", "-", "free CPUs = CPUsPerSocket / CPUsPerCore"),
    _r("alloc.free-test", "1.37", "real", "#140498", "free CPUs = the socket's / core's own"),
    # --- in-place resize on a static node ----------------------------------------------------
    _r("resize.static-cpu", "1.18", "no-resize", "-", "InPlacePodVerticalScaling not served"),
    _r("resize.static-cpu", "1.27", "gate", "#102884", "alpha: only with the gate, no check"),
    _r("resize.static-cpu", "1.32", "refuse-guaranteed", "#128287", "every Guaranteed resize"),
    _r("resize.static-cpu", "1.34", "refuse-request-change", "#132473", "only that resource"),
    _r("resize.exclusive-cpus", "1.18", "not-released", "KEP-5554", "refused as Infeasible"),
    # --- error texts -------------------------------------------------------------------------
    _r("text.corrupt", "1.18", "checkpoint is corrupted", "-"),
    # the topology manager's option maturity refusal: 1.32.10 measured capitalized; the
    # newest tree writes it in lower case (first release not established: 1.35 assumed)
    _r("text.topology-option-gate", "1.26", "capitalized", "#112914"),
    _r("text.topology-option-gate", "1.35", "lower", "#134174", "release assumed"),
    _r(
        "text.unreadable-data",
        "1.37",
        "failed to deserialize cpu manager checkpoint data: %s",
        "#139102",
        "V4 reader: a missing or broken data string",
    ),
    _r(
        "text.resize-cpu",
        "1.32",
        "Resize is infeasible for Guaranteed Pods alongside CPU Manager static policy",
        "#128287",
    ),
    _r(
        "text.resize-cpu",
        "1.34",
        'Resize is infeasible for Guaranteed Pods alongside CPU Manager policy "static"',
        "#132473",
    ),
    _r(
        "text.resize-memory",
        "1.32",
        "Resize is infeasible for Guaranteed Pods alongside Memory Manager static policy",
        "#128287",
    ),
    _r(
        "text.resize-memory",
        "1.34",
        'Resize is infeasible for Guaranteed Pods alongside Memory Manager policy "Static"',
        "#132473",
    ),
)

_KEYS: Final = tuple(dict.fromkeys(rule.key for rule in RULES))


def _strings(rule: Rule | None) -> tuple[str, ...]:
    if rule is None or not isinstance(rule.value, tuple):
        return ()
    return tuple(str(item) for item in rule.value)


def _gate(rule: Rule) -> tuple[str, bool, bool]:
    """(maturity, default, locked): a locked gate cannot be set to the other value."""
    assert isinstance(rule.value, tuple)
    level, default, *lock = rule.value
    return str(level), bool(default), lock == ["locked"]


def _value(key: str, release: Release) -> Rule | None:
    found: Rule | None = None
    for rule in RULES:
        if rule.key == key and rule.since <= release:
            found = rule
    return found


@dataclass(frozen=True, slots=True)
class KubeletProfile:
    """What one release (with its gates) does, folded from :data:`RULES`."""

    release: Release
    gates: Mapping[str, bool]
    gate_levels: Mapping[str, str]
    locked_gates: Mapping[str, bool]  # gate -> the only value the kubelet accepts
    options: Mapping[str, str]
    cpu_write: str
    cpu_read: tuple[str, ...]
    memory_write: str
    memory_read: tuple[str, ...]
    resize_static_cpu: str
    uncore_partial: str
    distributed_socket: str
    free_test: str
    corrupt_text: str
    data_error_text: str
    resize_cpu_text: str
    resize_memory_text: str
    topology_option_gate_text: str = "lower"

    @property
    def name(self) -> str:
        return _show(self.release)

    def option_available(self, option: str, *, levels: bool = True) -> tuple[bool, str]:
        """Whether ``option`` is accepted here, and the one-line reason when not.

        The kubelet wants the manager's ``...PolicyOptions`` gate on for any option, then the
        maturity gate of an alpha or beta option (before 1.23 there was only the first).
        ``levels=False`` checks the first gate alone: the topology manager with policy
        ``none`` never parses its options (its constructor returns first), so neither an
        option's existence nor its maturity gate is checked then.
        """
        level = self.options.get(option, "absent")
        if not levels:
            level = "ga"
        if level == "absent":
            return False, f"{option} does not exist in kubelet {self.name}"
        manager = "TopologyManager" if option in _TOPOLOGY_OPTIONS else "CPUManager"
        gates = [f"{manager}PolicyOptions"]
        if level in ("alpha", "beta"):
            gates.append(f"{manager}Policy{level.capitalize()}Options")
        for gate in gates:
            if self.gate_levels.get(gate, "absent") == "absent":
                continue
            if not self.gates.get(gate, False):
                if gate == gates[0]:
                    return False, f"{option} needs {gate} in kubelet {self.name}: enable it"
                return False, f"{option} is {level} in kubelet {self.name}: enable {gate}"
        return True, ""


_TOPOLOGY_OPTIONS: Final = frozenset({"prefer-closest-numa-nodes", "max-allowable-numa-nodes"})


def profile(release: Release = NEWEST, gates: Mapping[str, bool] | None = None) -> KubeletProfile:
    """The folded rules for ``release``; ``gates`` overrides the release's defaults."""
    gates = dict(gates or {})
    defaults: dict[str, bool] = {}
    levels: dict[str, str] = {}
    locked: dict[str, bool] = {}
    options: dict[str, str] = {}
    for key in _KEYS:
        rule = _value(key, release)
        if rule is None:
            continue
        if key.startswith("gate."):
            level, default, is_locked = _gate(rule)
            name = key.removeprefix("gate.")
            levels[name] = str(level)
            if is_locked:
                locked[name] = default
            if level != "absent":
                defaults[name] = bool(default)
        elif key.startswith("option."):
            options[key.removeprefix("option.")] = str(rule.value)
    effective = {**defaults, **{k: v for k, v in gates.items() if k in defaults or k not in levels}}
    gate_on = effective.get("PodLevelResourceManagers", False)

    def pick(key: str) -> str:
        rule = _value(key, release)
        text = str(rule.value) if rule else "none"
        if "|" in text:
            off, on = text.split("|")
            return on if gate_on else off
        return text

    cpu_read = _strings(_value("cpu.read", release))
    if release == (1, 36) and not gate_on:
        cpu_read = ("v2", "v1")
    memory_read = _strings(_value("memory.read", release))
    if release == (1, 36) and not gate_on:
        memory_read = ("v1",)
    resize = _value("resize.static-cpu", release)
    corrupt = _value("text.corrupt", release)
    unreadable = _value("text.unreadable-data", release)
    resize_cpu = _value("text.resize-cpu", release)
    resize_memory = _value("text.resize-memory", release)
    return KubeletProfile(
        release=release,
        gates=effective,
        gate_levels=levels,
        locked_gates=locked,
        options=options,
        cpu_write=pick("cpu.write"),
        cpu_read=cpu_read,
        memory_write=pick("memory.write"),
        memory_read=memory_read,
        resize_static_cpu=str(resize.value) if resize else "no-resize",
        uncore_partial=pick("alloc.uncore-partial"),
        distributed_socket=pick("alloc.distributed-socket"),
        free_test=pick("alloc.free-test"),
        corrupt_text=str(corrupt.value) if corrupt else "checkpoint is corrupted",
        data_error_text=str(unreadable.value) if unreadable else "",
        resize_cpu_text=str(resize_cpu.value) if resize_cpu else "",
        resize_memory_text=str(resize_memory.value) if resize_memory else "",
        topology_option_gate_text=pick("text.topology-option-gate"),
    )


def gate_values(release: Release, set_gates: Mapping[str, bool]) -> dict[str, bool]:
    """Every gate of the table as kubelet ``release`` runs with ``set_gates``: a gate it knows
    is what was set, else its default; one it does not know is off when it is yet to come
    and on when it was removed after GA (its feature stayed). The kubelet's managers read
    the features this way; setting an unknown gate stops it (``node versions``)."""
    values: dict[str, bool] = {}
    for key in _KEYS:
        if not key.startswith("gate."):
            continue
        name = key.removeprefix("gate.")
        rule = _value(key, release)
        level, default, _ = _gate(rule) if rule is not None else ("absent", False, False)
        if level != "absent":
            values[name] = set_gates.get(name, default)
            continue
        graduated = any(r.key == key and r.since < release and _gate(r)[0] == "ga" for r in RULES)
        values[name] = graduated
    return values


def known_options() -> frozenset[str]:
    """Every CPU/topology manager option the table knows."""
    return frozenset(
        rule.key.removeprefix("option.") for rule in RULES if rule.key.startswith("option.")
    )


def _releases() -> list[Release]:
    return [(1, minor) for minor in range(OLDEST[1], NEWEST[1] + 1)]


def cpu_formats_read(release: Release, *, gate: bool | None = None) -> tuple[str, ...]:
    """The CPU formats a release's reader tries, in order (gate: PodLevelResourceManagers)."""
    gates = {} if gate is None else {"PodLevelResourceManagers": gate}
    return profile(release, gates).cpu_read


def memory_formats_read(release: Release, *, gate: bool | None = None) -> tuple[str, ...]:
    """The memory formats a release's reader tries, in order."""
    gates = {} if gate is None else {"PodLevelResourceManagers": gate}
    return profile(release, gates).memory_read


def readers_of(accepted_by: Mapping[Release, bool]) -> str:
    """``1.18-1.35, 1.37`` from a release → accepted map (ranges of consecutive releases)."""
    spans: list[list[Release]] = []
    for release in _releases():
        if accepted_by.get(release):
            if spans and spans[-1][-1][1] + 1 == release[1]:
                spans[-1].append(release)
            else:
                spans.append([release])
    parts = [
        _show(span[0]) if len(span) == 1 else f"{_show(span[0])}-{_show(span[-1])}"
        for span in spans
    ]
    return ", ".join(parts) if parts else "none"


RELEASES: Final[tuple[Release, ...]] = tuple(_releases())
