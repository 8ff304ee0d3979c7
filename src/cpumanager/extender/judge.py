"""Would this node's kubelet admit the pod: one verdict per node, from its pushed snapshot.

:func:`admits` is ``node whatif``'s code (``nodeanswers.whatif.what_if``): the node's
managers restored from the snapshot as a restarting kubelet restores them, the pods the
extender has already approved for the node (assumed) admitted first, then the pod, through
the resource managers' admit handler and the resource-fit predicate. The verdict carries
the kubelet's reason and message and the what-if's explanation.

:func:`judge` gives the same verdict from a node restored and started once per push
(``prepared.py``): a trial copy of it (``Node.fork``) admits the same pods by the same rules
with no explanation built (``whatif.admitted_quietly``); only a refusal is admitted again on
a second copy with the what-if's own function (``whatif.admit_pods``), for its words. A
property test checks that both agree.

:func:`score` (prioritize) is documented in docs/extender.md: 5 points for NUMA alignment
(5 divided by the number of NUMA nodes the pod's exclusive CPUs span; 5 for a shared-pool
pod), plus 5 times the share of the free CPUs left in the NUMA node with the most of them
(free CPUs kept together leave room for the next large pod), rounded.

:func:`known_verdict` answers a pod of the common shape from the node's admission table
(``summary.py``, computed at push): the verdict :func:`judge` gives, without its admission.

:func:`ruled_out` words a refusal by the node's summary (``summary.py``): the rules that
may refuse a pod before its exact admission, never refusing one the exact check admits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from cpumanager.core.cpuset import CPUSet
from cpumanager.core.workload import Pod
from cpumanager.errors import CpuManagerError
from cpumanager.extender.prepared import PreparedNode
from cpumanager.extender.summary import PodFacts, RuleOut, score
from cpumanager.nodeanswers.fit import pod_requests
from cpumanager.nodeanswers.whatif import (
    PodVerdict,
    admit_pods,
    admitted_quietly,
    exclusive_cpus,
    what_if,
)
from cpumanager.nodeview.snapshot import NodeSnapshot

__all__ = [
    "Verdict",
    "admits",
    "judge",
    "known_verdict",
    "not_restorable",
    "pod_cpu_millis",
    "ruled_out",
    "score",
]

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
    names_pod: bool = False  # why[0] is the admission's sentence naming the pod

    def about(self, sentence: str) -> Verdict:
        """This verdict for another pod of the same spec: the same, with the sentence that
        names the pod (``whatif.pod_sentence``) being that pod's."""
        if not self.names_pod or not self.why or self.why[0] == sentence:
            return self
        return replace(self, why=(sentence, *self.why[1:]))

    def explanation(self) -> str:
        """One line for FailedNodes: the kubelet's reason and message, then why."""
        head = f"{self.reason}: {self.message}" if self.message else self.reason
        tail = " ".join(self.why)
        return f"{head} ({tail})" if tail else head


def pod_cpu_millis(pod: Pod) -> int:
    """The pod's effective CPU request in millicores, as the fit predicate counts it."""
    return pod_requests(pod).get("cpu", 0)


def ruled_out(refused: RuleOut) -> Verdict:
    """The verdict of a node the summary rules out before its exact admission."""
    return Verdict(
        False,
        refused.reason,
        refused.message,
        (f"ruled out before admission by the node's {refused.rule}",),
    )


def not_restorable(exc: CpuManagerError) -> Verdict:
    """The verdict on a node whose kubelet would not start its managers on its state."""
    return Verdict(
        False,
        NOT_RESTORABLE,
        str(exc),
        ("the kubelet would not start its managers on this node's state",),
        unresolvable=True,
    )


def _rejection(verdict: PodVerdict, assumed: int) -> Verdict:
    why = [*verdict.why]
    if assumed:
        why.append(f"(after {assumed} assumed pod(s))")
    return Verdict(False, verdict.reason, verdict.message, tuple(why), names_pod=True)


def admits(snapshot: NodeSnapshot, pod: Pod, *, assumed: Sequence[Pod] = ()) -> Verdict:
    """The node's kubelet's verdict on ``pod`` after the ``assumed`` pods (module docstring)."""
    try:
        answer = what_if(snapshot, [*assumed, pod])
        topology = snapshot.topology()
        reserved = snapshot.kubelet_config().reserved_cpus or CPUSet()
    except CpuManagerError as exc:
        return not_restorable(exc)
    verdict = answer.verdicts[-1]
    if not verdict.admitted:
        return _rejection(verdict, len(assumed))
    exclusive = CPUSet()
    for entry in verdict.event.get("containers", {}).values():
        if entry.get("exclusive"):
            exclusive = exclusive | CPUSet.parse(entry["cpus"])
    free = CPUSet.parse(answer.report["final"]["defaultCpuSet"]) - reserved
    return Verdict(True, score=score(topology, free, exclusive))


def judge(node: PreparedNode, pod: Pod, *, assumed: Sequence[Pod] = ()) -> Verdict:
    """:func:`admits`' verdict, from the node restored once (module docstring)."""
    pods = [*assumed, pod]
    try:
        restored = node.base.fork(explained=False)
        if not admitted_quietly(restored, pods, node.allocatable):
            # the same admissions again, explained: a refusal carries the what-if's words
            restored, verdicts = admit_pods(node.base, pods, node.allocatable)
            verdict = verdicts[-1]
            if not verdict.admitted:
                return _rejection(verdict, len(assumed))
    except CpuManagerError as exc:
        return not_restorable(exc)
    state = restored.node.cpu_state
    free = state.default_cpuset - node.reserved
    points = score(restored.topology, free, exclusive_cpus(restored, pod, state=state))
    return _ADMITTED[points]


# Verdicts are immutable: one admitted verdict per score (0..MAX_SCORE) serves every node.
_ADMITTED = tuple(Verdict(True, score=points) for points in range(11))


def known_verdict(node: PreparedNode, facts: PodFacts) -> Verdict | None:
    """:func:`judge`'s verdict from the node's admission table, or None (run the check).

    For a pod that the summary's rules let through, that neither runs nor holds state on
    the node and with no assumed pods there (the caller's conditions)."""
    points = node.table.answer(facts.simple) if facts.simple >= 0 else -1
    return _ADMITTED[points] if points >= 0 else None
