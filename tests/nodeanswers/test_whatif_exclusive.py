"""exclusive_cpus reads the CPU manager's state directly: the same CPUs as the union of the
containers' placements that are exclusive (its definition)."""

from __future__ import annotations

from hypothesis import given, settings

from cpumanager.core.cpuset import CPUSet
from cpumanager.core.workload import Pod
from cpumanager.nodeanswers.fit import node_allocatable
from cpumanager.nodeanswers.restore import Restored, restore_node
from cpumanager.nodeanswers.whatif import admitted_quietly, exclusive_cpus
from cpumanager.nodeview.snapshot import NodeSnapshot
from tests.extender.strategies import nodes, pods


def _by_placement(restored: Restored, pod: Pod) -> CPUSet:
    held = CPUSet()
    for container in pod.all_containers():
        placed = restored.node.placement(pod, container)
        if placed.exclusive:
            held = held | placed.cpus
    return held


@settings(max_examples=60, deadline=None)
@given(node=nodes(), first=pods("p1"), second=pods("p2"))
def test_exclusive_cpus_equal_the_exclusive_placements(
    node: NodeSnapshot, first: Pod, second: Pod
) -> None:
    restored = restore_node(node)
    allocatable = node_allocatable(restored.topology, restored.kubelet, hugepages={}, devices=None)
    admitted_quietly(restored, [first, second], allocatable)
    # admitted, refused (a refused pod keeps what it was handed) and running pods
    for pod in (first, second, *restored.active[:2]):
        assert exclusive_cpus(restored, pod) == _by_placement(restored, pod)
