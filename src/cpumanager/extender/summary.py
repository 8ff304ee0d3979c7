"""Per-node summaries that rule a node out before its exact admission, soundly.

Computed once per pushed snapshot from the restored node (before any assumed pod). Each
rule only fires when the exact check (``judge.judge``: the assumed pods, then the pod,
through the resource managers and the fit predicate) must reject the pod too, because
assumed pods only ever take more: CPUs, memory and devices they hold come from the free
pools the summary counts, and the fit predicate counts them on top of the active pods.

1. **Fit**: the kubelet's resource-fit predicate (``nodeanswers.fit``) on the active pods'
   summed requests and number. It runs last in the exact check, on at least these pods.
   The node's free amounts are kept in the summary, so the predicate's first shortfall
   costs a few comparisons (:func:`first_fit_failure`, tested against ``fit_failures``).
2. **Free exclusive CPUs** (static policy): every container with exclusive CPUs takes them
   from the default set minus the reserved CPUs (init containers lend theirs to later
   containers of the same pod, and those came from the same pool), and the app containers
   hold theirs at once, so the largest container and the app containers' sum must each fit
   in that pool. A pod with pod-level resources gets no exclusive CPUs.
3. **One NUMA node** (static policy, ``single-numa-node``): the merged hint must be a
   preferred single NUMA node, and the CPU manager prefers a single node only when that
   node's free CPUs (plus CPUs lent by the pod's own init containers, taken from the same
   node) hold the request: the largest container in container scope, the pod's peak in pod
   scope, must fit in the free CPUs of one NUMA node.

4. **Whole cores** (static policy, ``full-pcpus-only``): the CPU manager's Allocate refuses
   every container whose exclusive CPU count is not a multiple of the CPUs per core
   (``SMTAlignmentError``, with the kubelet's message), whatever the free CPUs.

Rules 2 to 4 read the pod's own assignments only when it has some: a pod that already
runs on the node (or holds CPUs there) is never ruled out by them. Property tests check
every rule against the exact check over random nodes and pods.

**Admissions answered at push** (:class:`AdmissionTable`, built by ``prepared.prepare``): for
the common pod shape, one app container asking for CPU and memory only (no devices, no
hugepages, no init containers, no pod-level resources), on a node without the static memory
manager, the admit handler's verdict depends on the pod through its exclusive CPU count
alone: the CPU manager is the only hint provider with an answer, and what it reads of the
pod is that count (the fit predicate, which reads the amounts, is rule 1's). So the table
keeps, per count ``n`` from 1 to the most no rule refuses (bounded: ``prepared.py``'s
``TABLE_COUNTS``, on machines of at most ``TABLE_NUMA_LIMIT`` NUMA nodes), the exact
check's verdict on a probe pod of that count (a score when admitted), and the score a
shared-pool pod gets.
A pod of that shape that rule 1 lets through, with no assumed pods and no state of its own
on the node, is answered from the table when the probe was admitted (the probe asks for
less memory, so nothing it was refused for is lost); otherwise the exact check runs. A
property test checks the table's answers against the exact check over random busy nodes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction

from cpumanager.core.cpuset import CPUSet
from cpumanager.core.ids import ContainerName, PodUID
from cpumanager.core.policy.static import StaticPolicy
from cpumanager.core.topology import CPUTopology
from cpumanager.core.workload import (
    Container,
    Pod,
    guaranteed_cpus,
    pod_guaranteed_cpus,
    pod_level_resources_set,
)
from cpumanager.manager.node import build_cpu_policy
from cpumanager.nodeanswers.fit import Allocatable, FitFailure, compared_requests, pod_requests
from cpumanager.nodeanswers.restore import RestoredState

__all__ = [
    "AdmissionTable",
    "CPUNeeds",
    "NodeSummary",
    "PodFacts",
    "RuleOut",
    "first_fit_failure",
    "pod_facts",
    "probe_pod",
    "rule_out",
    "score",
    "simple_cpu_count",
    "summarise",
]

# Pod requests the admission table's shape may carry: the CPU manager reads the CPU count,
# the fit predicate (rule 1) the amounts; none has a hint provider of its own.
_PLAIN_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})


@dataclass(frozen=True, slots=True)
class NodeSummary:
    """What the rules read of a node: fit inputs and free exclusive CPUs (static only)."""

    used: Mapping[str, int]
    count: int
    allocatable: Allocatable
    exclusive_free: int | None  # default set minus reserved; None: not the static policy
    numa_free: tuple[int, ...] | None  # per NUMA node with CPUs; None: not single-numa-node
    pod_scope: bool
    pod_level_resources: bool  # the PodLevelResources gate
    smt_group: int = 0  # CPUs per core under full-pcpus-only; 0: the rule does not apply
    pods_left: int = 0  # allocatable pods minus the active pods
    free: Mapping[str, int] = field(default_factory=dict)  # allocatable minus used


@dataclass(frozen=True, slots=True)
class AdmissionTable:
    """The exact check's verdicts on probe pods, computed at push (module docstring).

    ``scores[n - 1]``: the prioritize score of an admitted ``n``-CPU probe, or -1 (refused,
    or the check failed: such pods go to the exact check). ``shared``: the score of a pod
    with no exclusive CPUs (-1: not answered).
    """

    scores: tuple[int, ...] = ()
    shared: int = -1

    def answer(self, count: int) -> int:
        """The score for a pod of ``count`` exclusive CPUs, or -1 (not answered)."""
        if count == 0:
            return self.shared
        if 0 < count <= len(self.scores):
            return self.scores[count - 1]
        return -1


NO_TABLE = AdmissionTable()


@dataclass(frozen=True, slots=True)
class CPUNeeds:
    """A pod's exclusive CPUs under one PodLevelResources gate value."""

    largest: int  # the largest container's
    together: int  # the app containers' sum, held at once
    peak: int  # pod scope's request (pod_guaranteed_cpus)
    counts: tuple[int, ...] = ()  # every container's exclusive CPUs, in admission order


@dataclass(frozen=True, slots=True)
class PodFacts:
    """What the rules read of the pod, computed once per filter call."""

    wanted: Mapping[str, int]
    needs: Mapping[bool, CPUNeeds | None]  # by gate value; None: no exclusive CPUs
    checked: tuple[tuple[str, int], ...] = ()  # the requests the fit predicate compares
    simple: int = -1  # the exclusive CPU count of the admission table's shape; -1: other


@dataclass(frozen=True, slots=True)
class RuleOut:
    """Why a rule refuses the pod: a reason, a one-line message and the rule's name."""

    reason: str
    message: str
    rule: str


def _needs(pod: Pod, gate: bool) -> CPUNeeds | None:
    if gate and pod_level_resources_set(pod):
        return None
    counts = [guaranteed_cpus(pod, c, pod_level_resources=gate) for c in pod.all_containers()]
    apps = sum(guaranteed_cpus(pod, c, pod_level_resources=gate) for c in pod.containers)
    largest = max(counts, default=0)
    if largest == 0:
        return None
    peak = pod_guaranteed_cpus(pod, pod_level_resources=gate)
    return CPUNeeds(largest, apps, peak, tuple(c for c in counts if c))


def simple_cpu_count(pod: Pod, wanted: Mapping[str, int]) -> int:
    """The pod's exclusive CPUs when it has the admission table's shape, else -1."""
    if pod.init_containers or len(pod.containers) != 1 or pod.resources_given:
        return -1
    container = pod.containers[0]
    named = {*wanted, *container.requests, *container.limits}
    if not named <= _PLAIN_RESOURCES:
        return -1
    return guaranteed_cpus(pod, container, pod_level_resources=False)


def pod_facts(pod: Pod) -> PodFacts:
    """The pod's requests and exclusive CPU needs (module docstring)."""
    wanted = pod_requests(pod)
    needs = {True: _needs(pod, True), False: _needs(pod, False)}
    return PodFacts(wanted, needs, compared_requests(wanted), simple_cpu_count(pod, wanted))


def probe_pod(count: int) -> Pod:
    """The admission table's probe: one container, ``count`` CPUs (Guaranteed), 1 MiB."""
    amounts = {"cpu": Fraction(count), "memory": Fraction(1 << 20)}
    container = Container(ContainerName("probe"), requests=amounts, limits=amounts)
    return Pod(PodUID("cpumanager-admission-probe"), "probe", containers=(container,))


def _numa_bits(topology: CPUTopology) -> tuple[int, ...]:
    return tuple(topology.group_bits("numa").values())


def score(topology: CPUTopology, free: CPUSet, exclusive: CPUSet) -> int:
    """The prioritize score (``judge.py``'s docstring), 0..10."""
    numa = topology.derived("numa bits", _numa_bits)  # each NUMA node's CPUs, as bits
    held, left = exclusive.bits, free.bits
    spanned = 0
    if held:
        for cpus in numa:
            if cpus & held:
                spanned += 1
    alignment = 5 / spanned if spanned else 5.0
    if left:
        most = 0
        for cpus in numa:
            most = max(most, (cpus & left).bit_count())
        together = 5 * most / left.bit_count()
    else:
        together = 5.0
    return round(alignment + together)


def first_fit_failure(summary: NodeSummary, facts: PodFacts) -> FitFailure | None:
    """The first of ``fit_failures`` (the kubelet reports the first), from the summary's free
    amounts: most nodes fit, and this runs for each of them on every call."""
    table = summary.allocatable.allocatable
    if summary.pods_left < 1:
        return FitFailure("pods", 1, summary.count, table.get("pods", 0))
    free = summary.free
    for name, request in facts.checked:
        if request > free.get(name, 0):
            return FitFailure(name, request, summary.used.get(name, 0), table.get(name, 0))
    return None


def summarise(restored: RestoredState, allocatable: Allocatable) -> NodeSummary:
    """The node's summary, from its state right after the restore."""
    kubelet = restored.kubelet
    gate = kubelet.feature_gate("PodLevelResources", default=True)
    exclusive_free: int | None = None
    numa_free: tuple[int, ...] | None = None
    smt_group = 0
    if kubelet.cpu_manager_policy == "static":
        topology = restored.topology
        policy = build_cpu_policy(topology, kubelet)
        if isinstance(policy, StaticPolicy) and policy.options.full_pcpus_only:
            smt_group = policy.cpu_group_size
        free = restored.state.cpu.default_cpuset - policy.reserved_cpus
        exclusive_free = len(free)
        if kubelet.topology_manager_policy == "single-numa-node":
            numa_free = tuple(
                len(free & topology.cpus_in_numa_nodes((n,))) for n in topology.cpu_numa_ids()
            )
    used, count, table = restored.usage, len(restored.active), allocatable.allocatable
    headroom = {name: table.get(name, 0) - used.get(name, 0) for name in {*table, *used}}
    return NodeSummary(
        used,
        count,
        allocatable,
        exclusive_free,
        numa_free,
        kubelet.topology_manager_scope == "pod",
        gate,
        smt_group,
        table.get("pods", 0) - count,
        headroom,
    )


def rule_out(summary: NodeSummary, facts: PodFacts, *, runs_here: bool) -> RuleOut | None:
    """The first rule that refuses the pod on this node, or None (module docstring)."""
    first = first_fit_failure(summary, facts)
    if first is not None:
        return RuleOut(first.reason, first.message, f"{first.resource} headroom")
    needs = facts.needs[summary.pod_level_resources]
    if runs_here or needs is None or summary.exclusive_free is None:
        return None
    group = summary.smt_group
    for count in needs.counts if group else ():
        if count % group:
            message = (
                f"SMT Alignment Error: requested {count} cpus not multiple cpus per core = {group}"
            )
            return RuleOut("SMTAlignmentError", message, "whole cores (full-pcpus-only)")
    free = summary.exclusive_free
    need = max(needs.largest, needs.together)
    if need > free:
        message = (
            f"the pod needs {need} exclusive CPUs and the node has {free} free "
            "(its default CPU set minus the reserved CPUs)"
        )
        return RuleOut("InsufficientExclusiveCPUs", message, "free exclusive CPUs")
    if summary.numa_free is not None:
        one = needs.peak if summary.pod_scope else needs.largest
        most = max(summary.numa_free, default=0)
        if one > most:
            message = (
                f"single-numa-node: {one} exclusive CPUs must come from one NUMA node and "
                f"the most free on one is {most}"
            )
            return RuleOut("NoNUMANodeFits", message, "free CPUs per NUMA node")
    return None
