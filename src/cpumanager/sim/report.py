"""What a simulation reports: one entry per scenario event, then the final state.

``to_json`` gives the shape ``cpumanager simulate -o json`` prints (docs/simulate.md);
explanations (merge reasoning, allocation traces) are included on request only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cpumanager.core.cpuset import CPUSet
from cpumanager.core.hints.source import HintSource
from cpumanager.core.topology import CPUTopology
from cpumanager.manager.admission import AdmissionResult
from cpumanager.manager.node import Placement

__all__ = [
    "EventReport",
    "SimulationReport",
    "decision_entries",
    "hints_json",
    "placement_entry",
]


@dataclass(slots=True)
class EventReport:
    """What one scenario event did (serialised as the issue's JSON shape, plus extras)."""

    event: str
    pod: str | None = None
    uid: str | None = None
    admitted: bool | None = None
    error: dict[str, str] | None = None
    containers: dict[str, dict[str, Any]] = field(default_factory=dict)
    default_cpuset: str = ""
    released: list[dict[str, Any]] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    explain: list[dict[str, Any]] = field(default_factory=list)
    reconcile: dict[str, Any] | None = None

    def to_json(self, *, explain: bool) -> dict[str, Any]:
        out: dict[str, Any] = {"event": self.event}
        if self.pod is not None:
            out["pod"] = self.pod
            out["uid"] = self.uid
        if self.admitted is not None:
            out["admitted"] = self.admitted
        out["error"] = self.error
        if self.containers or self.event == "admit":
            out["containers"] = self.containers
        out["defaultCpuSet"] = self.default_cpuset
        if self.released:
            out["released"] = self.released
        if self.repairs:
            out["repairs"] = self.repairs
        if self.notes:
            out["notes"] = self.notes
        if self.reconcile is not None:
            out["reconcile"] = self.reconcile
        if explain and self.explain:
            out["explain"] = self.explain
        return out


@dataclass(slots=True)
class SimulationReport:
    """The whole run: every event's report, the final CPU state, checkpoint and metrics."""

    scenario: str
    machine: str
    events: list[EventReport]
    final_default: str
    final_entries: dict[str, dict[str, str]]
    checkpoint: str
    metrics: dict[str, float]

    def to_json(self, *, explain: bool = False) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "events": [e.to_json(explain=explain) for e in self.events],
            "final": {"defaultCpuSet": self.final_default, "entries": self.final_entries},
            "checkpoint": self.checkpoint,
            "metrics": self.metrics,
        }


def hints_json(hints: object) -> object:
    """A provider's answer as JSON: hint lists, rule descriptions, or null."""
    if hints is None:
        return None
    if not isinstance(hints, Mapping):
        return str(hints)
    out: dict[str, object] = {}
    for resource, value in hints.items():
        if isinstance(value, tuple):
            out[resource] = [h.to_json() for h in value]
        elif isinstance(value, HintSource):
            out[resource] = value.describe()
        else:
            out[resource] = None
    return out


def decision_entries(result: AdmissionResult) -> list[dict[str, Any]]:
    """The ``explain`` entries of one admission: each provider's hints, the merge, why."""
    entries: list[dict[str, Any]] = []
    for decision in result.decisions:
        entry: dict[str, Any] = {
            "container": decision.container,
            "providers": {name: hints_json(hints) for name, hints in decision.provider_hints},
            "merged": decision.merged.to_json(),
            "admit": decision.admitted,
        }
        if decision.explanation is not None:
            names = [name for name, _ in decision.provider_hints]
            explanation = decision.explanation.with_provider_names(names)
            entry["why"] = list(explanation.lines())
            entry["blocking"] = list(explanation.blocking)
        entries.append(entry)
    return entries


def placement_entry(topology: CPUTopology, placed: Placement, cpus: CPUSet) -> dict[str, Any]:
    """One container's entry in a report's ``containers``: ``cpus`` (its placement's CPUs,
    or what the caller shows for a policy that keeps no default set), where they sit, its
    hint, devices and memory nodes."""
    entry: dict[str, Any] = {
        "cpus": str(cpus),
        "exclusive": placed.exclusive,
        "numa": list(topology.numa_of(cpus)),
        "sockets": list(topology.sockets_of(cpus)),
        "cores": list(topology.cores_of(cpus)),
        "hint": placed.hint.to_json(),
    }
    if placed.devices:
        entry["devices"] = {k: list(v) for k, v in placed.devices.items()}
    if placed.memory_numa:
        entry["memoryNuma"] = list(placed.memory_numa)
    return entry
