"""Node admission of pods with pod-level resources, with the PodLevelResources gate on
(the 1.34 default: admitted, shared CPUs, no memory pinning) and off (refused by the
kubelet's pod-features admit handler, which runs after the resource managers allocated).

Machine: two sockets, one NUMA node each, four cores of two threads; CPU 0 is reserved.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from cpumanager.adapters.memory_store import InMemoryStore
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.events import Admitted, Rejected
from cpumanager.core.ids import ContainerName, PodUID
from cpumanager.core.workload import Pod
from cpumanager.formats.kubelet_config import KubeletConfig
from cpumanager.manager.node import Node
from cpumanager.presets import synthetic
from tests.builders import container

MACHINE = synthetic(sockets=2, cores_per_numa=4, threads=2)
MEMORY: dict[str, Any] = {
    "memoryManagerPolicy": "Static",
    "kubeReserved": {"memory": "512Mi"},
    "reservedMemory": [{"numaNode": 0, "limits": {"memory": "612Mi"}}],
}
GI = Fraction(2**30)


class Events:
    def __init__(self) -> None:
        self.seen: list[object] = []

    def notify(self, event: object) -> None:
        self.seen.append(event)


def node(gate: bool | None, policy: str = "single-numa-node", scope: str = "container",
         observer: Events | None = None) -> Node:  # fmt: skip
    fields: dict[str, Any] = {
        "cpuManagerPolicy": "static",
        "reservedSystemCPUs": "0",
        "topologyManagerPolicy": policy,
        "topologyManagerScope": scope,
        **MEMORY,
    }
    if gate is not None:
        fields["featureGates"] = {"PodLevelResources": gate}
    built = Node(
        topology=MACHINE,
        kubelet=KubeletConfig.from_mapping(fields),
        store=InMemoryStore(),
        observer=observer or Events(),
    )
    built.start(active_pods=list)
    return built


def pod_level(uid: str = "p", cpu: str = "2") -> Pod:
    """A Guaranteed pod (pod level and containers) with an integral CPU request."""
    amounts = {"cpu": Fraction(cpu), "memory": GI}
    return Pod(PodUID(uid), name=uid, containers=(container("app", cpu),),
               requests=amounts, limits=amounts)  # fmt: skip


@pytest.mark.parametrize("scope", ["container", "pod"])
@pytest.mark.parametrize("gate", [None, True], ids=["default", "on"])
def test_gate_on_admits_with_shared_cpus_and_no_hints(gate: bool | None, scope: str) -> None:
    n = node(gate, scope=scope)
    result = n.admit(pod_level())
    assert result.admitted
    assert result.allocated["cpu/app"] == n.snapshot().cpu.default_cpuset
    assert n.snapshot().cpu.cpuset_of(PodUID("p"), ContainerName("app")) is None
    assert result.allocated["memory/app"] == ()
    for decision in result.decisions:
        assert dict(decision.provider_hints) == {"cpu": {}, "memory": {}}
        assert decision.merged.mask is None  # nobody expressed a preference


def test_gate_off_refuses_after_the_resource_managers_allocated() -> None:
    events = Events()
    n = node(False, observer=events)
    result = n.admit(pod_level())
    assert not result.admitted
    assert (result.reason, result.message) == (
        "PodLevelResourcesNotSupported",
        "PodLevelResources feature gate is disabled",
    )
    # The containers decided (gate off): exclusive CPUs were taken before the refusal and
    # are left to stale-state removal, as for any rejected pod.
    held = n.snapshot().cpu.cpuset_of(PodUID("p"), ContainerName("app"))
    assert held is not None
    assert len(held) == 2
    assert [type(e) for e in events.seen if isinstance(e, Admitted | Rejected)] == [Rejected]
    assert n.admit(Pod(PodUID("q"), name="q", containers=(container("app", "1"),))).admitted
    assert n.snapshot().cpu.cpuset_of(PodUID("p"), ContainerName("app")) is None


def test_gate_off_keeps_an_earlier_topology_refusal() -> None:
    result = node(False).admit(pod_level(cpu="9"))  # more than one NUMA node holds
    assert result.reason == "TopologyAffinityError"


def test_gate_off_admits_pods_without_pod_level_resources() -> None:
    result = node(False).admit(Pod(PodUID("p"), name="p", containers=(container("app", "2"),)))
    assert result.admitted
    assert len(result.allocated["cpu/app"]) == 2
    assert isinstance(result.allocated["cpu/app"], CPUSet)
