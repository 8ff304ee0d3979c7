"""The keeping switch: with keeping off, the three kept-answer sites do the work and keep
nothing, and give the answers they give with keeping on."""

from __future__ import annotations

from cpumanager.core.allocation import StaticPolicyOptions, take_by_topology
from cpumanager.core.allocation.index import forget_index, topology_index
from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.hints.cpu_hints import generate_cpu_hints, mask_table
from cpumanager.core.hints.hint import TopologyHint
from cpumanager.core.kept import KEEP, answers_kept
from cpumanager.core.merge import policies
from cpumanager.core.merge.options import NUMAInfo
from cpumanager.presets import synthetic


def test_keeping_off_keeps_nothing_and_answers_the_same() -> None:
    topology = synthetic(sockets=2, numa_per_socket=2, cores_per_numa=4, threads=2)
    forget_index(topology)
    free = CPUSet.parse("1-7,9-15,17-31")
    options = StaticPolicyOptions()
    with answers_kept(False):
        assert KEEP.on is False
        took = take_by_topology(topology, free, 6, options)
        hints = generate_cpu_hints(topology, available=free, reusable=CPUSet(), count=6)
        assert topology_index(topology).answers == {}
        table = mask_table(topology)
        assert table is None or table.answers == {}
    assert KEEP.on is True
    assert take_by_topology(topology, free, 6, options) == took
    assert topology_index(topology).answers  # kept now
    assert generate_cpu_hints(topology, available=free, reusable=CPUSet(), count=6) == hints


def test_short_merges_keep_nothing_with_keeping_off() -> None:
    numa = NUMAInfo.of((0, 1))
    hints = (TopologyHint(NUMAMask([0]), True), TopologyHint(NUMAMask([0, 1]), False))
    providers = [{"cpu": hints}]
    policies._SMALL_ANSWERS.clear()
    with answers_kept(False):
        off = policies.merge("best-effort", numa, providers)
    assert policies._SMALL_ANSWERS == {}
    on = policies.merge("best-effort", numa, providers)
    assert policies._SMALL_ANSWERS
    assert (off.hint, off.admit) == (on.hint, on.admit)
