"""An equal machine as another object: the extender holds one topology per node, so answers
kept per machine must be found by value, not by identity."""

from __future__ import annotations

from cpumanager.core.topology import CPUTopology


def equal_machine(topology: CPUTopology) -> CPUTopology:
    """A new CPUTopology equal to ``topology``."""
    num_cpus, num_cores, num_sockets, num_numa_nodes, num_uncore_caches = topology.counters()
    twin = CPUTopology(
        topology.cpus.values(),
        numa_nodes=topology.numa_nodes,
        num_cpus=num_cpus,
        num_cores=num_cores,
        num_sockets=num_sockets,
        num_numa_nodes=num_numa_nodes,
        num_uncore_caches=num_uncore_caches,
    )
    assert twin == topology
    assert twin is not topology
    return twin
