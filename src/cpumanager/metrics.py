"""Prometheus metrics with the kubelet's names, fed by manager events.

The series and their update rules are the kubelet's (CPU manager: pinning requests and
errors, shared pool size in millicores, exclusive CPU count, allocation per NUMA node;
topology manager: admission requests, errors and duration). Each observer owns its own
registry, so several managers (a simulator running many scenarios) never share counters.
"""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from cpumanager.core.cpuset import CPUSet
from cpumanager.core.events import (
    Admitted,
    Allocated,
    ManagerEvent,
    PinningFailed,
    Rejected,
    Released,
    Started,
)

__all__ = ["PrometheusObserver"]

_DURATION_BUCKETS_MS = (0.05, 0.1, 0.5, 1, 5, 10, 50, 100, 500, 1000, 5000, 10000)


class PrometheusObserver:
    """Observer port implementation that keeps the kubelet's CPU/topology manager series."""

    def __init__(
        self,
        numa_of_cpu: Callable[[int], int] | None = None,
        registry: CollectorRegistry | None = None,
    ) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self._numa_of_cpu = numa_of_cpu
        self._reserved = CPUSet()
        self._exclusive = CPUSet()
        self._shared = CPUSet()
        self._numa_seen: set[int] = set()
        reg = self.registry
        self.pinning_requests = Counter(
            "kubelet_cpu_manager_pinning_requests",
            "Number of cpu core allocations which required pinning.",
            registry=reg,
        )
        self.pinning_errors = Counter(
            "kubelet_cpu_manager_pinning_errors",
            "Number of cpu core allocations which required pinning failed.",
            registry=reg,
        )
        self.shared_pool = Gauge(
            "kubelet_cpu_manager_shared_pool_size_millicores",
            "Size of the shared pool of CPUs in millicores.",
            registry=reg,
        )
        self.exclusive_count = Gauge(
            "kubelet_cpu_manager_exclusive_cpu_allocation_count",
            "The total number of CPUs exclusively allocated to containers.",
            registry=reg,
        )
        self.per_numa = Gauge(
            "kubelet_cpu_manager_allocation_per_numa",
            "Number of CPUs allocated per NUMA node.",
            ["numa_node"],
            registry=reg,
        )
        self.admission_requests = Counter(
            "kubelet_topology_manager_admission_requests",
            "Number of admission requests where resources have to be aligned.",
            registry=reg,
        )
        self.admission_errors = Counter(
            "kubelet_topology_manager_admission_errors",
            "Number of admission request failures where resources could not be aligned.",
            registry=reg,
        )
        self.admission_duration = Histogram(
            "kubelet_topology_manager_admission_duration_ms",
            "Duration in milliseconds to serve a pod admission request.",
            buckets=_DURATION_BUCKETS_MS,
            registry=reg,
        )

    def notify(self, event: ManagerEvent) -> None:
        """Update the series for one event (Observer port)."""
        match event:
            case Started():
                self._reserved = event.reserved
                self._exclusive = event.exclusive
                self._shared = event.default_cpuset - event.reserved
                self._publish_pools()
            case Allocated():
                self.pinning_requests.inc()
                self._exclusive = self._exclusive | event.newly_exclusive
                self._shared = self._shared - event.newly_exclusive
                self._publish_pools()
            case PinningFailed():
                self.pinning_requests.inc()
                self.pinning_errors.inc()
            case Released():
                self._exclusive = self._exclusive - event.returned
                self._shared = self._shared | (event.returned - self._reserved)
                self._publish_pools()
            case Admitted():
                self.admission_requests.inc()
                self.admission_duration.observe(event.duration_s * 1000)
            case Rejected():
                self.admission_requests.inc()
                self.admission_errors.inc()
                self.admission_duration.observe(event.duration_s * 1000)
            case _:
                pass

    def _publish_pools(self) -> None:
        self.shared_pool.set(len(self._shared) * 1000)
        self.exclusive_count.set(len(self._exclusive))
        if self._numa_of_cpu is None:
            return
        counts: dict[int, int] = {}
        for cpu in self._exclusive:
            node = self._numa_of_cpu(cpu)
            counts[node] = counts.get(node, 0) + 1
        self._numa_seen.update(counts)
        for node in sorted(self._numa_seen):  # nodes that dropped to zero read 0, not stale
            self.per_numa.labels(str(node)).set(counts.get(node, 0))

    def samples(self) -> dict[str, float]:
        """Every sample as ``name{labels}`` -> value (for reports and tests)."""
        values: dict[str, float] = {}
        for family in self.registry.collect():
            for sample in family.samples:
                if sample.name.endswith("_created"):
                    continue
                labels = ",".join(f'{k}="{v}"' for k, v in sorted(sample.labels.items()))
                values[f"{sample.name}{{{labels}}}" if labels else sample.name] = sample.value
        return values

    def exposition(self) -> bytes:
        """The Prometheus text format, as an agent's /metrics would serve it."""
        return generate_latest(self.registry)
