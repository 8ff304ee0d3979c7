"""What the simulated kubelet is wired to: an event collector, a runtime, a clock."""

from __future__ import annotations

from cpumanager.core.cpuset import CPUSet
from cpumanager.core.events import ManagerEvent
from cpumanager.core.ids import ContainerID
from cpumanager.metrics import PrometheusObserver

__all__ = ["AppliedCpusets", "Collector", "FakeClock"]


class Collector:
    """Observer fan-out: remember events for the report, feed the metrics."""

    def __init__(self, metrics: PrometheusObserver) -> None:
        self.events: list[ManagerEvent] = []
        self._metrics = metrics

    def notify(self, event: ManagerEvent) -> None:
        self.events.append(event)
        self._metrics.notify(event)

    def drain(self) -> list[ManagerEvent]:
        found, self.events = self.events, []
        return found


class AppliedCpusets:
    """The simulated container runtime: it accepts every cpuset and remembers the last."""

    def __init__(self) -> None:
        self.current: dict[ContainerID, CPUSet] = {}

    def apply(self, container_id: ContainerID, cpus: CPUSet) -> None:
        self.current[container_id] = cpus


class FakeClock:
    """Admission timing for the metrics: the simulator moves it, nothing else does."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now
