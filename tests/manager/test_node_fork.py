"""Node.fork: a started copy gives the decisions a restart on the same state gives, and
admission without explanations decides the same; neither touches the node forked from.

Each case builds a node from a random configuration (topology policy and scope, memory
manager, devices, full-pcpus-only), admits random running pods, then admits random new pods
three ways: on a fork (explanations off), on a fork (explanations on) and on a node restarted
from the same state and checkpoint bytes (``Node(state=...)`` and ``start``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cpumanager.adapters.memory_store import InMemoryStore
from cpumanager.core.devices import Device
from cpumanager.core.events import ManagerEvent, Started
from cpumanager.core.workload import Pod
from cpumanager.formats.kubelet_config import KubeletConfig
from cpumanager.manager.admission import AdmissionResult
from cpumanager.manager.node import Node, NodeResources
from cpumanager.presets import synthetic
from tests.builders import container, pod

MACHINE = synthetic(sockets=2, numa_per_socket=2, cores_per_numa=3, threads=2)
GPUS = {"gpu": (Device("g0", (1,)), Device("g1", (3,)), Device("g2", (3,)))}
MEMORY: dict[str, Any] = {
    "memoryManagerPolicy": "Static",
    "kubeReserved": {"memory": "512Mi"},
    "reservedMemory": [{"numaNode": 0, "limits": {"memory": "612Mi"}}],
}


class Recorder:
    def __init__(self) -> None:
        self.events: list[ManagerEvent] = []

    def notify(self, event: ManagerEvent) -> None:
        self.events.append(event)


@st.composite
def configs(draw: st.DrawFn) -> KubeletConfig:
    fields: dict[str, Any] = {
        "cpuManagerPolicy": "static",
        "reservedSystemCPUs": draw(st.sampled_from(["0", "0,12"])),
        "topologyManagerPolicy": draw(
            st.sampled_from(["none", "best-effort", "restricted", "single-numa-node"])
        ),
        "topologyManagerScope": draw(st.sampled_from(["container", "pod"])),
    }
    if draw(st.booleans()):
        fields.update(MEMORY)
    if draw(st.integers(0, 3)) == 0:
        fields["cpuManagerPolicyOptions"] = {"full-pcpus-only": "true"}
    return KubeletConfig.from_mapping(fields)


@st.composite
def pods(draw: st.DrawFn, uid: str) -> Pod:
    def one(name: str) -> Any:
        cpu = draw(st.sampled_from([None, "500m", "1", "2", "3", "4", "7"]))
        gpu = draw(st.sampled_from([0, 0, 1]))
        return container(name, cpu, memory=draw(st.sampled_from(["1Gi", "3Gi"])), gpu=gpu)

    apps = [one(f"c{i}") for i in range(draw(st.integers(1, 3)))]
    inits = tuple(one(f"i{i}") for i in range(draw(st.integers(0, 1))))
    return pod(uid, *apps, init=inits)


def _decisions(result: AdmissionResult) -> tuple[object, ...]:
    return (
        result.admitted,
        result.reason,
        result.message,
        result.allocated,
        tuple((d.container, d.merged, d.admitted, d.provider_hints) for d in result.decisions),
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    configs(),
    st.booleans(),
    st.lists(pods("running"), max_size=4),
    st.lists(pods("new"), min_size=1, max_size=3),
)
def test_fork_decides_as_a_restart_and_leaves_the_node_alone(
    config: KubeletConfig, devices: bool, running: list[Pod], new: list[Pod]
) -> None:
    resources = NodeResources(devices=GPUS if devices else {})
    store = InMemoryStore()
    base = Node(topology=MACHINE, kubelet=config, store=store, resources=resources)
    active: list[Pod] = []
    base.start(active_pods=lambda: active)
    for index, drawn in enumerate(running):
        the_pod = pod(f"running-{index}", *drawn.containers, init=drawn.init_containers)
        active.append(the_pod)
        if not base.admit(the_pod).admitted:
            active.pop()
    base.remove_stale_state()  # rejected pods' CPUs go back, as at a restart
    state, data = base.snapshot(), store.data

    lean_pods, full_pods, restart_pods = list(active), list(active), list(active)
    lean = base.fork(store=InMemoryStore(data), active_pods=lambda: lean_pods)
    heard = Recorder()
    full_store = InMemoryStore(data)
    full = base.fork(store=full_store, active_pods=lambda: full_pods, observer=heard)
    restarted_events = Recorder()
    restart_store = InMemoryStore(data)
    restart = Node(
        topology=MACHINE,
        kubelet=config,
        store=restart_store,
        resources=resources,
        observer=restarted_events,
        state=state,
    )
    restart.start(active_pods=lambda: restart_pods)
    # all of it but the reusable init memory, which the kubelet keeps only in its process
    memory = state.memory.without_reuse() if state.memory is not None else None
    assert restart.snapshot() == replace(state, memory=memory)
    restarted_events.events = [e for e in restarted_events.events if not isinstance(e, Started)]

    for index, drawn in enumerate(new):
        the_pod = pod(f"new-{index}", *drawn.containers, init=drawn.init_containers)
        for pods_list in (lean_pods, full_pods, restart_pods):
            pods_list.append(the_pod)
        want = restart.admit(the_pod)
        got_full = full.admit(the_pod)
        got_lean = lean.admit(the_pod, explain=False)
        assert _decisions(got_full) == _decisions(want)
        assert _decisions(got_lean) == _decisions(want)
        assert [d.explanation for d in got_full.decisions] == [
            d.explanation for d in want.decisions
        ]
        assert all(d.explanation is None for d in got_lean.decisions)
        for the_node in (lean, full):
            for c in the_pod.all_containers():
                placed = the_node.placement(the_pod, c)
                assert placed == restart.placement(the_pod, c)
        if not want.admitted:
            for pods_list in (lean_pods, full_pods, restart_pods):
                pods_list.pop()

    assert lean.snapshot() == full.snapshot() == restart.snapshot()
    assert full_store.data == restart_store.data
    assert full_store.history == restart_store.history
    assert heard.events == restarted_events.events
    assert base.snapshot() == state
    assert store.data == data
