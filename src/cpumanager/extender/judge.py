"""Would this node's kubelet admit the pod: one verdict per node, from its pushed snapshot.

:func:`admits` is ``node whatif``'s code (``nodeanswers.whatif.what_if``): the node's
managers restored from the snapshot as a restarting kubelet restores them, the pods the
extender has already approved for the node (assumed) admitted first, then the pod, through
the resource managers' admit handler and the resource-fit predicate. The verdict carries
the kubelet's reason and message and the what-if's explanation.

:func:`score` (prioritize) is documented in docs/extender.md: 5 points for NUMA alignment
(5 divided by the number of NUMA nodes the pod's exclusive CPUs span; 5 for a shared-pool
pod), plus 5 times the share of the free CPUs left in the NUMA node with the most of them
(free CPUs kept together leave room for the next large pod), rounded.

:func:`cpu_headroom` is the precomputed summary that may rule a node out before the exact
check: the fit predicate refuses any pod whose CPU request exceeds the node's allocatable
CPU minus the active pods' requests, with the same allocatable and requests the exact check
uses, so it never rules out a node the exact check accepts (a property test checks it).
It is computed once per pushed snapshot.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cpumanager.core.cpuset import CPUSet
from cpumanager.core.topology import CPUTopology
from cpumanager.core.workload import Pod
from cpumanager.errors import CpuManagerError
from cpumanager.nodeanswers.fit import node_allocatable, pod_requests
from cpumanager.nodeanswers.whatif import what_if
from cpumanager.nodeview.snapshot import NodeSnapshot

__all__ = ["Verdict", "admits", "cpu_headroom", "pod_cpu_millis", "score"]

NOT_RESTORABLE = "NodeNotRestorable"


@dataclass(frozen=True, slots=True)
class Verdict:
    """One node's answer for one pod: admitted, or the kubelet's reason and message.

    ``unresolvable``: no preemption can help (the node's kubelet would not even start on its
    state). ``score`` is meaningful only when admitted.
    """

    admitted: bool
    reason: str = ""
    message: str = ""
    why: tuple[str, ...] = ()
    unresolvable: bool = False
    score: int = 0

    def explanation(self) -> str:
        """One line for FailedNodes: the kubelet's reason and message, then why."""
        head = f"{self.reason}: {self.message}" if self.message else self.reason
        tail = " ".join(self.why)
        return f"{head} ({tail})" if tail else head


def pod_cpu_millis(pod: Pod) -> int:
    """The pod's effective CPU request in millicores, as the fit predicate counts it."""
    return pod_requests(pod).get("cpu", 0)


def cpu_headroom(snapshot: NodeSnapshot) -> int | None:
    """Allocatable CPU millicores left after the active pods' requests (None when the
    snapshot cannot say: no machine or an invalid configuration). Assumed pods are not
    counted: one the exact check would refuse takes nothing (found by the property test)."""
    try:
        topology = snapshot.topology()
        kubelet = snapshot.kubelet_config()
    except CpuManagerError:
        return None
    allocatable = node_allocatable(topology, kubelet, hugepages={}, devices=None)
    used = sum(pod_cpu_millis(p) for p in snapshot.active_pods())
    return allocatable.allocatable.get("cpu", 0) - used


def score(topology: CPUTopology, free: CPUSet, exclusive: CPUSet) -> int:
    """The prioritize score (module docstring), 0..10."""
    spanned = len(topology.numa_of(exclusive)) if exclusive else 1
    alignment = 5 / max(1, spanned)
    if free:
        most = max(len(free & topology.cpus_in_numa_nodes([n])) for n in topology.numa_ids())
        together = 5 * most / len(free)
    else:
        together = 5.0
    return round(alignment + together)


def admits(snapshot: NodeSnapshot, pod: Pod, *, assumed: Sequence[Pod] = ()) -> Verdict:
    """The node's kubelet's verdict on ``pod`` after the ``assumed`` pods (module docstring)."""
    try:
        answer = what_if(snapshot, [*assumed, pod])
        topology = snapshot.topology()
        reserved = snapshot.kubelet_config().reserved_cpus or CPUSet()
    except CpuManagerError as exc:
        return Verdict(
            False,
            NOT_RESTORABLE,
            str(exc),
            ("the kubelet would not start its managers on this node's state",),
            unresolvable=True,
        )
    verdict = answer.verdicts[-1]
    if not verdict.admitted:
        why = [*verdict.why]
        if assumed:
            why.append(f"(after {len(assumed)} assumed pod(s))")
        return Verdict(False, verdict.reason, verdict.message, tuple(why))
    exclusive = CPUSet()
    for entry in verdict.event.get("containers", {}).values():
        if entry.get("exclusive"):
            exclusive = exclusive | CPUSet.parse(entry["cpus"])
    free = CPUSet.parse(answer.report["final"]["default_cpuset"]) - reserved
    return Verdict(True, score=score(topology, free, exclusive))
