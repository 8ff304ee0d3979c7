"""Admission scopes: the kubelet topology manager's container, pod and none scopes.

The topology manager picks one scope when it is built (kubelet ``NewManager``): the
``none`` policy gets the none scope whatever ``topologyManagerScope`` says, any other policy
the configured ``container`` or ``pod`` scope. The three share the kubelet's ``scope``
struct: the hint providers in registration order (CPU, memory, devices), the policy's merge
(:class:`HintMerger`) and the stored hints (:class:`HintStore`).

* :class:`ContainerScope` (scope_container.go) visits init containers, then app containers,
  in spec order: ``calculate_affinity`` (``accumulate_provider_hints``, then merge) rejects
  the pod with TopologyAffinityError when the policy does not admit the merged hint;
  otherwise the hint is stored and ``allocate_aligned_resources`` runs.
* :class:`PodScope` (scope_pod.go) calculates the affinity once for the whole pod, then
  stores that hint container by container just before each one allocates (so after a
  failed allocation later containers have no stored hint).
* :class:`NoneScope` (scope_none.go) asks nobody and stores nothing; the providers still
  allocate (unaligned).

``allocate_aligned_resources`` lets every provider allocate in registration order; the
first error rejects the pod (``pod_admit_result``). A rejected pod keeps what its earlier
containers were given, as in the kubelet: it is not active, so the next stale-state removal
returns it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import ClassVar

from cpumanager.core.hints.hint import TopologyHint
from cpumanager.core.ids import ContainerName, PodUID
from cpumanager.core.merge.exact import AnyProviderHints
from cpumanager.core.merge.explain import explain_merge
from cpumanager.core.merge.options import NUMAInfo, TopologyManagerConfig
from cpumanager.core.merge.policies import MergeResult, merge_hints
from cpumanager.core.workload import Container, Pod
from cpumanager.errors import CpuManagerError
from cpumanager.manager.admission import (
    AdmissionResult,
    ContainerDecision,
    pod_admit_result,
    topology_affinity_rejection,
)
from cpumanager.ports import HintProvider

__all__ = [
    "AdmissionScope",
    "ContainerScope",
    "HintMerger",
    "HintStore",
    "NoneScope",
    "PodScope",
    "build_scope",
]

Asked = tuple[tuple[str, AnyProviderHints], ...]
_ZERO_HINT = TopologyHint(None, False)  # immutable: one value serves every lookup
Details = Callable[[HintProvider], Mapping[str, object]]


class HintMerger:
    """The topology manager policy's ``Merge``, with explanations that carry numbers."""

    def __init__(
        self,
        *,
        config: TopologyManagerConfig,
        numa_ids: Sequence[int],
        distances: dict[int, dict[int, int]] | None = None,
    ) -> None:
        self._config = config
        self._numa_ids = tuple(numa_ids)
        self._distances = distances

    def merge(
        self,
        hints: Sequence[AnyProviderHints],
        details: Callable[[], Mapping[str, object]] | None = None,
        *,
        explain: bool = True,
    ) -> MergeResult:
        """Merge; a non-preferred or widened result is re-explained with numbers.

        ``details`` asks the providers for capacity rules (need and free per node) behind
        their explicit hint lists; it is called only when there is something to explain,
        and it never changes the hint or the decision. Without ``explain`` there is no
        explanation at all (the same hint and decision, for callers that do not read it).
        """
        merged = merge_hints(
            self._config, self._numa_ids, list(hints), distances=self._distances, explain=explain
        )
        explanation = merged.explanation
        if details is None or explanation is None:
            return merged
        if merged.hint.preferred and not explanation.widened:
            return merged
        extra = details()
        if not extra:
            return merged
        numa = self._config.numa or NUMAInfo.of(self._numa_ids)
        better = explain_merge(
            merged.policy, numa, list(hints), hint=merged.hint, admit=merged.admit, details=extra
        )
        return replace(merged, explanation=better)


class HintStore:
    """The kubelet's ``podTopologyHints``: the affinity stored per pod and container.

    ``copy`` shares the table until either store changes it (copy on write): a trial
    admission on a forked node copies it only if it stores a hint.
    """

    def __init__(self) -> None:
        self._hints: dict[PodUID, dict[ContainerName, TopologyHint]] = {}
        self._shared = False

    def get(self, pod_uid: PodUID, container_name: ContainerName) -> TopologyHint:
        """The stored hint, or the zero hint (any NUMA node, not preferred)."""
        containers = self._hints.get(pod_uid)
        found = None if containers is None else containers.get(container_name)
        return _ZERO_HINT if found is None else found

    def _own(self) -> dict[PodUID, dict[ContainerName, TopologyHint]]:
        if self._shared:
            self._hints = {pod: dict(containers) for pod, containers in self._hints.items()}
            self._shared = False
        return self._hints

    def set(self, pod_uid: PodUID, container_name: ContainerName, hint: TopologyHint) -> None:
        self._own().setdefault(pod_uid, {})[container_name] = hint

    def remove_pod(self, pod_uid: PodUID) -> None:
        if pod_uid in self._hints:
            self._own().pop(pod_uid, None)

    def copy(self) -> HintStore:
        """An independent store holding the same hints (hints themselves are immutable)."""
        twin = HintStore()
        twin._hints = self._hints
        twin._shared = self._shared = True
        return twin

    def remove_container(self, pod_uid: PodUID, container_name: ContainerName) -> None:
        containers = self._hints.get(pod_uid)
        if containers is None or container_name not in containers:
            return
        containers = self._own()[pod_uid]
        containers.pop(container_name, None)
        if not containers:
            del self._hints[pod_uid]


class AdmissionScope(ABC):
    """What the three scopes share (the kubelet's ``scope`` struct)."""

    name: ClassVar[str]

    def __init__(
        self, *, merger: HintMerger, providers: Sequence[HintProvider], hints: HintStore
    ) -> None:
        self._merger = merger
        self._providers = providers  # the topology manager's list: later additions count
        self._hints = hints

    @abstractmethod
    def admit(self, pod: Pod, *, explain: bool = True) -> AdmissionResult:
        """Hints, merge, store, allocate: the pod is admitted with every container allocated,
        or rejected with the kubelet's reason. Without ``explain`` the decisions carry no
        merge explanation (nothing else changes)."""

    def allocate_aligned_resources(self, pod: Pod, container: Container) -> dict[str, object]:
        """Every provider allocates ``container``, in registration order; the first error
        propagates (what was allocated before it stays, for stale-state removal)."""
        allocated: dict[str, object] = {}
        for provider in self._providers:
            allocated[f"{provider.provider_name}/{container.name}"] = provider.allocate(
                pod, container
            )
        return allocated

    def _ask(self, ask: Callable[[HintProvider], AnyProviderHints]) -> Asked:
        return tuple([(provider.provider_name, ask(provider)) for provider in self._providers])

    def _merge(self, asked: Asked, details: Details, *, explain: bool) -> MergeResult:
        hints = [hints for _, hints in asked]
        if not explain:  # the details serve explanations only
            return self._merger.merge(hints, None, explain=False)

        def gather() -> dict[str, object]:
            found: dict[str, object] = {}
            for provider in self._providers:
                found.update(details(provider))
            return found

        return self._merger.merge(hints, gather, explain=explain)


class NoneScope(AdmissionScope):
    """scope_none.go: no hints, no merge, nothing stored; every container allocates."""

    name = "none"

    def admit(self, pod: Pod, *, explain: bool = True) -> AdmissionResult:
        allocated: dict[str, object] = {}
        for container in pod.all_containers():
            try:
                allocated.update(self.allocate_aligned_resources(pod, container))
            except CpuManagerError as err:
                return pod_admit_result(err, ())
        return AdmissionResult(True, allocated=allocated)


class ContainerScope(AdmissionScope):
    """scope_container.go: one merged hint per container, in admission order."""

    name = "container"

    def accumulate_provider_hints(self, pod: Pod, container: Container) -> Asked:
        """Every provider's hints for ``container``, by provider name, in order."""
        return self._ask(lambda provider: provider.topology_hints(pod, container))

    def calculate_affinity(
        self, pod: Pod, container: Container, *, explain: bool = True
    ) -> ContainerDecision:
        """The merged hint for ``container`` and whether the policy admits it."""
        asked = self.accumulate_provider_hints(pod, container)
        merged = self._merge(
            asked, lambda provider: provider.hint_details(pod, container), explain=explain
        )
        return ContainerDecision(
            container.name, asked, merged.hint, merged.admit, merged.explanation
        )

    def admit(self, pod: Pod, *, explain: bool = True) -> AdmissionResult:
        decisions: list[ContainerDecision] = []
        allocated: dict[str, object] = {}
        for container in pod.all_containers():
            decision = self.calculate_affinity(pod, container, explain=explain)
            decisions.append(decision)
            if not decision.admitted:
                return topology_affinity_rejection(decisions)
            self._hints.set(pod.uid, container.name, decision.merged)
            try:
                allocated.update(self.allocate_aligned_resources(pod, container))
            except CpuManagerError as err:
                return pod_admit_result(err, decisions)
        return AdmissionResult(True, decisions=tuple(decisions), allocated=allocated)


class PodScope(AdmissionScope):
    """scope_pod.go: one merged hint for the whole pod, stored for every container."""

    name = "pod"

    def accumulate_provider_hints(self, pod: Pod) -> Asked:
        """Every provider's hints for the whole pod, by provider name, in order."""
        return self._ask(lambda provider: provider.pod_topology_hints(pod))

    def calculate_affinity(self, pod: Pod, *, explain: bool = True) -> ContainerDecision:
        """The pod's merged hint and whether the policy admits it (container "(pod)")."""
        asked = self.accumulate_provider_hints(pod)
        merged = self._merge(
            asked, lambda provider: provider.pod_hint_details(pod), explain=explain
        )
        return ContainerDecision("(pod)", asked, merged.hint, merged.admit, merged.explanation)

    def admit(self, pod: Pod, *, explain: bool = True) -> AdmissionResult:
        decision = self.calculate_affinity(pod, explain=explain)
        if not decision.admitted:
            return topology_affinity_rejection([decision])
        allocated: dict[str, object] = {}
        for container in pod.all_containers():
            # Stored container by container, just before it allocates (kubelet order).
            self._hints.set(pod.uid, container.name, decision.merged)
            try:
                allocated.update(self.allocate_aligned_resources(pod, container))
            except CpuManagerError as err:
                return pod_admit_result(err, [decision])
        return AdmissionResult(True, decisions=(decision,), allocated=allocated)


def build_scope(
    config: TopologyManagerConfig,
    *,
    merger: HintMerger,
    providers: Sequence[HintProvider],
    hints: HintStore,
) -> AdmissionScope:
    """The kubelet's choice: the none policy admits through the none scope."""
    if config.policy == "none":
        kind: type[AdmissionScope] = NoneScope
    elif config.scope == "pod":
        kind = PodScope
    else:
        kind = ContainerScope
    return kind(merger=merger, providers=providers, hints=hints)
