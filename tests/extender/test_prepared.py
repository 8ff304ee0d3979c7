"""A node restored once per push gives the what-if's verdicts, and nodes with one admission
key give one verdict."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cpumanager.errors import CpuManagerError
from cpumanager.extender.judge import admits, judge, not_restorable
from cpumanager.extender.prepared import prepare, try_prepare
from tests.extender.strategies import build_node, node_params, nodes, pods
from tests.nodeanswers.snapshots import fixture_snapshot
from tests.nodeanswers.snapshots import pod as fixture_pod
from tests.nodeview.fixture_nodes import NODES_DIR, fixture_answers

ASSUMED = st.lists(st.integers(0, 10**6), max_size=3, unique=True).flatmap(
    lambda ids: st.tuples(*(pods(f"a{i}") for i in ids)).map(list)
)


@settings(max_examples=60, deadline=None)
@given(node=nodes(), pod=pods(), assumed=ASSUMED, reuse_uid=st.booleans())
def test_judge_gives_the_what_ifs_verdict(node, pod, assumed, reuse_uid) -> None:
    if reuse_uid and node.active_pods():
        pod = replace(pod, uid=node.active_pods()[0].uid)  # the pod already runs there
    assert judge(prepare(node), pod, assumed=assumed) == admits(node, pod, assumed=assumed)


@settings(max_examples=40, deadline=None)
@given(params=node_params(), pod=pods(), assumed=ASSUMED)
def test_nodes_differing_in_pod_identities_share_a_key_and_verdicts(params, pod, assumed):
    first, second = build_node(params, "twin-a"), build_node(params, "twin-b")
    second = replace(second, collected_at="2027-01-01T00:00:00Z")
    if first.active_pods():
        assert {p.uid for p in first.active_pods()} != {p.uid for p in second.active_pods()}
    assert prepare(first).key == prepare(second).key
    assert admits(first, pod, assumed=assumed) == admits(second, pod, assumed=assumed)


@settings(max_examples=40, deadline=None)
@given(first=nodes("a"), second=nodes("b"), pod=pods(), assumed=ASSUMED)
def test_equal_keys_mean_equal_verdicts(first, second, pod, assumed) -> None:
    if prepare(first).key == prepare(second).key:
        assert admits(first, pod, assumed=assumed) == admits(second, pod, assumed=assumed)


def test_a_different_state_is_a_different_key() -> None:
    params = {"seed": 1, "pods": 4, "cores_per_numa": 4, "options": None, "config": {}}
    busy = prepare(build_node(params, "n"))
    idle = prepare(build_node({**params, "pods": 0}, "n"))
    other = prepare(build_node({**params, "config": {"maxPods": 20}}, "n"))
    assert len({busy.key, idle.key, other.key}) == 3


FIXTURE_PODS = [
    ("1", {}),
    ("4", {}),
    ("6", {}),
    ("2", {"nvidia.com/gpu": 1}),
    ("1", {"nvidia.com/gpu": 3}),
    ("2", {"hugepages-2Mi": 64 * 2**20}),
]


@pytest.mark.parametrize(
    "name",
    ["kubeadm", "gpu", "memory-static", "offline-cpus", "policy-switched", "corrupt-checkpoint"],
)
def test_fixture_nodes_get_the_what_ifs_verdicts(name: str) -> None:
    """Real checkpoints: devices, the Static memory manager, a V1 file, a corrupt one."""
    snapshot = fixture_snapshot(name)
    if name == "gpu":
        snapshot = replace(snapshot, pod_resources=fixture_answers(NODES_DIR / "gpu"))
    prepared = try_prepare(snapshot)
    earlier = [
        fixture_pod(f"e{i}", cpu, extra=extra) for i, (cpu, extra) in enumerate(FIXTURE_PODS)
    ]
    for index, (cpu, extra) in enumerate(FIXTURE_PODS):
        wanted = fixture_pod(f"w{index}", cpu, extra=extra)
        for assumed in ([], earlier[:index]):
            expected = admits(snapshot, wanted, assumed=assumed)
            if isinstance(prepared, CpuManagerError):
                assert expected == not_restorable(prepared)
            else:
                assert judge(prepared, wanted, assumed=assumed) == expected
