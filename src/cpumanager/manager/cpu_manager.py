"""CPUManager: the kubelet's CPU manager lifecycle over pure policies and narrow ports.

Decide, then commit: the policy returns a new snapshot, the manager saves it through the
StateStore and only then makes it current. A failed save raises and leaves the previous
state in force in memory and on disk (the kubelet only logs a failed write and carries on
with memory and disk disagreeing).

Stale-state removal runs before every hint request, before every allocation and at the start
of every reconcile pass, guarded only by "all pod sources ready"; an empty list of active
pods releases everything (pods that exited while the manager was down). Each check keeps a
proof of its answer (``core/stale_state.py`` ``stale_keys_proved``), which lets the next
one skip the work when the state, the container map and the head of the active list are
the same values (the two checks of each admitted container, and trial copies of a node).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.containermap import ContainerMap
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.events import (
    Allocated,
    PinningFailed,
    Reconciled,
    Released,
    Started,
    StateRepaired,
)
from cpumanager.core.hints.hint import ProviderHints
from cpumanager.core.ids import ContainerID, ContainerKey, ContainerName, PodUID
from cpumanager.core.merge.exact import AnyProviderHints
from cpumanager.core.policy.base import Policy, ReusableCPUs
from cpumanager.core.reconcile import ContainerStatus, plan_updates
from cpumanager.core.repair import repair_snapshot
from cpumanager.core.restore import check_policy_name
from cpumanager.core.stale_state import StaleProof, stale_keys_proved
from cpumanager.core.state import StateSnapshot
from cpumanager.core.workload import Container, Pod
from cpumanager.errors import (
    AllocationError,
    CheckpointError,
    CpuManagerError,
    HostError,
    StateValidationError,
)
from cpumanager.ports import NULL_OBSERVER, Observer, Runtime, StateStore

__all__ = ["CPUManager", "ReconcileReport"]


@dataclass(frozen=True, slots=True)
class ReconcileReport:
    """One reconcile pass (the kubelet's success / failure lists, returned, not logged)."""

    updated: tuple[tuple[ContainerKey, CPUSet], ...]
    unchanged: tuple[ContainerKey, ...]
    failed: tuple[tuple[ContainerKey, str], ...]


class CPUManager:
    """One node's CPU manager: state, container map, stale-state removal, reconcile."""

    def __init__(
        self,
        *,
        policy: Policy,
        store: StateStore,
        all_cpus: CPUSet,
        observer: Observer = NULL_OBSERVER,
        affinity: Callable[[PodUID, ContainerName], NUMAMask | None] | None = None,
    ) -> None:
        self._policy = policy
        self._store = store
        self._all_cpus = all_cpus
        self._observer = observer
        # Events nobody hears are not built, nor the allocation traces they would carry.
        self._heard = observer is not NULL_OBSERVER
        self._affinity = affinity or (lambda _pod, _name: None)
        self._snapshot = StateSnapshot(policy.name)
        self._reuse = ReusableCPUs()
        self._container_map = ContainerMap()
        self._last_applied: dict[ContainerKey, CPUSet] = {}
        self._active_pods: Callable[[], Sequence[Pod]] = tuple
        self._sources_ready: Callable[[], bool] = lambda: True
        self._allocatable = CPUSet()
        self._started = False
        self._stale_proof: StaleProof | None = None

    # --- lifecycle ---------------------------------------------------------------------

    def start(
        self,
        *,
        active_pods: Callable[[], Sequence[Pod]],
        sources_ready: Callable[[], bool],
        running_containers: Iterable[tuple[ContainerID, PodUID, ContainerName]] = (),
        recover: bool = False,
    ) -> None:
        """Restore state (migrating V1 through the running containers), validate, clean up.

        With ``recover`` a state the kubelet would refuse (changed reservation, hot-plugged
        CPUs, a torn write) is repaired instead: valid assignments are kept, the rest are
        returned, and every change is reported as a StateRepaired event. A checkpoint the
        store cannot hand over at all (corrupt, another policy's, a V1 file naming containers
        that are gone) is discarded and the state starts afresh, also reported.
        """
        self._active_pods = active_pods
        self._sources_ready = sources_ready
        container_map = ContainerMap()
        for container_id, pod_uid, name in running_containers:
            container_map = container_map.add(pod_uid, name, container_id)
        self._container_map = container_map
        self._reuse = ReusableCPUs()
        self._last_applied = {}
        source = "checkpoint"
        try:
            restored = self._store.load(self._policy.name, container_map)
        except CheckpointError as err:
            if not recover:
                raise
            self._observer.notify(StateRepaired(f"checkpoint discarded: {err.message}"))
            restored = None
        if restored is None:
            source = "new"
            restored = StateSnapshot(self._policy.name)
            self._store.save(restored)
        if restored.policy_name != self._policy.name:
            # The stores refuse another policy's checkpoint themselves (as the kubelet's
            # restore does), so under recovery it was discarded above; this guards a store
            # that hands it over anyway.
            if not recover:
                check_policy_name(restored, self._policy.name, source="state store")
            self._observer.notify(
                StateRepaired(
                    f"checkpoint policy {restored.policy_name!r} replaced by "
                    f"{self._policy.name!r}; its assignments were kept where still valid"
                )
            )
            restored = StateSnapshot(
                self._policy.name, restored.default_cpuset, restored.assignments
            )
        try:
            started = self._policy.start(restored)
        except CheckpointError:
            if not recover:
                raise
            repaired, changes = repair_snapshot(
                restored,
                all_cpus=self._all_cpus,
                reserved=self._policy.reserved_cpus,
                strict_reservation=self._strict_reservation(),
            )
            for change in changes:
                self._observer.notify(change)
            started = self._start_repaired(repaired)
        if started != restored:
            self._store.save(started)
        self._snapshot = started
        self._allocatable = self._policy.allocatable_cpus()
        self._started = True
        self._observer.notify(
            Started(
                policy_name=self._policy.name,
                default_cpuset=started.default_cpuset,
                allocatable=self._allocatable,
                reserved=self._policy.reserved_cpus,
                exclusive=started.assigned_cpus(),
                source=source,
            )
        )
        self.remove_stale_state()

    def fork(
        self,
        *,
        store: StateStore,
        active_pods: Callable[[], Sequence[Pod]],
        observer: Observer = NULL_OBSERVER,
        affinity: Callable[[PodUID, ContainerName], NUMAMask | None] | None = None,
    ) -> CPUManager:
        """A started copy of this manager on ``store``, which must already hold this
        manager's state: the policy and every immutable value are shared, nothing is loaded,
        validated or saved (the state came from a started manager), and no event is sent.
        Later changes to either manager never reach the other."""
        if not self._started:
            msg = "only a started CPU manager can be forked; call start first"
            raise RuntimeError(msg)
        twin = CPUManager.__new__(CPUManager)
        twin._policy = self._policy
        twin._store = store
        twin._all_cpus = self._all_cpus
        twin._observer = observer
        twin._heard = observer is not NULL_OBSERVER
        twin._affinity = affinity or (lambda _pod, _name: None)
        twin._snapshot = self._snapshot
        twin._reuse = self._reuse
        twin._container_map = self._container_map
        twin._last_applied = dict(self._last_applied)
        twin._active_pods = active_pods
        twin._sources_ready = self._sources_ready
        twin._allocatable = self._allocatable
        twin._started = True
        twin._stale_proof = self._stale_proof  # immutable; holds only for identical values
        return twin

    def _start_repaired(self, repaired: StateSnapshot) -> StateSnapshot:
        """Start from a repaired state, which may have an empty default set.

        Under strict-cpu-reservation every allocatable CPU can be exclusively assigned,
        leaving the default set empty. The kubelet's validateState refuses any state with an
        empty default set and assignments ("default cpuset cannot be empty"), so such a node
        cannot restart; recovery keeps the (sound) state instead.
        """
        try:
            return self._policy.start(repaired)
        except StateValidationError:
            if repaired.default_cpuset or not repaired.assignments:
                raise
        self._observer.notify(
            StateRepaired(
                "kept an empty default CPU set: every allocatable CPU is exclusively "
                "assigned (the kubelet refuses such a state at start)"
            )
        )
        return repaired

    def _strict_reservation(self) -> bool:
        return self._policy.strict_reservation

    # --- queries ------------------------------------------------------------------------

    @property
    def snapshot(self) -> StateSnapshot:
        return self._snapshot

    @property
    def policy(self) -> Policy:
        return self._policy

    @property
    def container_map(self) -> ContainerMap:
        return self._container_map

    @property
    def reuse(self) -> ReusableCPUs:
        return self._reuse

    def allocatable_cpus(self) -> CPUSet:
        return self._allocatable

    def exclusive_cpus(self, pod_uid: PodUID, container_name: ContainerName) -> CPUSet:
        found = self._snapshot.cpuset_of(pod_uid, container_name)
        return CPUSet() if found is None else found

    def cpu_affinity(self, pod_uid: PodUID, container_name: ContainerName) -> CPUSet:
        """The cpuset a container is created with: its exclusive set, or the shared pool."""
        return self._snapshot.cpuset_or_default(pod_uid, container_name)

    def last_applied(self) -> Mapping[ContainerKey, CPUSet]:
        return dict(self._last_applied)

    # --- commit ---------------------------------------------------------------------------

    def _commit(self, snapshot: StateSnapshot) -> None:
        """Persist first, publish second; a failed save leaves the old state in force."""
        if snapshot == self._snapshot:
            return
        self._store.save(snapshot)
        self._snapshot = snapshot

    # --- admission ------------------------------------------------------------------------

    def topology_hints(self, pod: Pod, container: Container) -> ProviderHints:
        self.remove_stale_state(admitting=pod)
        return self._policy.container_hints(self._snapshot, self._reuse, pod, container)

    def pod_topology_hints(self, pod: Pod) -> ProviderHints:
        self.remove_stale_state(admitting=pod)
        return self._policy.pod_hints(self._snapshot, self._reuse, pod)

    def topology_hint_sources(self, pod: Pod, container: Container) -> AnyProviderHints:
        """Hints as rules the fast merge searches (for machines past a few NUMA nodes)."""
        self.remove_stale_state(admitting=pod)
        return self._policy.container_hint_sources(self._snapshot, self._reuse, pod, container)

    def pod_topology_hint_sources(self, pod: Pod) -> AnyProviderHints:
        self.remove_stale_state(admitting=pod)
        return self._policy.pod_hint_sources(self._snapshot, self._reuse, pod)

    def allocate(self, pod: Pod, container: Container) -> CPUSet:
        """Give the container its CPUs (exclusive or shared) at admission."""
        self.remove_stale_state(admitting=pod)
        hint = self._affinity(pod.uid, container.name)
        try:
            allocation = self._policy.allocate(
                self._snapshot, self._reuse, pod, container, hint, explain=self._heard
            )
        except AllocationError as err:
            if self._policy.guaranteed_cpus(pod, container):
                self._observer.notify(
                    PinningFailed(pod.uid, container.name, err.reason, err.message)
                )
            raise
        self._commit(allocation.snapshot)
        self._reuse = allocation.reuse
        if self._heard and self._snapshot.cpuset_of(pod.uid, container.name) is not None:
            self._observer.notify(
                Allocated(
                    pod.uid,
                    container.name,
                    allocation.cpus,
                    allocation.newly_exclusive,
                    reused=allocation.reused_existing,
                    trace=allocation.trace,
                )
            )
        return allocation.cpus

    def add_container(self, pod: Pod, container: Container, container_id: ContainerID) -> None:
        """The kubelet's PreStartContainer hook: remember the id; seed the applied cache."""
        cpus = self._snapshot.cpuset_of(pod.uid, container.name)
        if cpus is not None:
            self._last_applied[pod.key(container.name)] = cpus
        self._container_map = self._container_map.add(pod.uid, container.name, container_id)

    def remove_container(self, container_id: ContainerID) -> CPUSet:
        """Release a container by id; unknown ids are a no-op (as in the kubelet)."""
        key = self._container_map.ref(container_id)
        if key is None:
            return CPUSet()
        released = self._remove(key, reason="removed")
        self._container_map = self._container_map.remove_id(container_id)
        return released

    def _remove(self, key: ContainerKey, *, reason: str) -> CPUSet:
        held = self._snapshot.cpuset_of(key.pod_uid, key.container_name)
        removal = self._policy.remove(self._snapshot, key.pod_uid, key.container_name)
        self._commit(removal.snapshot)
        self._last_applied.pop(key, None)
        if held is not None:
            self._observer.notify(
                Released(
                    key.pod_uid,
                    key.container_name,
                    removal.released,
                    removal.returned_to_default,
                    reason,
                )
            )
        return removal.returned_to_default

    def remove_stale_state(self, *, admitting: Pod | None = None) -> tuple[ContainerKey, ...]:
        """Release every container whose pod is no longer active (sources must be ready).

        ``admitting`` (the pod whose hints or allocation triggered the cleanup) counts as
        active even if the caller has not listed it yet, as the kubelet's pod manager does:
        otherwise its first container's fresh CPUs would be released while its second one
        is admitted.
        """
        if not self._started or not self._sources_ready():
            return ()
        if not self._snapshot.assignments and not len(self._container_map):
            return ()  # nothing is held, nothing can be stale
        pods = [*self._active_pods(), admitting] if admitting is not None else self._active_pods()
        stale, self._stale_proof = stale_keys_proved(
            self._stale_proof, self._snapshot, self._container_map, pods
        )
        for key in stale:
            self._remove(key, reason="stale")
            # The kubelet visits every (pod, name, id) entry, so a container that restarted
            # (several ids) loses all of them in one pass.
            self._container_map = self._container_map.remove_all_for_ref(
                key.pod_uid, key.container_name
            )
        return stale

    # --- reconcile ------------------------------------------------------------------------

    def reconcile(self, runtime: Runtime, statuses: Iterable[ContainerStatus]) -> ReconcileReport:
        """One pass of the kubelet's reconcile loop: clean up, then push changed cpusets.

        The none policy has no reconcile loop in the kubelet: its pass does nothing.
        """
        if self._policy.name == "none":
            return ReconcileReport((), (), ())
        self.remove_stale_state()
        by_key = {status.key: status for status in statuses}
        plan = plan_updates(self._snapshot, self._active_pods(), by_key, self._last_applied)
        for key, container_id in plan.running:
            self._container_map = self._container_map.add(
                key.pod_uid, key.container_name, container_id
            )
        updated: list[tuple[ContainerKey, CPUSet]] = []
        failed = list(plan.failures)
        for update in plan.updates:
            try:
                runtime.apply(update.container_id, update.cpus)
            except (HostError, OSError) as err:
                message = err.message if isinstance(err, CpuManagerError) else str(err)
                failed.append((update.key, message))
                continue
            self._last_applied[update.key] = update.cpus
            updated.append((update.key, update.cpus))
        report = ReconcileReport(tuple(updated), plan.unchanged, tuple(failed))
        self._observer.notify(
            Reconciled(
                tuple((k.pod_uid, k.container_name, c) for k, c in report.updated),
                tuple((k.pod_uid, k.container_name) for k in report.unchanged),
                tuple((k.pod_uid, k.container_name, m) for k, m in report.failed),
            )
        )
        return report
