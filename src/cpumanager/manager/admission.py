"""What pod admission returns: the verdict, the decision per container, the allocations.

``pod_admit_result`` is the kubelet's ``admission.GetPodAdmitResult``: an error that carries
an admission reason (SMTAlignmentError, TopologyAffinityError, UnexpectedAdmissionError)
keeps it; every other error, "not enough CPUs" included, becomes UnexpectedAdmissionError
"Allocate failed due to <error>, which is unexpected".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from cpumanager.core.hints.hint import TopologyHint
from cpumanager.core.merge.exact import AnyProviderHints
from cpumanager.core.merge.explain import MergeExplanation
from cpumanager.errors import (
    CpuManagerError,
    SMTAlignmentError,
    TopologyAffinityError,
    UnexpectedAdmissionError,
)

__all__ = [
    "REJECT_MESSAGE",
    "AdmissionResult",
    "ContainerDecision",
    "pod_admit_result",
    "topology_affinity_rejection",
]

# The kubelet's TopologyAffinityError message.
REJECT_MESSAGE = "Resources cannot be allocated with Topology locality"

_TYPED_ADMISSION_ERRORS = (SMTAlignmentError, TopologyAffinityError, UnexpectedAdmissionError)


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


def pod_admit_result(
    err: CpuManagerError, decisions: Sequence[ContainerDecision]
) -> AdmissionResult:
    """The rejection for an allocation error, worded as the kubelet words it."""
    if isinstance(err, _TYPED_ADMISSION_ERRORS):
        return AdmissionResult(False, err.reason, err.message, tuple(decisions))
    return AdmissionResult(
        False,
        "UnexpectedAdmissionError",
        f"Allocate failed due to {err.message}, which is unexpected",
        tuple(decisions),
    )


def topology_affinity_rejection(decisions: Sequence[ContainerDecision]) -> AdmissionResult:
    """The merged hint is not admissible under the policy."""
    return AdmissionResult(False, "TopologyAffinityError", REJECT_MESSAGE, tuple(decisions))
