"""The kubelet's feature gates per release: which exist, their defaults and locks (pure).

Two sources, the first that knows a gate wins:

1. ``core/versions.RULES`` (``gate.NAME`` rows, established per release with their PRs);
2. release 1.32's whole gate registry (``gates_data.SPECS_1_32``: every gate the 1.32
   kubelet registers, with the version history its versioned specs carry). A gate's state
   at release N is its last spec at or before N; a gate whose first spec comes after N did
   not exist in N.

The whole list of gates is established for 1.32 only: at other releases a gate neither
source knows (removed before 1.32, or added after it) is not refused as unknown (an open
question in docs/versions.md); a gate the table shows removed is.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Final

from cpumanager.core.versions import RULES, Release
from cpumanager.formats.kubelet_config.gates_data import SPECS_1_32

__all__ = [
    "ESTABLISHED",
    "GATES_PANIC_SINCE",
    "enabled",
    "gate_error",
    "gate_refusal",
    "gate_spec",
    "gate_stage",
    "gates_panic",
    "introduced_in",
    "known_gates",
    "removed_in",
]

ESTABLISHED: Final[frozenset[Release]] = frozenset({(1, 32)})
_REGISTRY: Final[Release] = (1, 32)


@cache
def _parsed() -> dict[str, tuple[tuple[Release, bool, bool, str], ...]]:
    out: dict[str, tuple[tuple[Release, bool, bool, str], ...]] = {}
    for line in SPECS_1_32.strip().splitlines():
        name, *specs = line.split()
        rows = []
        for spec in specs:
            version, level, default, locked = spec.split(":")
            major, minor = version.split(".")
            rows.append(((int(major), int(minor)), default == "1", locked == "L", level))
        out[name] = tuple(rows)
    return out


def _table_rule(name: str, release: Release) -> tuple[str, bool, bool] | None:
    found = None
    for rule in RULES:
        if rule.key == f"gate.{name}" and rule.since <= release:
            assert isinstance(rule.value, tuple)
            level, default, *lock = rule.value
            found = (str(level), bool(default), lock == ["locked"])
    return found


def gate_spec(name: str, release: Release) -> tuple[bool, bool] | None:
    """(default, locked) of gate ``name`` in ``release``; None when the release lacks it."""
    rule = _table_rule(name, release)
    if rule is not None:
        level, default, locked = rule
        return None if level == "absent" else (default, locked)
    specs = _parsed().get(name)
    if not specs:
        return None
    chosen = None
    for version, default, locked, _level in specs:
        if version <= release:
            chosen = (default, locked)
    return chosen


def known_gates(release: Release) -> frozenset[str] | None:
    """Every gate ``release`` registers, where the whole list is established; else None."""
    if release not in ESTABLISHED:
        return None
    return frozenset(name for name in _parsed() if gate_spec(name, release) is not None)


def removed_in(name: str) -> Release | None:
    """The release that removed gate ``name`` (per the release table, or because it comes
    later in 1.32's registry), else None."""
    removed = None
    rows = [rule for rule in RULES if rule.key == f"gate.{name}"]
    for rule in rows:
        level = rule.value[0] if isinstance(rule.value, tuple) else None
        if level == "absent" and any(r.since < rule.since for r in rows):
            removed = rule.since
    return removed


def introduced_in(name: str) -> Release | None:
    """The first release with gate ``name`` (1.32's registry), else None."""
    specs = _parsed().get(name)
    return specs[0][0] if specs else None


def gate_error(gates: Mapping[str, bool], release: Release) -> str | None:
    """``SetFromMap``'s refusal of the gates, or None.

    From 1.32 (measured) every locked gate set to the other value is refused, aggregated
    (``[a, b]``), and an unknown gate stops the walk; before, the first bad gate stops it.
    Go walks the map in random order; the file's order is used. Where the release's whole
    gate list is not established, only the gates the tables know are checked.
    """
    known = known_gates(release)
    found: list[str] = []
    for name, value in gates.items():
        spec = gate_spec(name, release)
        if spec is None:
            later = introduced_in(name)
            if known is not None or _removed(name, release) or (later and later > release):
                found.append(f"unrecognized feature gate: {name}")
                break
            continue
        default, locked = spec
        if locked and value != default:
            found.append(
                f"cannot set feature gate {name} to {_go_bool(value)}, feature is locked to "
                f"{_go_bool(default)}"
            )
            if release < GATES_COLLECTED_SINCE:
                break
    if not found:
        return None
    return found[0] if len(found) == 1 else "[" + ", ".join(found) + "]"


# From 1.32 (measured) SetFromMap collects every locked gate's refusal.
GATES_COLLECTED_SINCE: Final[Release] = (1, 32)


# From 1.32 v1beta1 defaulting merges the file's gates into a copy of the global gate and
# panics when that fails, so a bad gate in the file stops the kubelet while it loads.
GATES_PANIC_SINCE: Final[Release] = (1, 32)


def gates_panic(release: Release, file_gates: object) -> bool:
    """Whether the file's gates are what refuses, in defaulting (a panic at ``loads``)."""
    return release >= GATES_PANIC_SINCE and isinstance(file_gates, Mapping) and bool(file_gates)


def gate_refusal(problem: str, release: Release, *, from_file: bool) -> str:
    """The kubelet's text around ``SetFromMap``'s refusal."""
    if from_file and release >= GATES_PANIC_SINCE:
        return (
            "panic: failed to merge global and in-flight KubeletConfiguration while setting "
            f"defaults, error: {problem}"
        )
    return f"failed to set feature gates from initial flags-based config: {problem}"


def _removed(name: str, release: Release) -> bool:
    removed = removed_in(name)
    return removed is not None and removed <= release


def _go_bool(value: bool) -> str:
    return "true" if value else "false"


def enabled(gates: Mapping[str, bool], name: str, release: Release) -> bool:
    """Gate ``name`` as the kubelet's gate answers once ``gates`` are set: a gate set
    explicitly, else ``AllAlpha`` / ``AllBeta`` for a gate at that stage (``SetFromMap``'s
    special gates set every alpha / beta gate not set explicitly), else its default."""
    if name in gates:
        return gates[name]
    stage = gate_stage(name, release)
    for special, level in (("AllAlpha", "alpha"), ("AllBeta", "beta")):
        if special in gates and stage == level:
            return gates[special]
    spec = gate_spec(name, release)
    return spec[0] if spec is not None else False


_LEVELS = {"a": "alpha", "b": "beta", "g": "ga", "d": "deprecated"}


def gate_stage(name: str, release: Release) -> str | None:
    """The stage (alpha, beta, ga, deprecated) of gate ``name`` in ``release``, or None."""
    rule = _table_rule(name, release)
    if rule is not None:
        return None if rule[0] == "absent" else rule[0]
    chosen = None
    for version, _default, _locked, level in _parsed().get(name, ()):
        if version <= release:
            chosen = _LEVELS.get(level, level)
    return chosen


assert _REGISTRY in ESTABLISHED
