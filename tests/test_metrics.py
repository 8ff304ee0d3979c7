from __future__ import annotations

from cpumanager.core.events import Admitted, Allocated, PinningFailed, Rejected, Released, Started
from cpumanager.core.ids import ContainerName, PodUID
from cpumanager.metrics import PrometheusObserver
from tests.builders import cpus

P, C = PodUID("p"), ContainerName("c")


def test_pool_gauges_follow_allocations_and_releases() -> None:
    observer = PrometheusObserver(numa_of_cpu=lambda cpu: cpu // 4)
    observer.notify(Started("static", cpus("0-7"), cpus("1-7"), cpus("0"), cpus(""), "new"))
    assert observer.samples()["kubelet_cpu_manager_shared_pool_size_millicores"] == 7000
    observer.notify(Allocated(P, C, cpus("4-5"), cpus("4-5")))
    samples = observer.samples()
    assert samples["kubelet_cpu_manager_shared_pool_size_millicores"] == 5000
    assert samples["kubelet_cpu_manager_exclusive_cpu_allocation_count"] == 2
    assert samples['kubelet_cpu_manager_allocation_per_numa{numa_node="1"}'] == 2
    assert samples["kubelet_cpu_manager_pinning_requests_total"] == 1
    observer.notify(Released(P, C, cpus("4-5"), cpus("4-5"), "stale"))
    samples = observer.samples()
    assert samples["kubelet_cpu_manager_shared_pool_size_millicores"] == 7000
    assert samples['kubelet_cpu_manager_allocation_per_numa{numa_node="1"}'] == 0


def test_errors_and_admissions_are_counted() -> None:
    observer = PrometheusObserver()
    observer.notify(PinningFailed(P, C, "SMTAlignmentError", "odd"))
    observer.notify(Admitted(P, "p", 0.002))
    observer.notify(Rejected(P, "p", "TopologyAffinityError", "no", 0.001))
    samples = observer.samples()
    assert samples["kubelet_cpu_manager_pinning_errors_total"] == 1
    assert samples["kubelet_topology_manager_admission_requests_total"] == 2
    assert samples["kubelet_topology_manager_admission_errors_total"] == 1
    assert samples["kubelet_topology_manager_admission_duration_ms_count"] == 2
    assert b"kubelet_cpu_manager_pinning_requests_total 1.0" in observer.exposition()
