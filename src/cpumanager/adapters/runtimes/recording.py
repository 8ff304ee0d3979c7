"""RecordingRuntime: the Runtime port for tests, the simulator and dry runs.

It applies nothing. Every ``apply(container_id, cpus)`` call is appended to ``calls`` in
order, successful or not, so a test can assert exactly what the reconcile loop pushed and
how often. Container ids listed in ``fail_for`` make ``apply`` raise RuntimeApplyError
(the call is still recorded), which is how tests exercise the kubelet's "failed update is
retried next pass" rule. ``applied`` keeps the last cpuset that succeeded per container,
what a real runtime would now report for it.
"""

from __future__ import annotations

from collections.abc import Iterable

from cpumanager.core.cpuset import CPUSet
from cpumanager.core.ids import ContainerID
from cpumanager.errors import RuntimeApplyError

__all__ = ["AppliedCall", "RecordingRuntime"]

AppliedCall = tuple[ContainerID, CPUSet]


class RecordingRuntime:
    """Records cpuset updates instead of applying them; can be told to fail some."""

    def __init__(self, *, fail_for: Iterable[str] = ()) -> None:
        self.calls: list[AppliedCall] = []
        self.applied: dict[ContainerID, CPUSet] = {}
        self.fail_for: set[str] = set(fail_for)

    def apply(self, container_id: ContainerID, cpus: CPUSet) -> None:
        """Record the call; raise RuntimeApplyError when ``container_id`` is set to fail."""
        self.calls.append((container_id, cpus))
        if container_id in self.fail_for:
            msg = (
                f"cannot set cpuset {cpus} on container {container_id!r}: injected failure "
                "(listed in fail_for); remove it from fail_for to let updates succeed"
            )
            raise RuntimeApplyError(msg)
        self.applied[container_id] = cpus

    def verify(self, container_id: ContainerID) -> CPUSet | None:
        """The cpuset last applied to ``container_id``, or None if none ever succeeded."""
        return self.applied.get(container_id)

    def calls_for(self, container_id: str) -> list[CPUSet]:
        """Every cpuset pushed to one container, in order (failed attempts included)."""
        return [cpus for cid, cpus in self.calls if cid == container_id]

    def clear(self) -> None:
        """Forget the recorded calls (not the applied sets nor the failure list)."""
        self.calls.clear()
