"""``node whatif``: would these pods be admitted on this node now, and why (pure).

The node is restored as a restarting kubelet restores it (``restore.py``), then each pod
goes through the kubelet's admission in its order: the resource managers' admit handler
(the topology manager's merge, then CPU, memory and device allocation), then the
resource-fit predicate (``fit.py``). A pod the predicate refuses keeps the CPUs the managers
handed it until the next stale-state removal (the start of the next admission), as in the
kubelet. Every decision is explained in sentences; the JSON report has ``simulate -o
json``'s shape: a ``start`` event for the restore, one ``admit`` event per pod, ``final``.

``resizes`` resize containers of pods running on the node, after the restore and before the
new pods, with the simulator's release-dependent rules (``sim/resize.py``): the verdict is
the kubelet's ``Infeasible`` message, or what changes (the spec and quota, never the CPU set).

:func:`admit_pods` is the same admission on a node restarted from a :class:`RestoredState`
(restored once, asked many times), without the report: the extender's path.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from cpumanager.core import versions
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.events import Released
from cpumanager.core.state import StateSnapshot
from cpumanager.core.workload import Pod, qos_class
from cpumanager.errors import InputError
from cpumanager.formats.kubelet_config import KubeletConfig
from cpumanager.manager.admission import AdmissionResult
from cpumanager.nodeanswers.fit import (
    Allocatable,
    FitFailure,
    fit_failures,
    node_allocatable,
    pod_requests,
)
from cpumanager.nodeanswers.restore import Restored, RestoredState, restore_node
from cpumanager.nodeview.snapshot import NodeSnapshot
from cpumanager.nodeview.version_preflight import recorded_release
from cpumanager.sim.report import decision_entries, placement_entry
from cpumanager.sim.resize import apply_resize

__all__ = [
    "PodVerdict",
    "ResizeRequest",
    "WhatIf",
    "admit_pods",
    "admitted_quietly",
    "exclusive_cpus",
    "pod_sentence",
    "what_if",
]


@dataclass(frozen=True, slots=True)
class ResizeRequest:
    """Resize ``container`` of the running pod ``pod`` (name, namespace/name or uid)."""

    pod: str
    container: str
    resources: Mapping[str, Fraction]


@dataclass(slots=True)
class PodVerdict:
    """One pod's admission: verdict, the kubelet's reason and message, and why."""

    pod: Pod
    admitted: bool
    reason: str = ""
    message: str = ""
    why: list[str] = field(default_factory=list)
    event: dict[str, Any] = field(default_factory=dict)
    result: AdmissionResult | None = None


@dataclass(slots=True)
class WhatIf:
    """The restore and every pod's verdict, with the JSON report."""

    node_name: str
    restore_notes: list[str]
    verdicts: list[PodVerdict]
    report: dict[str, Any]
    resizes: list[PodVerdict] = field(default_factory=list)


def _containers(restored: Restored, pod: Pod) -> dict[str, dict[str, Any]]:
    topology = restored.topology
    found: dict[str, dict[str, Any]] = {}
    for container in pod.all_containers():
        placed = restored.node.placement(pod, container)
        cpus = placed.cpus or topology.all_cpus  # the none policy keeps no default set
        found[container.name] = placement_entry(topology, placed, cpus)
    return found


def _manager_sentences(result: AdmissionResult) -> list[str]:
    lines: list[str] = []
    for decision in result.decisions:
        head = f"Container {decision.container}: "
        if decision.explanation is not None:
            lines.extend(head + line for line in decision.explanation.lines())
        else:
            mask = decision.merged.mask
            where = "any NUMA node" if mask is None else "NUMA {" + str(mask) + "}"
            lines.append(f"{head}the merged topology hint is {where}.")
    return lines


def _placement_sentences(restored: Restored, pod: Pod) -> list[str]:
    lines: list[str] = []
    for name, entry in _containers(restored, pod).items():
        if entry["exclusive"]:
            numa = ",".join(str(n) for n in entry["numa"])
            text = f"Container {name} gets exclusive CPUs {entry['cpus']} (NUMA {{{numa}}})"
        else:
            text = f"Container {name} runs in the shared pool {entry['cpus']}"
        devices = entry.get("devices") or {}
        if devices:
            held = "; ".join(f"{r}: {', '.join(ids)}" for r, ids in devices.items())
            text += f", devices {held}"
        lines.append(text + ".")
    return lines


def pod_sentence(pod: Pod) -> str:
    """The first sentence of every admission's explanation: the pod and its QoS class (the
    only one that names the pod being admitted)."""
    return f"{pod.display_name} is a {qos_class(pod).value} pod."


def exclusive_cpus(restored: Restored, pod: Pod, *, state: StateSnapshot | None = None) -> CPUSet:
    """Every CPU the pod's containers hold exclusively (their ``placement`` when exclusive:
    read from the CPU manager's state alone, which is all that part of a placement reads);
    ``state``: the node's CPU state, when the caller already has it."""
    if state is None:
        state = restored.node.cpu_state
    held = 0
    for container in pod.all_containers():
        cpus = state.cpuset_of(pod.uid, container.name)
        if cpus is not None:
            held |= cpus.bits
    return CPUSet.from_bits(held)


def _admission(
    restored: Restored, pod: Pod, allocatable: Allocatable, *, explain: bool
) -> tuple[AdmissionResult, list[FitFailure]]:
    """The kubelet's two admit handlers in order: the resource managers', then (when they
    admit) the resource-fit predicate; a pod both admit joins the active pods. The CPUs a
    pod refused by the predicate was handed stay assigned (the next stale-state removal
    returns them)."""
    result = restored.node.admit(pod, explain=explain)
    if not result.admitted:
        return result, []
    failures = fit_failures(pod_requests(pod), restored.usage(), len(restored.active), allocatable)
    if not failures:
        restored.active.append(pod)
    return result, failures


def _admit_one(restored: Restored, pod: Pod, allocatable: Allocatable) -> PodVerdict:
    result, failures = _admission(restored, pod, allocatable, explain=True)
    why = [pod_sentence(pod)]
    why.extend(_manager_sentences(result))
    stale = [e for e in restored.events.drain() if isinstance(e, Released)]
    for event in stale:
        why.insert(
            1,
            f"Stale-state removal first returned CPUs {event.cpus} of container "
            f"{event.container_name} (pod {event.pod_uid} is not active).",
        )
    if not result.admitted:
        why.append(
            f"The resource managers' admit handler rejects it: {result.reason}: {result.message}."
        )
        return PodVerdict(pod, False, result.reason, result.message, why, result=result)
    why.append("The resource managers admit it (topology, CPU, memory and devices).")
    if failures:
        first = failures[0]
        why.extend(f"Resource fit: {f.message}." for f in failures)
        held = [e["cpus"] for e in _containers(restored, pod).values() if e["exclusive"]]
        if held:
            why.append(
                f"The CPUs the CPU manager already handed out ({', '.join(held)}) stay "
                "assigned until the next stale-state removal."
            )
        return PodVerdict(pod, False, first.reason, first.message, why, result=result)
    why.append("Resource fit: the pod fits in the node's allocatable CPU, memory and pods.")
    why.extend(_placement_sentences(restored, pod))
    return PodVerdict(pod, True, "", "", why, result=result)


def _event(
    restored: Restored, verdict: PodVerdict, result_entries: list[dict[str, Any]]
) -> dict[str, Any]:
    pod = verdict.pod
    return {
        "event": "admit",
        "pod": pod.name or str(pod.uid),
        "uid": str(pod.uid),
        "admitted": verdict.admitted,
        "error": (
            None if verdict.admitted else {"type": verdict.reason, "message": verdict.message}
        ),
        "containers": _containers(restored, pod),
        "defaultCpuSet": str(restored.node.snapshot().cpu.default_cpuset),
        "notes": list(verdict.why),
        "explain": result_entries,
    }


def _running(restored: Restored, name: str) -> int:
    for index, pod in enumerate(restored.active):
        if name in (pod.display_name, pod.name, str(pod.uid)):
            return index
    running = ", ".join(sorted(p.display_name for p in restored.active)) or "none"
    msg = f"no pod {name!r} runs on the node (running: {running}); name one of them"
    raise InputError(msg)


def _amounts(resources: Mapping[str, Fraction]) -> str:
    def show(amount: Fraction) -> str:
        return str(amount.numerator) if amount.denominator == 1 else f"{float(amount):g}"

    return ", ".join(f"{name}={show(amount)}" for name, amount in resources.items())


def _resize_one(
    restored: Restored, request: ResizeRequest, release: versions.Release
) -> PodVerdict:
    index = _running(restored, request.pod)
    pod = restored.active[index]
    config = restored.kubelet
    kubelet = {
        "featureGates": dict(config.feature_gates),
        "cpuManagerPolicy": config.cpu_manager_policy,
        "memoryManagerPolicy": config.memory_manager_policy,
    }
    outcome = apply_resize(pod, request.container, request.resources, kubelet, release)
    verdict = outcome.verdict
    if verdict is None:
        raise InputError(outcome.error + "; name one of its containers")
    asked = f"resize of {request.container} to {_amounts(request.resources)}"
    why = [f"{pod.display_name} is a {qos_class(pod).value} pod; kubelet {outcome.kubelet}."]
    event: dict[str, Any] = {"event": "resize", "pod": pod.name or str(pod.uid)}
    event["uid"] = str(pod.uid)
    if verdict.outcome != "applied":
        why.append(f"The {asked} is not applied: {verdict.message}.")
        event.update(admitted=False, error={"type": verdict.reason, "message": verdict.message})
        event["notes"] = list(why)
        return PodVerdict(pod, False, verdict.reason, verdict.message, why, event)
    old = {str(c.name): c for c in pod.containers}[request.container]
    before = _amounts({k: old.requests.get(k, Fraction(0)) for k in request.resources})
    why.append(f"The {asked} is accepted: requests and limits were {before}.")
    if verdict.note:
        why.append(verdict.note[0].upper() + verdict.note[1:] + ".")
    placed = restored.node.placement(pod, pod.container(request.container))
    kept = placed.cpus or restored.topology.all_cpus
    why.append(f"Container {request.container} keeps CPUs {kept}.")
    if outcome.pod is not None:
        restored.replace_active(index, outcome.pod)
    event.update(admitted=True, error=None, notes=list(why))
    return PodVerdict(outcome.pod or pod, True, "", "", why, event)


def what_if(
    snapshot: NodeSnapshot,
    pods: Sequence[Pod],
    *,
    kubelet: KubeletConfig | None = None,
    explain: bool = False,
    resizes: Sequence[ResizeRequest] = (),
    release: versions.Release | None = None,
) -> WhatIf:
    """Restore the node, resize, then admit ``pods`` in order; refusals to start are raised."""
    release = release if release is not None else recorded_release(snapshot)
    restored = restore_node(snapshot, kubelet=kubelet, release=release)
    state = restored.node.snapshot()
    allocatable = node_allocatable(
        restored.topology,
        restored.kubelet,
        hugepages=snapshot.hugepages,
        devices=state.devices,
    )
    events: list[dict[str, Any]] = [
        {
            "event": "start",
            "admitted": True,
            "error": None,
            "defaultCpuSet": str(state.cpu.default_cpuset),
            "notes": list(restored.notes),
        }
    ]
    resized = [_resize_one(restored, request, release) for request in resizes]
    events.extend(r.event for r in resized)
    verdicts: list[PodVerdict] = []
    for pod in pods:
        verdict = _admit_one(restored, pod, allocatable)
        entries = decision_entries(verdict.result) if explain and verdict.result else []
        verdict.event = _event(restored, verdict, entries)
        if not explain:
            verdict.event.pop("explain")
        verdicts.append(verdict)
        events.append(verdict.event)
    final = restored.node.snapshot().cpu
    report = {
        "scenario": f"node {snapshot.node_name}",
        "events": events,
        "final": {
            "defaultCpuSet": str(final.default_cpuset),
            "entries": {
                str(uid): {str(name): str(cpus) for name, cpus in containers.items()}
                for uid, containers in final.assignments.items()
            },
        },
        "checkpoint": (restored.store.data or b"").decode("utf-8", "replace"),
        "metrics": {},
    }
    return WhatIf(snapshot.node_name, restored.notes, verdicts, report, resized)


def admit_pods(
    prepared: RestoredState | Restored, pods: Sequence[Pod], allocatable: Allocatable
) -> tuple[Restored, list[PodVerdict]]:
    """Admit ``pods`` in order on a copy of a restored node (what :func:`what_if` does after
    its restore, with the same rules, and no report); the copy is returned with them. A
    started node (:class:`Restored`) is copied with ``Restored.fork``, values are started."""
    restored = prepared.fork() if isinstance(prepared, Restored) else prepared.start()
    return restored, [_admit_one(restored, pod, allocatable) for pod in pods]


def admitted_quietly(restored: Restored, pods: Sequence[Pod], allocatable: Allocatable) -> bool:
    """Whether the last of ``pods`` is admitted, by :func:`_admit_one`'s rules and with its
    effects on ``restored`` (managers' state, active pods), but with no explanation built:
    for callers that need the words only of a refusal (they run :func:`admit_pods` then)."""
    admitted = False
    for pod in pods:
        result, failures = _admission(restored, pod, allocatable, explain=False)
        admitted = result.admitted and not failures
    return admitted
