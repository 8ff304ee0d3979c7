"""Filter and prioritize's decision: every node's verdict on one pod, as cheaply as it holds.

:class:`Decider` answers what it can from what the store already knows (unchecked nodes,
push-time rule-outs and tables, cached verdicts, nodes sharing a state) and spreads the
distinct exact checks left over processes (``fanout.py``). It changes no state but the
verdict cache; the caller holds the store's lock. docs/extender.md, "How filtering is fast".
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from cpumanager.core.workload import Pod
from cpumanager.errors import CpuManagerError
from cpumanager.extender.fanout import Fanout, Job
from cpumanager.extender.judge import Verdict, judge, known_verdict, not_restorable, ruled_out
from cpumanager.extender.meters import Meters
from cpumanager.extender.prepared import PreparedNode
from cpumanager.extender.protocol import ExtenderArgs
from cpumanager.extender.store import NodeEntry, NodeStore, pod_shape
from cpumanager.extender.summary import RuleOut, pod_facts, rule_out
from cpumanager.extender.visibility import pinned
from cpumanager.nodeanswers.whatif import pod_sentence

__all__ = ["Decider", "check", "gc_paused", "v_checked"]

_pauses = {"held": 0, "owned": False}  # calls holding the collector off; whether we did
_pause_lock = threading.Lock()


@contextmanager
def gc_paused() -> Iterator[None]:
    """No automatic garbage collection during one filter, prioritize or push restore.

    A call over thousands of nodes makes tens of thousands of short-lived objects. A young
    collection in the middle of it moves them to the oldest generation, and enough of them
    start a full collection over everything the store holds (about a second with 5,000
    nodes on a loaded machine: the p99). Paused, they die by reference counting when the
    call ends; the collector runs again from the next allocation after it. A large push
    being restored would start such collections too, stopping every thread. Calls run in
    threads at once: the collector is off while any of them runs, and back on (if it was on
    before the first) when the last ends.
    """
    with _pause_lock:
        if _pauses["held"] == 0:
            _pauses["owned"] = gc.isenabled()
            gc.disable()
        _pauses["held"] += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pauses["held"] -= 1
            if _pauses["held"] == 0 and _pauses["owned"]:
                gc.enable()


def check(node: PreparedNode, pod: Pod, assumed: tuple[Pod, ...]) -> Verdict:
    """One exact check, as a fan-out job runs it (here or in a worker). A defect of ours
    that one node's state trips fails that node only (``InternalError``), so the call
    still answers for every other node."""
    try:
        return judge(node, pod, assumed=assumed)
    except RecursionError:
        detail = "nested too deeply"
    except Exception as exc:  # a defect: contained to this node, and reported
        detail = f"{type(exc).__name__}: {str(exc)[:200]}"
    return Verdict(
        False,
        "InternalError",
        f"cpumanager could not check this node ({detail})",
        ("please report it with the node's snapshot",),
        unresolvable=True,
    )


def v_checked(verdict: Verdict) -> bool:
    """A verdict from an exact admission (not a stale or missing node let through)."""
    return verdict.reason == ""


class Decider:
    """Every node's verdict for one ExtenderArgs over ``nodes``; a node silent for
    ``stale_after`` seconds is stale, and ``stale_policy`` (``fail`` or ``pass``) says
    what a stale or uncheckable node answers."""

    def __init__(
        self,
        nodes: NodeStore,
        spread: Fanout[Verdict],
        metrics: Meters,
        *,
        stale_after: float,
        stale_policy: str,
    ) -> None:
        self.nodes = nodes
        self.spread = spread
        self.metrics = metrics
        self.stale_after = stale_after
        self.stale_policy = stale_policy

    def unchecked(self, name: str, entry: NodeEntry | None, oldest: float, pod: Pod) -> Verdict:
        """The verdict on a node that cannot be checked: no fresh snapshot, no pod list, or
        a state its kubelet would not start on. A pod no manager pins passes
        (``visibility.pinned``)."""
        restorable = entry is None or not isinstance(entry.prepared, CpuManagerError)
        if restorable and not pinned(pod):
            return Verdict(True, "", "", ("no resource manager pins this pod",))
        if entry is None or entry.received < oldest:
            return Verdict(
                self.stale_policy == "pass",
                "SnapshotMissing" if entry is None else "SnapshotStale",
                f"cpumanager has no {'fresh ' if entry else ''}snapshot of node {name}",
                ("its agent has not pushed within the stale limit",),
            )
        if isinstance(entry.prepared, CpuManagerError):
            return not_restorable(entry.prepared)
        # Without the pod list the restore would release every pod's CPUs as stale.
        return Verdict(
            self.stale_policy == "pass",
            "SnapshotWithoutPods",
            f"the snapshot of node {name} has no pod list, so its CPUs cannot be checked",
            ("give the agent --pods or --pods-from-apiserver",),
        )

    def __call__(self, args: ExtenderArgs) -> dict[str, Verdict]:
        """Every node's verdict: nodes with one admission key and the same assumed pods
        get one verdict per call.

        One pass over the nodes answers what it can (unchecked nodes, rule-outs, cached
        verdicts, nodes sharing a state) and collects the distinct exact checks left, which
        then run together, spread over the CPUs (``fanout.py``)."""
        nodes, metrics = self.nodes, self.metrics
        pod = args.pod
        shape = pod_shape(args.pod_spec)
        facts = pod_facts(pod)
        sentence = pod_sentence(pod)
        oldest = nodes.clock() - self.stale_after
        # Within one call the pod's shape is fixed: a node's state (its admission key, or
        # the node itself when the pod or an assumed pod holds state there) and the assumed
        # pods decide its verdict. An unchecked node is keyed by its name.
        local: list[tuple[str, object]] = []
        shared: dict[object, Verdict] = {}
        refusals: dict[RuleOut, Verdict] = {}  # one verdict, so one FailedNodes line, per refusal
        pending: dict[object, tuple[tuple[object, ...], Job]] = {}
        for name, entry in nodes.entries(args.node_names):
            prepared = None if entry is None else entry.prepared
            if entry is None or entry.received < oldest or not isinstance(prepared, PreparedNode):
                local.append((name, (name,)))
                shared[(name,)] = self.unchecked(name, entry, oldest, pod)
                continue
            runs_here = pod.uid in prepared.held
            held: tuple[tuple[Pod, str], ...] = ()
            own = runs_here
            if entry.assumed:
                held = tuple((p, s) for p, s in nodes.assumed_pods(entry) if p.uid != pod.uid)
                own = own or any(p.uid in prepared.held for p, _ in held)
            state: object = prepared.key
            if own or held:
                where = (name, entry.generation) if own else (prepared.key,)
                state = (*where, tuple((p.uid, s) for p, s in held))
            local.append((name, state))
            if state in shared or state in pending:
                continue
            try:
                refused = rule_out(prepared.summary, facts, runs_here=runs_here)
            except Exception:  # a defect here: the exact check decides, and contains its own
                refused = None
            if refused is not None:
                verdict = refusals.get(refused)
                if verdict is None:
                    verdict = refusals[refused] = ruled_out(refused)
                shared[state] = verdict
                continue
            if state is prepared.key:  # no pod of its own, none assumed: the push-time table
                try:
                    known = known_verdict(prepared, facts)
                except Exception:  # a defect here: the exact check decides, as above
                    known = None
                if known is not None:
                    shared[state] = known
                    continue
            key = (*(state if isinstance(state, tuple) else (state, ())), shape)
            found = nodes.lookup(key)
            if found is not None:
                shared[state] = found.about(sentence)
                continue
            assumed = tuple(p for p, _ in held)
            cost = float(len(prepared.restored.topology.all_cpus) * (1 + len(assumed)))
            job = Job((name, entry.generation), prepared, (pod, assumed), cost)
            pending[state] = (key, job)
        if pending:
            checks = list(pending.values())
            results, counts = self.spread.run([job for _, job in checks], states=nodes.prepared)
            metrics.checks.labels("child").inc(counts.in_children)
            metrics.checks.labels("process").inc(counts.in_process)
            metrics.child_failures.inc(counts.child_failures)
            for state, (key, _), verdict in zip(pending, checks, results, strict=True):
                nodes.remember(key, verdict)
                shared[state] = verdict.about(sentence)
        return {name: shared[state] for name, state in local}
