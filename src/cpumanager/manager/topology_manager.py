"""TopologyManager: the kubelet's pod admission over several hint providers.

Container scope visits init containers, then app containers, in spec order: it asks every
provider for the container's hints, merges them under the policy, rejects the pod with
``TopologyAffinityError`` when the policy does not admit the merged hint, otherwise stores
the hint and lets every provider allocate (in registration order; the first error rejects
the pod: SMTAlignmentError, TopologyAffinityError and UnexpectedAdmissionError keep their
reason, anything else, "not enough CPUs" included, becomes UnexpectedAdmissionError
"Allocate failed due to <error>, which is unexpected", as in the kubelet). Pod scope asks
once for the whole pod and stores the same hint for each container just before that
container allocates (so after a failed allocation later containers have no stored hint).
The ``none`` policy asks nobody and stores nothing, but the providers still allocate
(unaligned).

A rejected pod keeps whatever its earlier containers were given, as in the kubelet: the pod
is not active, so the next stale-state removal returns it.

``later_checks`` are the kubelet admit handlers registered after the resource-allocation
one (the pod-features handler that refuses pod-level resources with the PodLevelResources
gate off): they run only once the providers have allocated, and a refusal leaves those
allocations to stale-state removal as well.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Protocol

from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.events import Admitted, Rejected
from cpumanager.core.hints.hint import TopologyHint
from cpumanager.core.ids import ContainerName, PodUID
from cpumanager.core.merge.exact import AnyProviderHints
from cpumanager.core.merge.explain import MergeExplanation, explain_merge
from cpumanager.core.merge.options import NUMAInfo, TopologyManagerConfig
from cpumanager.core.merge.policies import MergeResult, merge_hints
from cpumanager.core.workload import Container, Pod
from cpumanager.errors import (
    CpuManagerError,
    SMTAlignmentError,
    TopologyAffinityError,
    UnexpectedAdmissionError,
)
from cpumanager.ports import NULL_OBSERVER, Observer

__all__ = [
    "AdmissionResult",
    "AdmitCheck",
    "ContainerDecision",
    "HintProvider",
    "TopologyManager",
]

# A later admit handler: None admits, (reason, message) refuses.
AdmitCheck = Callable[[Pod], tuple[str, str] | None]

_REJECT_MESSAGE = "Resources cannot be allocated with Topology locality"

# The kubelet keeps the reason of errors that carry an admission type; every other error
# (not enough CPUs included) becomes UnexpectedAdmissionError, its text wrapped.
_TYPED_ADMISSION_ERRORS = (SMTAlignmentError, TopologyAffinityError, UnexpectedAdmissionError)


class HintProvider(Protocol):
    """A resource manager that gives hints and allocates (CPU, devices, memory)."""

    @property
    def provider_name(self) -> str: ...

    def topology_hints(self, pod: Pod, container: Container) -> AnyProviderHints: ...

    def pod_topology_hints(self, pod: Pod) -> AnyProviderHints: ...

    def allocate(self, pod: Pod, container: Container) -> object: ...


@dataclass(frozen=True, slots=True)
class ContainerDecision:
    """What admission decided for one container (or, in pod scope, for the pod)."""

    container: str
    provider_hints: tuple[tuple[str, AnyProviderHints], ...]
    merged: TopologyHint
    admitted: bool
    explanation: MergeExplanation | None = None


@dataclass(frozen=True, slots=True)
class AdmissionResult:
    """The pod's admission: admitted, or the kubelet's reason and message."""

    admitted: bool
    reason: str = ""
    message: str = ""
    decisions: tuple[ContainerDecision, ...] = ()
    allocated: dict[str, object] = field(default_factory=dict)


def _container_hints(provider: HintProvider, *, pod: Pod, container: Container) -> AnyProviderHints:
    return provider.topology_hints(pod, container)


class TopologyManager:
    """Admission handler: hints, merge, store the affinity, allocate."""

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
        self._numa_ids = tuple(numa_ids)
        self._distances = distances
        self._providers = list(providers)
        self._observer = observer
        self._clock = clock
        self._affinity: dict[PodUID, dict[ContainerName, TopologyHint]] = {}

    @property
    def config(self) -> TopologyManagerConfig:
        return self._config

    def add_provider(self, provider: HintProvider) -> None:
        self._providers.append(provider)

    def get_affinity(self, pod_uid: PodUID, container_name: ContainerName) -> TopologyHint:
        """The stored hint, or the zero hint (any NUMA node, not preferred)."""
        return self._affinity.get(pod_uid, {}).get(container_name, TopologyHint(None, False))

    def affinity_mask(self, pod_uid: PodUID, container_name: ContainerName) -> NUMAMask | None:
        return self.get_affinity(pod_uid, container_name).mask

    def remove_pod(self, pod_uid: PodUID) -> None:
        self._affinity.pop(pod_uid, None)

    def remove_container(self, pod_uid: PodUID, container_name: ContainerName) -> None:
        containers = self._affinity.get(pod_uid)
        if containers is None:
            return
        containers.pop(container_name, None)
        if not containers:
            del self._affinity[pod_uid]

    # --- admission --------------------------------------------------------------------------

    def _merge(
        self,
        hints: Sequence[AnyProviderHints],
        details: Callable[[], Mapping[str, object]] | None = None,
    ) -> MergeResult:
        """Merge; a non-preferred or widened result is re-explained with numbers.

        ``details`` asks the providers for capacity rules (need and free per node) behind
        their explicit hint lists; it is called only when there is something to explain,
        and it never changes the hint or the decision.
        """
        merged = merge_hints(self._config, self._numa_ids, list(hints), distances=self._distances)
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

    def _details(self, method: str, *args: object) -> dict[str, object]:
        """Capacity rules from the providers that offer them (optional ``hint_details``)."""
        found: dict[str, object] = {}
        for provider in self._providers:
            ask = getattr(provider, method, None)
            if ask is not None:
                found.update(ask(*args))
        return found

    def _collect(
        self, ask: Callable[[HintProvider], AnyProviderHints]
    ) -> tuple[tuple[str, AnyProviderHints], ...]:
        return tuple((p.provider_name, ask(p)) for p in self._providers)

    def admit(self, pod: Pod) -> AdmissionResult:
        """Admit or reject ``pod``; on admission every provider has allocated."""
        start = self._clock() if self._clock else 0.0
        result = self._admit(pod)
        if result.admitted:
            for check in self._later_checks:
                refusal = check(pod)
                if refusal is not None:
                    reason, message = refusal
                    result = replace(result, admitted=False, reason=reason, message=message)
                    break
        duration = (self._clock() - start) if self._clock else 0.0
        if result.admitted:
            self._observer.notify(Admitted(pod.uid, pod.display_name, duration))
        else:
            self._observer.notify(
                Rejected(pod.uid, pod.display_name, result.reason, result.message, duration)
            )
        return result

    def _admit(self, pod: Pod) -> AdmissionResult:
        decisions: list[ContainerDecision] = []
        allocated: dict[str, object] = {}
        policy = self._config.policy
        pod_hint = TopologyHint(None, False)
        if policy != "none" and self._config.scope == "pod":
            asked = self._collect(lambda p: p.pod_topology_hints(pod))
            merged = self._merge(
                [hints for _, hints in asked], partial(self._details, "pod_hint_details", pod)
            )
            decisions.append(
                ContainerDecision("(pod)", asked, merged.hint, merged.admit, merged.explanation)
            )
            if not merged.admit:
                return AdmissionResult(
                    False, "TopologyAffinityError", _REJECT_MESSAGE, tuple(decisions)
                )
            pod_hint = merged.hint
        for container in pod.all_containers():
            if policy != "none" and self._config.scope == "pod":
                # Stored container by container, just before it allocates (kubelet order).
                self._store(pod.uid, container.name, pod_hint)
            if policy != "none" and self._config.scope == "container":
                asked = self._collect(partial(_container_hints, pod=pod, container=container))
                merged = self._merge(
                    [hints for _, hints in asked],
                    partial(self._details, "hint_details", pod, container),
                )
                decisions.append(
                    ContainerDecision(
                        container.name, asked, merged.hint, merged.admit, merged.explanation
                    )
                )
                if not merged.admit:
                    return AdmissionResult(
                        False, "TopologyAffinityError", _REJECT_MESSAGE, tuple(decisions)
                    )
                self._store(pod.uid, container.name, merged.hint)
            for provider in self._providers:
                try:
                    allocated[f"{provider.provider_name}/{container.name}"] = provider.allocate(
                        pod, container
                    )
                except _TYPED_ADMISSION_ERRORS as err:
                    return AdmissionResult(False, err.reason, err.message, tuple(decisions))
                except CpuManagerError as err:
                    return AdmissionResult(
                        False,
                        "UnexpectedAdmissionError",
                        f"Allocate failed due to {err.message}, which is unexpected",
                        tuple(decisions),
                    )
        return AdmissionResult(True, decisions=tuple(decisions), allocated=allocated)

    def _store(self, pod_uid: PodUID, name: ContainerName, hint: TopologyHint) -> None:
        self._affinity.setdefault(pod_uid, {})[name] = hint
