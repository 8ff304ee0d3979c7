"""StateSnapshot: the CPU manager's state as one immutable value.

The kubelet mutates a State object in place; we return a new snapshot from every change so
the manager can persist it first and publish it second (a failed write leaves the old
snapshot in force). Assignments are keyed by pod UID, then container name, as in the V2
checkpoint.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from cpumanager.core.cpuset import CPUSet
from cpumanager.core.ids import ContainerKey, ContainerName, PodUID

__all__ = ["Assignments", "StateSnapshot"]

Assignments = Mapping[PodUID, Mapping[ContainerName, CPUSet]]


def _freeze(assignments: Assignments) -> Mapping[PodUID, Mapping[ContainerName, CPUSet]]:
    return MappingProxyType(
        {
            pod: MappingProxyType(dict(sorted(containers.items())))
            for pod, containers in sorted(assignments.items())
        }
    )


@dataclass(frozen=True, slots=True)
class StateSnapshot:
    """Policy name, the default (shared) CPU set and the exclusive assignments."""

    policy_name: str
    default_cpuset: CPUSet = field(default_factory=CPUSet)
    assignments: Assignments = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        object.__setattr__(self, "assignments", _freeze(self.assignments))

    @classmethod
    def from_sorted(
        cls,
        policy_name: str,
        default_cpuset: CPUSet,
        assignments: Mapping[PodUID, Mapping[ContainerName, CPUSet]],
    ) -> StateSnapshot:
        """Adopt ``assignments`` as they are, without the constructor's sorted copy.

        For a checkpoint reader that has proved both levels sorted and built read-only
        mappings that nothing else holds: a restore of 1,000 containers spent a tenth of
        its time re-sorting what Go's JSON had already written in order. The changes below
        use it too, keeping that form without redoing it for every pod at every change. The
        result equals what the constructor builds from the same values.
        """
        snapshot = object.__new__(cls)
        _set_policy_name(snapshot, policy_name)  # the slots' own setters: half the cost of
        _set_default_cpuset(snapshot, default_cpuset)  # object.__setattr__ (a restore makes
        _set_assignments(snapshot, assignments)  # one per call)
        return snapshot

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, StateSnapshot):
            return NotImplemented
        if self is other:
            return True
        # read-only mappings compare as the dicts they wrap
        return (
            self.policy_name == other.policy_name
            and self.default_cpuset == other.default_cpuset
            and self.assignments == other.assignments
        )

    def __hash__(self) -> int:
        return hash((self.policy_name, self.default_cpuset, len(self.assignments)))

    # --- queries ------------------------------------------------------------------------

    def plain_assignments(self) -> dict[PodUID, dict[ContainerName, CPUSet]]:
        return {pod: dict(containers) for pod, containers in self.assignments.items()}

    def cpuset_of(self, pod_uid: PodUID, container_name: ContainerName) -> CPUSet | None:
        """The container's exclusive CPUs, or None when it has none."""
        containers = self.assignments.get(pod_uid)
        if containers is None:
            return None
        return containers.get(container_name)

    def cpuset_or_default(self, pod_uid: PodUID, container_name: ContainerName) -> CPUSet:
        found = self.cpuset_of(pod_uid, container_name)
        return self.default_cpuset if found is None else found

    def container_keys(self) -> Iterator[ContainerKey]:
        for pod, containers in self.assignments.items():
            for name in containers:
                yield ContainerKey(pod, name)

    def assigned_cpus(self) -> CPUSet:
        bits = 0
        for containers in self.assignments.values():
            for cpus in containers.values():
                bits |= cpus.bits
        return CPUSet.from_bits(bits)

    def pod_cpus(self, pod_uid: PodUID) -> CPUSet:
        """Union of every exclusive set held by the pod's containers."""
        return CPUSet().union(*self.assignments.get(pod_uid, {}).values())

    # --- changes (each returns a new snapshot) ------------------------------------------

    def with_default(self, cpus: CPUSet) -> StateSnapshot:
        return StateSnapshot.from_sorted(self.policy_name, cpus, self.assignments)

    def with_assignment(
        self,
        pod_uid: PodUID,
        container_name: ContainerName,
        cpus: CPUSet,
        *,
        default: CPUSet | None = None,
    ) -> StateSnapshot:
        """Set (or replace) one container's exclusive set; the default set becomes
        ``default`` when given (one new snapshot for an allocation), else is unchanged."""
        held = self.assignments.get(pod_uid)
        if held is None:
            containers: dict[ContainerName, CPUSet] = {container_name: cpus}
        else:
            containers = dict(held)
            containers[container_name] = cpus
            if len(containers) > len(held):
                containers = dict(sorted(containers.items()))
        pods = dict(self.assignments)
        pods[pod_uid] = MappingProxyType(containers)
        if held is None:
            pods = dict(sorted(pods.items()))
        return StateSnapshot.from_sorted(
            self.policy_name,
            self.default_cpuset if default is None else default,
            MappingProxyType(pods),
        )

    def without_assignment(self, pod_uid: PodUID, container_name: ContainerName) -> StateSnapshot:
        """Drop one container's entry (and its pod when none is left); default unchanged.

        As the kubelet's ``Delete``: a pod left with no containers goes, even when the named
        container was not there (a restored ``"pod": {}`` entry is dropped this way).
        """
        plain = self.plain_assignments()
        containers = plain.get(pod_uid)
        if containers is None:
            return self
        containers.pop(container_name, None)
        if not containers:
            del plain[pod_uid]
        elif len(containers) == len(self.assignments[pod_uid]):
            return self
        return StateSnapshot(self.policy_name, self.default_cpuset, plain)

    def cleared(self) -> StateSnapshot:
        return StateSnapshot(self.policy_name)

    # --- invariants ---------------------------------------------------------------------

    def invariant_violations(
        self, all_cpus: CPUSet, *, reserved: CPUSet | None = None, strict_reservation: bool = False
    ) -> tuple[str, ...]:
        """Every broken invariant, in words; empty when the snapshot is sound.

        No CPU in two assignments or in an assignment and the default set; default plus
        assignments is exactly the machine (minus reserved CPUs under strict reservation);
        reserved CPUs are never assigned exclusively.
        """
        problems: list[str] = []
        seen = CPUSet()
        for pod_uid in self.assignments:
            # Containers of one pod may share CPUs (app containers reuse init containers'
            # CPUs, as the kubelet does); different pods never may.
            pod_cpus = self.pod_cpus(pod_uid)
            overlap = seen & pod_cpus
            if overlap:
                problems.append(f"pod {pod_uid}: CPUs {overlap} are also assigned to another pod")
            seen = seen | pod_cpus
        for key in self.container_keys():
            cpus = self.assignments[key.pod_uid][key.container_name]
            if not cpus:
                problems.append(f"pod {key.pod_uid} container {key.container_name}: empty set")
            if cpus & self.default_cpuset:
                problems.append(
                    f"pod {key.pod_uid} container {key.container_name}: CPUs "
                    f"{cpus & self.default_cpuset} are also in the default set"
                )
            if reserved is not None and cpus & reserved:
                problems.append(
                    f"pod {key.pod_uid} container {key.container_name}: reserved CPUs "
                    f"{cpus & reserved} are assigned exclusively"
                )
        expected = all_cpus
        if strict_reservation and reserved is not None:
            expected = all_cpus - reserved
        union = seen | self.default_cpuset
        if union != expected:
            problems.append(
                f"default set plus assignments is {union!s:s} but the machine's CPUs are "
                f"{expected!s:s}"
            )
        return tuple(problems)


# The frozen dataclass's slot descriptors: from_sorted fills a new snapshot through them.
_set_policy_name = StateSnapshot.__dict__["policy_name"].__set__
_set_default_cpuset = StateSnapshot.__dict__["default_cpuset"].__set__
_set_assignments = StateSnapshot.__dict__["assignments"].__set__
