"""Explanations: who blocks a merge, and the numbers behind it (need, free per node)."""

from __future__ import annotations

import pytest

from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.hints.hint import TopologyHint
from cpumanager.core.hints.source import CapacityHintSource
from cpumanager.core.merge.explain import MergeExplanation, explain_merge
from cpumanager.core.merge.options import NUMAInfo
from cpumanager.core.merge.policies import merge

TWO = NUMAInfo.of([0, 1])


def h(nodes: str, preferred: bool = True) -> TopologyHint:
    return TopologyHint(NUMAMask.of(*(int(n) for n in nodes.split(","))), preferred)


def cpu(free: dict[int, int], need: int, preferred: int = 1, **kw: object) -> CapacityHintSource:
    return CapacityHintSource(
        universe=0b11, free=free, need=need, preferred_size=preferred, unit="CPUs", **kw
    )  # type: ignore[arg-type]


def gpu(free: dict[int, int], need: int, universe: int = 0b11) -> CapacityHintSource:
    return CapacityHintSource(
        universe=universe, free=free, need=need, preferred_size=1, unit="nvidia.com/gpu devices"
    )


def explained(policy: str, providers: list[object], **kw: object) -> MergeExplanation:
    result = merge(policy, TWO, providers, **kw)  # type: ignore[arg-type]
    assert result.explanation is not None
    return result.explanation


def test_cpu_that_fits_nowhere_alone_is_the_blocker_not_the_gpu() -> None:
    cpus = (h("0,1", preferred=False),)
    gpus = (h("1"), h("0,1", preferred=False))
    why = explained("single-numa-node", [{"cpu": cpus}, {"nvidia.com/gpu": gpus}], explain=True)
    assert why.blocking == ("cpu",)
    assert why.summary.startswith("blocked by cpu: no preferred NUMA set; fits only on {0,1}")
    assert why.summary.endswith("single-numa-node rejects the pod")


def test_two_gpu_request_blocks_single_numa_node_even_though_preferred() -> None:
    gpus = (h("0,1"),)
    cpus = (h("0"), h("1"), h("0,1", preferred=False))
    why = explained("single-numa-node", [{"cpu": cpus}, {"nvidia.com/gpu": gpus}], explain=True)
    assert why.blocking == ("nvidia.com/gpu",)
    assert "single-numa-node accepts only one node" in why.resources[1].reason
    assert why.resources[0].alone_ok
    assert not why.resources[1].alone_ok


def test_conflict_between_satisfiable_resources_blames_those_not_preferring_the_result() -> None:
    cpus = (h("0"), h("0,1", preferred=False))
    gpus = (h("1"), h("0,1", preferred=False))
    why = explained("restricted", [{"cpu": cpus}, {"nvidia.com/gpu": gpus}], explain=True)
    assert why.hint == h("0", preferred=False)  # cpu's node wins the tie
    assert why.blocking == ("nvidia.com/gpu",)
    assert why.summary.startswith("no NUMA set is preferred by every resource")
    assert "cpu: preferred only on node 0" in why.summary


@pytest.mark.parametrize(
    ("source", "text"),
    [
        (
            cpu({0: 4, 1: 6}, 12),
            "12 CPUs needed, free per node 0:4, 1:6 - only 10 free on the whole machine",
        ),
        (
            cpu({0: 8, 1: 6}, 12),
            "12 CPUs needed, free per node 0:8, 1:6 - no single node has enough",
        ),
        (
            cpu({0: 4, 1: 16}, 8),
            "8 CPUs needed, free per node 0:4, 1:16 - only node 1 can hold it alone",
        ),
        (cpu({0: 14, 1: 16}, 4), "4 CPUs needed, free per node 0:14, 1:16"),
        (cpu({0: 1, 1: 1}, 1), "1 CPU needed, free per node 0:1, 1:1"),
        (
            cpu({0: 2, 1: 2}, 4, base=2),
            "4 CPUs needed (2 already held or reusable), free per node 0:2, 1:2",
        ),
        (gpu({1: 1}, 1), "1 nvidia.com/gpu device needed, free only on node 1 (1)"),
        (
            gpu({0: 1, 1: 1}, 2),
            "2 nvidia.com/gpu devices needed, free per node 0:1, 1:1 - no single node has enough",
        ),
        (
            gpu({}, 1),
            "1 nvidia.com/gpu device needed, nothing free on any node - only 0 free on the whole "
            "machine",
        ),
        (gpu({0: 1, 1: 2}, 3, universe=(1 << 34) - 1), "free per node 0:1, 1:2 (0 elsewhere)"),
    ],
)
def test_numbers_from_capacity_rules(source: CapacityHintSource, text: str) -> None:
    why = explain_merge(
        "restricted", TWO, [{"r": source}], hint=TopologyHint(None, False), admit=False
    )
    assert text in why.resources[0].detail


def test_explicit_hints_get_numbers_from_details() -> None:
    cpus = (h("0,1", preferred=False),)
    why = explain_merge(
        "single-numa-node",
        TWO,
        [{"cpu": cpus}],
        hint=TopologyHint(None, False),
        admit=False,
        details={"cpu": cpu({0: 4, 1: 6}, 8)},
    )
    line = why.lines()[0]
    assert line == (
        "cpu: no preferred NUMA set; fits only on {0,1} (not preferred); "
        "8 CPUs needed, free per node 0:4, 1:6 - no single node has enough"
    )
    assert why.to_json()["resources"][0]["detail"].startswith("8 CPUs needed")  # type: ignore[index]


def test_details_never_change_the_decision() -> None:
    cpus = (h("0"), h("1"), h("0,1", preferred=False))
    plain = explain_merge("restricted", TWO, [{"cpu": cpus}], hint=h("0"), admit=True)
    rich = explain_merge(
        "restricted", TWO, [{"cpu": cpus}], hint=h("0"), admit=True, details={"cpu": "junk"}
    )
    assert plain == rich


def test_no_placement_with_numbers() -> None:
    why = explain_merge(
        "restricted",
        TWO,
        [{"nvidia.com/gpu": ()}],
        hint=TopologyHint(None, False),
        admit=False,
        details={"nvidia.com/gpu": gpu({0: 1, 1: 1}, 3)},
    )
    assert why.blocking == ("nvidia.com/gpu",)
    assert "3 nvidia.com/gpu devices needed" in why.summary


def test_rules_under_single_numa_node_name_the_missing_single_node() -> None:
    both = cpu({0: 16, 1: 16}, 20, preferred=2)
    why = explain_merge(
        "single-numa-node", TWO, [{"cpu": both}], hint=TopologyHint(None, False), admit=False
    )
    assert why.blocking == ("cpu",)
    assert "single-numa-node accepts only one node" in why.resources[0].reason
    assert why.resources[0].reason.endswith("no single node has enough")


def test_impossible_rule() -> None:
    src = CapacityHintSource(universe=0b11, free={0: 2}, need=1, preferred_size=1, impossible=True)
    why = explain_merge(
        "best-effort", TWO, [{"cpu": src}], hint=TopologyHint(None, False), admit=True
    )
    assert why.resources[0].detail == "the CPUs it already holds lie outside the machine"
    assert why.summary.endswith("admitted anyway (best-effort)")
