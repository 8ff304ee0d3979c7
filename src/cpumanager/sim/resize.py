"""The ``resize`` scenario event: the release's resize admission, then the new pod spec.

An applied resize changes the pod spec only; the managers keep their CPU sets, as every
released kubelet does (core/resize.py says why).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from cpumanager.core import versions
from cpumanager.core.resize import resize_verdict
from cpumanager.core.workload import Container, Pod, QoSClass, qos_class
from cpumanager.sim.report import EventReport
from cpumanager.sim.scenario import Resize

__all__ = ["resize_event"]


def resize_event(
    pod: Pod, event: Resize, kubelet: Mapping[str, Any], release: versions.Release
) -> tuple[EventReport, Pod | None]:
    """The event's report and the resized pod (None when nothing changes)."""
    report = EventReport("resize", pod.name, pod.uid)
    gates = kubelet.get("featureGates") or {}
    profile = versions.profile(release, {str(k): bool(v) for k, v in gates.items()})
    old = {str(c.name): c for c in pod.containers}.get(event.container)
    if old is None:
        message = f"pod {pod.display_name!r} has no container {event.container!r}"
        report.error = {"type": "ScenarioError", "message": message}
        return report, None
    changed = {name: old.requests.get(name) != amount for name, amount in event.resources.items()}
    verdict = resize_verdict(
        profile,
        guaranteed=qos_class(pod) is QoSClass.GUARANTEED,
        cpu_policy=str(kubelet.get("cpuManagerPolicy", "none")),
        memory_policy=str(kubelet.get("memoryManagerPolicy", "None")),
        cpu_changed=changed.get("cpu", False),
        memory_changed=changed.get("memory", False),
    )
    report.admitted = verdict.outcome == "applied"
    if verdict.outcome == "infeasible":
        report.error = {"type": verdict.reason, "message": verdict.message}
        return report, None
    if verdict.outcome == "unsupported":
        report.notes.append(verdict.message)
        return report, None
    requests = {**old.requests, **event.resources}
    limits = {**old.limits, **event.resources}
    new = Container(old.name, requests, limits, old.kind)
    containers = tuple(new if c.name == old.name else c for c in pod.containers)
    note = f" ({verdict.note})" if verdict.note else ""
    report.notes.append(f"kubelet {profile.name}: resize of {event.container} applied{note}")
    return report, replace(pod, containers=containers)
