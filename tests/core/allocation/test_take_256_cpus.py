"""Answers on 2-socket, 256-CPU machines stay what the exhaustive combination walk gave.

``tests/data/take_256_cpus.json`` was recorded with the implementation that scored every
NUMA combination of the distributed search; the search now scores one combination per class
of interchangeable ones (``core/allocation/combos.py``). Same machines as
``bench/bench_take.py``, five free-CPU patterns, packed and distributed options.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache

import pytest

from cpumanager.core.allocation import StaticPolicyOptions, take_by_topology
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.topology import CPUTopology
from cpumanager.presets import synthetic
from tests.kubelet_vectors import DATA

PATTERNS: dict[str, Callable[[int], bool]] = {
    "free": lambda cpu: True,
    "mod7": lambda cpu: cpu % 7 not in (0, 3),
    "thirds": lambda cpu: cpu % 3 != 0,
    "hash": lambda cpu: (cpu * 37 + 11) % 13 > 3,
}
_DIST = {"distribute_cpus_across_numa": True}
OPTIONS = {
    "packed": StaticPolicyOptions(),
    "uncore": StaticPolicyOptions(prefer_align_cpus_by_uncorecache=True),
    "spread": StaticPolicyOptions(distribute_cpus_across_cores=True),
    "dist": StaticPolicyOptions(**_DIST),
    "dist_fix": StaticPolicyOptions(**_DIST, distributed_combination_fix=True),
    "dist_pcpus": StaticPolicyOptions(**_DIST, full_pcpus_only=True),
    "dist_align": StaticPolicyOptions(**_DIST, align_by_socket=True),
    "dist_align_pcpus": StaticPolicyOptions(**_DIST, align_by_socket=True, full_pcpus_only=True),
}
ROWS = json.loads((DATA / "take_256_cpus.json").read_text())["rows"]


@cache
def _machine(numa_nodes: int, l3_per_numa: int) -> CPUTopology:
    return synthetic(
        sockets=2,
        numa_per_socket=numa_nodes // 2,
        cores_per_numa=128 // numa_nodes,
        threads=2,
        l3_per_numa=l3_per_numa,
    )


@pytest.mark.parametrize(
    ("numa_nodes", "l3_per_numa", "pattern", "option"),
    sorted({tuple(row[:4]) for row in ROWS}),
)
def test_same_cpus_as_the_exhaustive_walk(
    numa_nodes: int, l3_per_numa: int, pattern: str, option: str
) -> None:
    topology = _machine(numa_nodes, l3_per_numa)
    available = CPUSet(cpu for cpu in topology.all_cpus if PATTERNS[pattern](cpu))
    rows = [row for row in ROWS if row[:4] == [numa_nodes, l3_per_numa, pattern, option]]
    got = {
        row[4]: str(take_by_topology(topology, available, row[4], OPTIONS[option])) for row in rows
    }
    assert got == {row[4]: row[5] for row in rows}
