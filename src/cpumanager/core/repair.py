"""Recovery without a drain: repair a restored state the kubelet would refuse to start with.

The kubelet's answer to a state that no longer fits the machine (CPUs hot-plugged, the
reservation changed, a crash between its two writes, a hand edit) is "drain the node and
delete the checkpoint". Repair keeps every assignment that is still valid and returns the
rest to the shared pool:

1. Assignments are visited in state order (pod UID, then container name, bytewise).
2. An assignment is dropped if it is empty, uses a CPU that is not online, uses a reserved
   CPU, or shares a CPU with an assignment of another pod that was already kept. Containers
   of one pod may share CPUs (init-container reuse), as the kubelet allows.
3. The default set becomes every online CPU not kept exclusively (minus the reserved CPUs
   under strict reservation), which is exactly what the kubelet's validation demands.
"""

from __future__ import annotations

from cpumanager.core.cpuset import CPUSet
from cpumanager.core.events import StateRepaired
from cpumanager.core.ids import ContainerName, PodUID
from cpumanager.core.state import StateSnapshot

__all__ = ["repair_snapshot"]


def repair_snapshot(
    snapshot: StateSnapshot,
    *,
    all_cpus: CPUSet,
    reserved: CPUSet,
    strict_reservation: bool,
) -> tuple[StateSnapshot, tuple[StateRepaired, ...]]:
    """A state that passes the kubelet's validation, and the changes made to get there."""
    changes: list[StateRepaired] = []
    kept: dict[PodUID, dict[ContainerName, CPUSet]] = {}
    taken_by_other_pods = CPUSet()
    for pod_uid, containers in snapshot.assignments.items():
        pod_cpus = CPUSet()
        for name, cpus in containers.items():
            problem = ""
            if not cpus:
                problem = "its CPU set is empty"
            elif not cpus <= all_cpus:
                problem = f"CPUs {cpus - all_cpus} are not online"
            elif cpus & reserved:
                problem = f"CPUs {cpus & reserved} are reserved"
            elif cpus & taken_by_other_pods:
                problem = f"CPUs {cpus & taken_by_other_pods} belong to another pod"
            if problem:
                changes.append(
                    StateRepaired(
                        f"pod {pod_uid} container {name}: assignment {cpus} dropped because "
                        f"{problem}; the container now runs on the shared pool",
                        pod_uid,
                        name,
                        cpus,
                    )
                )
                continue
            kept.setdefault(pod_uid, {})[name] = cpus
            pod_cpus = pod_cpus | cpus
        taken_by_other_pods = taken_by_other_pods | pod_cpus
    exclusive = CPUSet().union(*(c for pod in kept.values() for c in pod.values()))
    default = all_cpus - exclusive
    if strict_reservation:
        default = default - reserved
    if default != snapshot.default_cpuset:
        changes.append(
            StateRepaired(
                f"default CPU set changed from {snapshot.default_cpuset!s:s} to {default!s:s} "
                "to match the online CPUs and the kept assignments"
            )
        )
    return StateSnapshot(snapshot.policy_name, default, kept), tuple(changes)
