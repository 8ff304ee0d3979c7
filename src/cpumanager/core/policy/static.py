"""The kubelet's static CPU manager policy, as pure functions over a StateSnapshot.

Pools (all CPU sets):

* **reserved** — an explicit list, or ``num_reserved_cpus`` CPUs taken by take-by-topology
  with the policy's own options (lowest cores first); never exclusive;
* **reserved-physical** — every CPU sharing a core with a reserved CPU (full-pcpus-only
  accounting);
* **default** (in the snapshot) — CPUs not held exclusively; shared containers run there.
  Reserved CPUs stay in it unless strict-cpu-reservation;
* **allocatable** = all - reserved; **available** = default - reserved;
  **available-physical** = default - reserved-physical.

Allocation of ``n`` exclusive CPUs (a Guaranteed pod with an integral request): the
full-pcpus-only checks first, then an existing set is kept as is; otherwise the hint's NUMA
nodes (with align-by-socket: every socket they touch) are served first from
``available | reusable``, and the rest from everything left. Init containers lend their CPUs
to later containers of the same pod (``ReusableCPUs``, an explicit value passed in and
returned); sidecars and app containers consume them. Removal returns to the default set
only the CPUs no other container of the pod still holds.

Hints (``container_hints`` / ``pod_hints``) follow the kubelet's GetTopologyHints and
GetPodTopologyHints: no opinion for shared containers, hints regenerated from an existing
set, "no placement" when an existing set has the wrong size.

Pod-level resources (kubelet 1.34, PodLevelResources gate on: ``pod_level_resources``): a
pod with ``spec.resources`` set gets no exclusive CPUs and gives no CPU hints, in container
and pod scope, even when it is Guaranteed with integral container requests. The kubelet
checks this right after the "0 CPUs requested" test, before full-pcpus-only and before any
existing assignment, and so do we.
"""

from __future__ import annotations

from cpumanager.core.allocation.options import (
    StaticPolicyOptions,
    validate_align_by_socket,
)
from cpumanager.core.allocation.take import take_by_topology
from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.hints.cpu_hints import cpu_hint_source, generate_cpu_hints, mask_table
from cpumanager.core.hints.hint import NO_PLACEMENT, NO_PREFERENCE, ProviderHints
from cpumanager.core.ids import ContainerName, PodUID
from cpumanager.core.merge.exact import AnyResourceHints
from cpumanager.core.policy.base import Allocation, Removal, ReusableCPUs
from cpumanager.core.restore import validate_restored
from cpumanager.core.state import StateSnapshot
from cpumanager.core.topology import CPUTopology
from cpumanager.core.workload import (
    Container,
    ContainerKind,
    Pod,
    guaranteed_cpus,
    pod_guaranteed_cpus,
    pod_level_resources_set,
)
from cpumanager.errors import ConfigError, CpuManagerError, SMTAlignmentError

__all__ = ["StaticPolicy", "updated_reuse"]


def updated_reuse(
    reuse: ReusableCPUs, pod: Pod, container: Container, cpus: CPUSet
) -> ReusableCPUs:
    """The kubelet's updateCPUsToReuse: init containers lend, everything else consumes."""
    lent = reuse.for_pod(pod.uid)
    if container.kind is ContainerKind.INIT:
        lent = lent | cpus
    elif lent:  # nothing lent: nothing to consume
        lent = lent - cpus
    return ReusableCPUs(pod.uid, lent)


class StaticPolicy:
    """Exclusive CPUs for Guaranteed containers with integral CPU requests."""

    __slots__ = (
        "_reserved",
        "_reserved_physical",
        "cpu_group_size",
        "options",
        "pod_level_resources",
        "topology",
    )

    def __init__(
        self,
        topology: CPUTopology,
        *,
        options: StaticPolicyOptions | None = None,
        num_reserved_cpus: int = 0,
        reserved_cpus: CPUSet | None = None,
        topology_manager_policy: str = "none",
        pod_level_resources: bool = True,
    ) -> None:
        self.topology = topology
        self.pod_level_resources = pod_level_resources
        self.options = options or StaticPolicyOptions()
        validate_align_by_socket(self.options, topology, topology_manager_policy)
        self.cpu_group_size = topology.cpus_per_core
        if reserved_cpus:
            reserved = reserved_cpus
        else:
            try:
                reserved = take_by_topology(
                    topology, topology.all_cpus, num_reserved_cpus, self.options
                )
            except CpuManagerError:
                reserved = CPUSet()  # the kubelet ignores the error; the size check reports it
        if len(reserved) != num_reserved_cpus:
            msg = (
                f"[cpumanager] unable to reserve the required amount of CPUs (size of "
                f"{reserved} did not equal {num_reserved_cpus})"
            )
            raise ConfigError(msg)
        physical = CPUSet()
        for cpu in reserved:
            if cpu not in topology.cpus:
                msg = (
                    "[cpumanager] unable to build the reserved physical CPUs from the reserved "
                    f"set: unknown CPU ID: {cpu}"
                )
                raise ConfigError(msg)
            physical = physical | topology.siblings(cpu)
        self._reserved = reserved
        self._reserved_physical = physical

    # --- pools ---------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return "static"

    @property
    def reserved_cpus(self) -> CPUSet:
        return self._reserved

    @property
    def strict_reservation(self) -> bool:
        return self.options.strict_cpu_reservation

    @property
    def reserved_physical_cpus(self) -> CPUSet:
        return self._reserved_physical

    def allocatable_cpus(self) -> CPUSet:
        return self.topology.all_cpus - self._reserved

    def available_cpus(self, snapshot: StateSnapshot) -> CPUSet:
        return snapshot.default_cpuset - self._reserved

    def available_physical_cpus(self, snapshot: StateSnapshot) -> CPUSet:
        return snapshot.default_cpuset - self._reserved_physical

    def start(self, snapshot: StateSnapshot) -> StateSnapshot:
        """Validate a restored snapshot (kubelet's validateState) or fill a fresh one."""
        return validate_restored(
            snapshot,
            all_cpus=self.topology.all_cpus,
            reserved=self._reserved,
            strict_reservation=self.options.strict_cpu_reservation,
        )

    # --- allocation ----------------------------------------------------------------------

    def check_smt_alignment(self, snapshot: StateSnapshot, count: int) -> None:
        """full-pcpus-only: whole cores only, and no more than the free physical CPUs."""
        if not self.options.full_pcpus_only:
            return
        per_core = self.cpu_group_size
        if per_core and count % per_core != 0:
            msg = (
                f"SMT Alignment Error: requested {count} cpus not multiple cpus per core = "
                f"{per_core}"
            )
            raise SMTAlignmentError(
                msg,
                requested=count,
                cpus_per_core=per_core,
            )
        physical = len(self.available_physical_cpus(snapshot))
        if count > physical:
            msg = (
                "SMT Alignment Error: not enough free physical CPUs: available physical CPUs = "
                f"{physical}, requested CPUs = {count}, CPUs per core = {per_core}"
            )
            raise SMTAlignmentError(
                msg,
                requested=count,
                cpus_per_core=per_core,
                available_physical=physical,
            )

    def aligned_cpus(self, hint: NUMAMask, pool: CPUSet) -> CPUSet:
        """CPUs of ``pool`` on the hint's NUMA nodes (align-by-socket: on their sockets)."""
        topology = self.topology
        if self.options.align_by_socket:
            sockets = topology.sockets_in_numa_nodes(hint.ids())
            return pool & topology.cpus_in_sockets(sockets)
        table = mask_table(topology)
        cpus = None if table is None else table.cpus_of.get(hint.bits)
        if cpus is not None:  # a subset of the nodes with CPUs: tabled
            return CPUSet.from_bits(pool.bits & cpus)
        return pool & topology.cpus_in_numa_nodes(hint.ids())

    def guaranteed_cpus(self, pod: Pod, container: Container) -> int:
        """The kubelet's guaranteedCPUs under this policy's PodLevelResources gate."""
        return guaranteed_cpus(pod, container, pod_level_resources=self.pod_level_resources)

    def skips_pod_level(self, pod: Pod) -> bool:
        """The gate is on and the pod sets pod-level resources: no pinning, no hints."""
        return self.pod_level_resources and pod_level_resources_set(pod)

    def allocate_cpus(
        self,
        snapshot: StateSnapshot,
        count: int,
        hint: NUMAMask | None,
        reusable: CPUSet,
        *,
        trace: list[str] | None = None,
    ) -> CPUSet:
        """The kubelet's allocateCPUs: NUMA-aligned CPUs first, then the rest."""
        pool = self.available_cpus(snapshot) | reusable
        result = CPUSet()
        if hint is not None:
            aligned = self.aligned_cpus(hint, pool)
            if trace is not None:
                trace.append(f"hint NUMA nodes {hint}: {len(aligned)} usable CPUs there")
            result = take_by_topology(
                self.topology, aligned, min(count, len(aligned)), self.options, trace=trace
            )
        rest = count - len(result)
        if rest <= 0:
            return result  # take_by_topology takes nothing and says nothing for 0 CPUs
        if trace is not None and hint is not None:
            trace.append(f"{rest} more CPUs from outside the hint")
        return result | take_by_topology(
            self.topology, pool - result, rest, self.options, trace=trace
        )

    def allocate(
        self,
        snapshot: StateSnapshot,
        reuse: ReusableCPUs,
        pod: Pod,
        container: Container,
        hint: NUMAMask | None,
        *,
        explain: bool = True,
    ) -> Allocation:
        """Decide the container's CPUs; the snapshot and reuse value to commit come back
        (with the steps taken in ``trace`` when ``explain``)."""
        count = self.guaranteed_cpus(pod, container)
        if count == 0:
            return Allocation(
                cpus=snapshot.default_cpuset,
                snapshot=snapshot,
                reuse=reuse,
                trace=("not a Guaranteed container with an integral CPU request: shared pool",),
            )
        if self.skips_pod_level(pod):
            return Allocation(
                cpus=snapshot.default_cpuset,
                snapshot=snapshot,
                reuse=reuse,
                trace=(
                    "the pod sets pod-level resources, which the static policy does not pin "
                    "(kubelet 1.34): shared pool",
                ),
            )
        self.check_smt_alignment(snapshot, count)
        existing = snapshot.cpuset_of(pod.uid, container.name)
        if existing is not None:
            return Allocation(
                cpus=existing,
                snapshot=snapshot,
                reuse=updated_reuse(reuse, pod, container, existing),
                trace=(f"already holds CPUs {existing}: kept",),
                reused_existing=True,
            )
        reusable = reuse.for_pod(pod.uid)
        trace: list[str] | None = None
        if explain:
            trace = [f"{count} exclusive CPUs requested"]
            if reusable:
                trace.append(f"CPUs {reusable} of finished init containers may be reused")
        cpus = self.allocate_cpus(snapshot, count, hint, reusable, trace=trace)
        new_snapshot = snapshot.with_assignment(
            pod.uid, container.name, cpus, default=snapshot.default_cpuset - cpus
        )
        return Allocation(
            cpus=cpus,
            snapshot=new_snapshot,
            reuse=updated_reuse(reuse, pod, container, cpus),
            trace=tuple(trace or ()),
            newly_exclusive=cpus & snapshot.default_cpuset,
        )

    def remove(
        self, snapshot: StateSnapshot, pod_uid: PodUID, container_name: ContainerName
    ) -> Removal:
        """Drop the assignment; give back CPUs no other container of the pod holds."""
        held = snapshot.cpuset_of(pod_uid, container_name)
        if held is None:
            return Removal(snapshot=snapshot, released=CPUSet(), returned_to_default=CPUSet())
        siblings = CPUSet().union(
            *(
                cpus
                for name, cpus in snapshot.assignments.get(pod_uid, {}).items()
                if name != container_name
            )
        )
        returned = held - siblings
        new_snapshot = snapshot.without_assignment(pod_uid, container_name)
        new_snapshot = new_snapshot.with_default(snapshot.default_cpuset | returned)
        return Removal(snapshot=new_snapshot, released=held, returned_to_default=returned)

    # --- hints ---------------------------------------------------------------------------

    def _hints(
        self, available: CPUSet, reusable: CPUSet, count: int, *, implicit: bool
    ) -> dict[str, AnyResourceHints]:
        build = cpu_hint_source if implicit else generate_cpu_hints
        return {
            "cpu": build(
                self.topology,
                available=available,
                reusable=reusable,
                count=count,
                align_by_socket=self.options.align_by_socket,
            )
        }

    def _container_answer(
        self,
        snapshot: StateSnapshot,
        reuse: ReusableCPUs,
        pod: Pod,
        container: Container,
        *,
        implicit: bool,
    ) -> dict[str, AnyResourceHints]:
        requested = self.guaranteed_cpus(pod, container)
        if requested == 0 or self.skips_pod_level(pod):
            return {}
        existing = snapshot.cpuset_of(pod.uid, container.name)
        if existing is not None:
            if len(existing) != requested:
                return {"cpu": NO_PLACEMENT}
            return self._hints(existing, CPUSet(), requested, implicit=implicit)
        return self._hints(
            self.available_cpus(snapshot), reuse.for_pod(pod.uid), requested, implicit=implicit
        )

    def _pod_answer(
        self, snapshot: StateSnapshot, reuse: ReusableCPUs, pod: Pod, *, implicit: bool
    ) -> dict[str, AnyResourceHints]:
        requested = pod_guaranteed_cpus(pod, pod_level_resources=self.pod_level_resources)
        if requested == 0 or self.skips_pod_level(pod):
            return {}
        assigned = CPUSet()
        for container in pod.all_containers():
            existing = snapshot.cpuset_of(pod.uid, container.name)
            if existing is None:
                continue
            if len(existing) != self.guaranteed_cpus(pod, container):
                return {"cpu": NO_PLACEMENT}
            assigned = assigned | existing
        if len(assigned) == requested:
            return self._hints(assigned, CPUSet(), requested, implicit=implicit)
        return self._hints(
            self.available_cpus(snapshot),
            reuse.for_pod(pod.uid) | assigned,
            requested,
            implicit=implicit,
        )

    def container_hints(
        self, snapshot: StateSnapshot, reuse: ReusableCPUs, pod: Pod, container: Container
    ) -> ProviderHints:
        """The kubelet's GetTopologyHints (an empty mapping means no preference)."""
        answer = self._container_answer(snapshot, reuse, pod, container, implicit=False)
        return _explicit(answer)

    def pod_hints(self, snapshot: StateSnapshot, reuse: ReusableCPUs, pod: Pod) -> ProviderHints:
        """The kubelet's GetPodTopologyHints (an empty mapping means no preference)."""
        return _explicit(self._pod_answer(snapshot, reuse, pod, implicit=False))

    def container_hint_sources(
        self, snapshot: StateSnapshot, reuse: ReusableCPUs, pod: Pod, container: Container
    ) -> dict[str, AnyResourceHints]:
        """The same hints as :meth:`container_hints`, as a rule the fast merge searches.

        Used past a handful of NUMA nodes, where listing every mask is out of reach.
        """
        return self._container_answer(snapshot, reuse, pod, container, implicit=True)

    def pod_hint_sources(
        self, snapshot: StateSnapshot, reuse: ReusableCPUs, pod: Pod
    ) -> dict[str, AnyResourceHints]:
        """The same hints as :meth:`pod_hints`, as a rule the fast merge searches."""
        return self._pod_answer(snapshot, reuse, pod, implicit=True)


def _explicit(answer: dict[str, AnyResourceHints]) -> ProviderHints:
    hints: ProviderHints = {}
    for resource, value in answer.items():
        if isinstance(value, tuple) or value is NO_PREFERENCE:
            hints[resource] = value
        else:  # pragma: no cover - the explicit path never builds a rule
            hints[resource] = value.explicit()
    return hints
