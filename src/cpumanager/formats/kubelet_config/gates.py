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

from functools import cache
from typing import Final

from cpumanager.core.versions import RULES, Release
from cpumanager.formats.kubelet_config.gates_data import SPECS_1_32

__all__ = ["ESTABLISHED", "gate_spec", "known_gates", "removed_in"]

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


assert _REGISTRY in ESTABLISHED
