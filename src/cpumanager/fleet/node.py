"""One node's answer for the fleet: successive copies of a pod through the node what-if.

The node is restored from its snapshot and copies are admitted in turn by the same code as
``cpumanager node whatif`` (the resource managers' admit handler, then the resource-fit
predicate), until the first refusal or ``limit`` copies. One restore usually does: the
first try admits up to a bound from the node's CPU count and the pod's CPU request; only if
every copy of it was admitted is the try repeated with twice as many.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction
from pathlib import Path

from cpumanager.core.cpuset import CPUSet
from cpumanager.core.ids import PodUID
from cpumanager.core.workload import Pod
from cpumanager.errors import CpuManagerError
from cpumanager.fleet.placement import UNUSABLE, CopyVerdict, NodeAnswer, score
from cpumanager.nodeview.snapshot import NodeSnapshot

__all__ = ["admits", "answer_file", "answer_snapshot", "copies_of"]


def copies_of(pod: Pod, count: int) -> list[Pod]:
    """``count`` copies with their own uid and name (``NAME-1``, ``NAME-2``, ...)."""
    base = pod.name or str(pod.uid)
    return [
        dataclasses.replace(pod, uid=PodUID(f"{pod.uid}-{i}"), name=f"{base}-{i}")
        for i in range(1, count + 1)
    ]


def _cpu_request(pod: Pod) -> Fraction:
    """A lower bound of the pod's CPU request (only used to size the first try)."""
    containers = sum((c.requests.get("cpu", Fraction(0)) for c in pod.containers), Fraction(0))
    return max(containers, pod.requests.get("cpu", Fraction(0)))


def _first_try(pod: Pod, cpus: int, limit: int) -> int:
    request = _cpu_request(pod)
    if request <= 0:
        return limit
    return max(1, min(limit, int(cpus / request) + 1))


def answer_snapshot(snapshot: NodeSnapshot, pod: Pod, limit: int) -> NodeAnswer:
    """Admit up to ``limit`` copies of ``pod`` on the node in turn; stop at a refusal."""
    from cpumanager.nodeanswers.whatif import what_if

    name = snapshot.node_name
    try:
        total = len(snapshot.topology().all_cpus)
        request = _cpu_request(pod)
        tries = _first_try(pod, total, limit)
        while True:
            answer = what_if(snapshot, copies_of(pod, tries))
            verdicts: list[CopyVerdict] = []
            in_shared = 0
            for verdict in answer.verdicts:
                if not verdict.admitted:
                    verdicts.append(CopyVerdict(False, verdict.reason, verdict.message))
                    break
                shared = CPUSet.parse(str(verdict.event.get("defaultCpuSet") or ""))
                free = len(shared) if len(shared) else total
                containers = verdict.event.get("containers") or {}
                if not any(c.get("exclusive") for c in containers.values()):
                    in_shared += 1  # the pool does not shrink: charge its requests to it
                    free = max(0, free - math.ceil(in_shared * request))
                verdicts.append(CopyVerdict(True, free_cpus=free, score=score(free, total)))
            if not verdicts[-1].admitted or tries >= limit:
                return NodeAnswer(name, tuple(verdicts), limit)
            tries = min(limit, tries * 2)
    except CpuManagerError as err:
        return NodeAnswer(name, (), limit, error=str(err))


def admits(snapshot: NodeSnapshot, pod: Pod) -> CopyVerdict:
    """Would this node's kubelet admit ``pod`` now: the per-node verdict the fleet and the
    scheduler extender share (one copy through the node what-if)."""
    answer = answer_snapshot(snapshot, pod, 1)
    if answer.error:
        return CopyVerdict(False, UNUSABLE, answer.error)
    return answer.copies[0]


def answer_file(path: str, pod: Pod, limit: int) -> NodeAnswer:
    """Load one snapshot file and answer; an unusable file is an answer with ``error``."""
    from cpumanager.adapters.node_collect import load_snapshot

    try:
        snapshot = load_snapshot(Path(path))
    except CpuManagerError as err:
        return NodeAnswer(Path(path).name, (), limit, error=str(err))
    answer = answer_snapshot(snapshot, pod, limit)
    if not answer.node:
        answer = dataclasses.replace(answer, node=Path(path).name)
    return answer
