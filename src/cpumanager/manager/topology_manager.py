"""TopologyManager: the kubelet's pod admission over several hint providers.

The manager owns the providers (in registration order: CPU, memory, devices), the stored
hints and one admission scope, chosen from the configuration as the kubelet chooses it
(container, pod, or none for the ``none`` policy; see :mod:`cpumanager.manager.scopes`).
``admit`` times the scope's admission, runs the later admit handlers and reports the
outcome to the observer.

``later_checks`` are the kubelet admit handlers registered after the resource-allocation
one (the pod-features handler that refuses pod-level resources with the PodLevelResources
gate off): they run only once the providers have allocated, and a refusal leaves those
allocations to stale-state removal, as a rejection by the scope does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.events import Admitted, Rejected
from cpumanager.core.hints.hint import TopologyHint
from cpumanager.core.ids import ContainerName, PodUID
from cpumanager.core.merge.options import TopologyManagerConfig
from cpumanager.core.workload import Pod
from cpumanager.manager.admission import AdmissionResult, ContainerDecision
from cpumanager.manager.scopes import AdmissionScope, HintMerger, HintStore, build_scope
from cpumanager.ports import NULL_OBSERVER, HintProvider, Observer

__all__ = [
    "AdmissionResult",
    "AdmitCheck",
    "ContainerDecision",
    "HintProvider",
    "TopologyManager",
]

# A later admit handler: None admits, (reason, message) refuses.
AdmitCheck = Callable[[Pod], tuple[str, str] | None]


class TopologyManager:
    """Admission handler: hints, merge, store the affinity, allocate (through its scope)."""

    def __init__(
        self,
        *,
        config: TopologyManagerConfig,
        numa_ids: Sequence[int],
        distances: dict[int, dict[int, int]] | None = None,
        providers: Sequence[HintProvider] = (),
        observer: Observer = NULL_OBSERVER,
        clock: Callable[[], float] | None = None,
        later_checks: Sequence[AdmitCheck] = (),
    ) -> None:
        self._config = config
        self._later_checks = tuple(later_checks)
        self._providers = list(providers)
        self._observer = observer
        self._clock = clock
        self._hints = HintStore()
        self._merger = HintMerger(config=config, numa_ids=numa_ids, distances=distances)
        self._scope = build_scope(
            config, merger=self._merger, providers=self._providers, hints=self._hints
        )

    def fork(
        self, *, observer: Observer = NULL_OBSERVER, clock: Callable[[], float] | None = None
    ) -> TopologyManager:
        """A copy with the same configuration, merge and stored hints, and no providers yet
        (the caller adds the forked ones); later changes to either never reach the other."""
        twin = TopologyManager.__new__(TopologyManager)
        twin._config = self._config
        twin._later_checks = self._later_checks
        twin._providers = []
        twin._observer = observer
        twin._clock = clock
        twin._hints = self._hints.copy()
        twin._merger = self._merger
        # the scope build_scope chose for this configuration, over the copy's own lists
        twin._scope = type(self._scope)(
            merger=self._merger, providers=twin._providers, hints=twin._hints
        )
        return twin

    @property
    def config(self) -> TopologyManagerConfig:
        return self._config

    @property
    def scope(self) -> AdmissionScope:
        return self._scope

    def add_provider(self, provider: HintProvider) -> None:
        self._providers.append(provider)

    def get_affinity(self, pod_uid: PodUID, container_name: ContainerName) -> TopologyHint:
        """The stored hint, or the zero hint (any NUMA node, not preferred)."""
        return self._hints.get(pod_uid, container_name)

    def affinity_mask(self, pod_uid: PodUID, container_name: ContainerName) -> NUMAMask | None:
        return self.get_affinity(pod_uid, container_name).mask

    def remove_pod(self, pod_uid: PodUID) -> None:
        """Forget the pod's stored hints (its containers stopped)."""
        self._hints.remove_pod(pod_uid)

    def remove_container(self, pod_uid: PodUID, container_name: ContainerName) -> None:
        self._hints.remove_container(pod_uid, container_name)

    def admit(self, pod: Pod, *, explain: bool = True) -> AdmissionResult:
        """Admit or reject ``pod``; on admission every provider has allocated. Without
        ``explain`` the decisions carry no merge explanation (nothing else changes)."""
        start = self._clock() if self._clock else 0.0
        result = self._scope.admit(pod, explain=explain)
        if result.admitted:
            for check in self._later_checks:
                refusal = check(pod)
                if refusal is not None:
                    reason, message = refusal
                    result = replace(result, admitted=False, reason=reason, message=message)
                    break
        if self._observer is NULL_OBSERVER:
            return result
        duration = (self._clock() - start) if self._clock else 0.0
        if result.admitted:
            self._observer.notify(Admitted(pod.uid, pod.display_name, duration))
        else:
            self._observer.notify(
                Rejected(pod.uid, pod.display_name, result.reason, result.message, duration)
            )
        return result
