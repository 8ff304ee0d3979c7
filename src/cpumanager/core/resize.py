"""In-place pod resize on a node with the static CPU policy or the Static memory manager.

The kubelet's resize admission (``pkg/kubelet/allocation``, ``canResizePod``) refuses, for a
Guaranteed pod, a resize the resource managers cannot apply: the pod's resize is marked
``PodResizePending`` with reason ``Infeasible`` and the release's message (core/versions.py,
keys ``text.resize-*``). Which resizes that covers depends on the release (key
``resize.static-cpu``):

* before 1.27 there is no in-place resize; 1.27 .. 1.31 only with the alpha gate, and no
  check: the CPU quota changes but the exclusive CPU set stays as allocated;
* 1.32 (still behind the alpha gate) and 1.33: every resize of a Guaranteed pod on such a
  node is Infeasible; ``InPlacePodVerticalScalingExclusiveCPUs`` (alpha) skips both checks;
* 1.34 on: only when that resource's request changes (``guaranteedPodResourceResizeRequired``);
  ``InPlacePodVerticalScalingExclusiveCPUs`` skips the CPU check,
  ``InPlacePodVerticalScalingExclusiveMemory`` (alpha) the memory one.

A skipped CPU check does not resize the CPU set. Exclusive-CPU resizing itself (KEP-5554) is
not in a release the sources show: with it asked for, the resize is Infeasible with the same
message. A pod in the shared pool changes only its quota; the pool's CPUs and its other users
stay.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from cpumanager.core.versions import KubeletProfile

__all__ = ["CPU_INFEASIBLE", "MEMORY_INFEASIBLE", "ResizeVerdict", "resize_verdict"]

CPU_INFEASIBLE: Final = (
    'Resize is infeasible for Guaranteed Pods alongside CPU Manager policy "static"'
)
MEMORY_INFEASIBLE: Final = (
    'Resize is infeasible for Guaranteed Pods alongside Memory Manager policy "Static"'
)

Outcome = Literal["applied", "infeasible", "unsupported"]


@dataclass(frozen=True, slots=True)
class ResizeVerdict:
    """What the kubelet does with the resize: its reason and message when it refuses."""

    outcome: Outcome
    reason: str = ""
    message: str = ""
    cpuset_changes: bool = False
    note: str = ""


def resize_verdict(
    profile: KubeletProfile,
    *,
    guaranteed: bool,
    cpu_policy: str,
    memory_policy: str = "None",
    cpu_changed: bool,
    memory_changed: bool = False,
) -> ResizeVerdict:
    """The kubelet ``profile``'s answer to resizing one container of a pod."""
    gate_level = profile.gate_levels.get("InPlacePodVerticalScaling", "absent")
    if gate_level == "absent" or not profile.gates.get("InPlacePodVerticalScaling", False):
        state = "does not exist" if gate_level == "absent" else "is off"
        message = f"InPlacePodVerticalScaling {state} in kubelet {profile.name}: no resize"
        return ResizeVerdict("unsupported", message=message)
    rule = profile.resize_static_cpu
    exclusive_gate = profile.gates.get("InPlacePodVerticalScalingExclusiveCPUs", False)
    # Before 1.34 the CPU gate skipped the memory check too; then it got its own gate.
    memory_gate = (
        exclusive_gate
        if rule == "refuse-guaranteed"
        else profile.gates.get("InPlacePodVerticalScalingExclusiveMemory", False)
    )
    if guaranteed and cpu_policy == "static" and not exclusive_gate:
        refuses = rule == "refuse-guaranteed" or (rule == "refuse-request-change" and cpu_changed)
        if refuses:
            text = profile.resize_cpu_text or CPU_INFEASIBLE
            return ResizeVerdict("infeasible", "Infeasible", text)
    if guaranteed and memory_policy == "Static" and not memory_gate:
        refuses = rule == "refuse-guaranteed" or (
            rule == "refuse-request-change" and memory_changed
        )
        if refuses:
            text = profile.resize_memory_text or MEMORY_INFEASIBLE
            return ResizeVerdict("infeasible", "Infeasible", text)
    if guaranteed and cpu_policy == "static" and cpu_changed:
        note = (
            "InPlacePodVerticalScalingExclusiveCPUs skips the check; the CPU set is not resized"
            if exclusive_gate
            else "no check in this release: the quota changes, the exclusive CPU set does not"
        )
        return ResizeVerdict("applied", note=note)
    note = "shared pool: only the quota changes; the pool's CPUs and users stay"
    return ResizeVerdict("applied", note=note if cpu_changed else "")
