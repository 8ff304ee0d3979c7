"""The ``resize`` scenario event: the release's resize admission, then the new pod spec.

An applied resize changes the pod spec only; the managers keep their CPU sets, as every
released kubelet does (core/resize.py says why). :func:`apply_resize` is shared with
``node whatif --resize`` so that both answer with the same rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from cpumanager.core import versions
from cpumanager.core.resize import ResizeVerdict, resize_verdict
from cpumanager.core.workload import Container, Pod, QoSClass, qos_class
from cpumanager.sim.report import EventReport
from cpumanager.sim.scenario import Resize

__all__ = ["ResizeOutcome", "apply_resize", "resize_event"]


@dataclass(frozen=True, slots=True)
class ResizeOutcome:
    """The release's verdict, and the resized pod when the kubelet applies it."""

    kubelet: str
    verdict: ResizeVerdict | None
    error: str = ""
    pod: Pod | None = None


def apply_resize(
    pod: Pod,
    container: str,
    resources: Mapping[str, Fraction],
    kubelet: Mapping[str, Any],
    release: versions.Release,
) -> ResizeOutcome:
    """Resize ``container`` of ``pod`` (request = limit) as kubelet ``release`` would."""
    gates = kubelet.get("featureGates") or {}
    profile = versions.profile(release, {str(k): bool(v) for k, v in gates.items()})
    old = {str(c.name): c for c in pod.containers}.get(container)
    if old is None:
        message = f"pod {pod.display_name!r} has no container {container!r}"
        return ResizeOutcome(profile.name, None, message)
    changed = {name: old.requests.get(name) != amount for name, amount in resources.items()}
    verdict = resize_verdict(
        profile,
        guaranteed=qos_class(pod) is QoSClass.GUARANTEED,
        cpu_policy=str(kubelet.get("cpuManagerPolicy", "none")),
        memory_policy=str(kubelet.get("memoryManagerPolicy", "None")),
        cpu_changed=changed.get("cpu", False),
        memory_changed=changed.get("memory", False),
    )
    if verdict.outcome != "applied":
        return ResizeOutcome(profile.name, verdict)
    requests = {**old.requests, **resources}
    limits = {**old.limits, **resources}
    new = Container(old.name, requests, limits, old.kind)
    containers = tuple(new if c.name == old.name else c for c in pod.containers)
    return ResizeOutcome(profile.name, verdict, pod=replace(pod, containers=containers))


def resize_event(
    pod: Pod, event: Resize, kubelet: Mapping[str, Any], release: versions.Release
) -> tuple[EventReport, Pod | None]:
    """The event's report and the resized pod (None when nothing changes)."""
    report = EventReport("resize", pod.name, pod.uid)
    outcome = apply_resize(pod, event.container, event.resources, kubelet, release)
    verdict = outcome.verdict
    if verdict is None:
        report.error = {"type": "ScenarioError", "message": outcome.error}
        return report, None
    report.admitted = verdict.outcome == "applied"
    if verdict.outcome == "infeasible":
        report.error = {"type": verdict.reason, "message": verdict.message}
        return report, None
    if verdict.outcome == "unsupported":
        report.notes.append(verdict.message)
        return report, None
    note = f" ({verdict.note})" if verdict.note else ""
    report.notes.append(f"kubelet {outcome.kubelet}: resize of {event.container} applied{note}")
    return report, outcome.pod
