"""The summary's rules never rule out a node the exact check admits, and each rule fires."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cpumanager.extender.judge import judge, known_verdict
from cpumanager.extender.prepared import prepare
from cpumanager.extender.summary import first_fit_failure, pod_facts, rule_out
from cpumanager.formats.manifest import pod_from_manifest
from cpumanager.nodeanswers.fit import Allocatable, compared_requests, fit_failures
from tests.extender.nodes import busy_snapshot, pod_json
from tests.extender.strategies import nodes, pods
from tests.extender.test_prepared import ASSUMED


@settings(max_examples=150, deadline=None)
@given(node=nodes(), pod=pods(), assumed=ASSUMED, reuse_uid=st.booleans())
def test_no_rule_refuses_a_pod_the_exact_check_admits(node, pod, assumed, reuse_uid) -> None:
    if reuse_uid and node.active_pods():
        pod = replace(pod, uid=node.active_pods()[0].uid)
    prepared = prepare(node)
    refused = rule_out(prepared.summary, pod_facts(pod), runs_here=pod.uid in prepared.held)
    if refused is not None:
        assert not judge(prepared, pod, assumed=assumed).admitted, refused


def _pod(cpu: str, memory: str = "1Gi", containers: int = 1):
    doc = pod_json("p", cpu, memory, containers=containers)
    return pod_from_manifest({"kind": "Pod", "apiVersion": "v1", **doc})


# (case id, node options, pod, expected reason or None)
CASES = [
    ("fits", {}, _pod("2"), None),
    ("cpu headroom", {}, _pod("20"), "OutOfcpu"),
    ("memory headroom", {}, _pod("1", "200Gi"), "OutOfmemory"),
    ("pod count", {"config": {"maxPods": 1}, "running": 1}, _pod("1"), "OutOfpods"),
    ("one NUMA node", {"cores_per_numa": 4}, _pod("4", containers=2), None),
    ("no NUMA node holds it", {"cores_per_numa": 4}, _pod("9"), "NoNUMANodeFits"),
    ("restricted spans nodes", {"topology_policy": "restricted"}, _pod("9"), None),
    ("pod scope sums", {"config": {"topologyManagerScope": "pod"}}, _pod("5", containers=2),
     "NoNUMANodeFits"),
    ("whole cores only", {"options": {"full-pcpus-only": "true"}}, _pod("3"),
     "SMTAlignmentError"),
    ("whole cores fit", {"options": {"full-pcpus-only": "true"}}, _pod("4"), None),
    ("strict reservation leaves fewer exclusive CPUs",
     {"options": {"strict-cpu-reservation": "true"}, "reserved": "0-7",
      "topology_policy": "none"}, _pod("8"), None),
]  # fmt: skip


@pytest.mark.parametrize(("options", "pod", "reason"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])  # fmt: skip
def test_rules(options: dict, pod, reason: str | None) -> None:
    options = dict(options)
    running = options.pop("running", 0)
    node = busy_snapshot("n", random.Random(0), pods=running, **options)
    assert len(node.active_pods()) == running
    prepared = prepare(node)
    refused = rule_out(prepared.summary, pod_facts(pod), runs_here=False)
    assert (refused.reason if refused else None) == reason
    if refused is not None:
        assert not judge(prepared, pod).admitted


def test_the_whole_cores_rule_words_the_refusal_as_the_kubelet() -> None:
    # Where the exact check reaches the CPU manager's Allocate, it refuses with this text.
    node = busy_snapshot("n", random.Random(0), pods=0, options={"full-pcpus-only": "true"})
    prepared = prepare(node)
    pod = _pod("3")
    refused = rule_out(prepared.summary, pod_facts(pod), runs_here=False)
    exact = judge(prepared, pod)
    assert refused is not None
    assert not exact.admitted
    assert (refused.reason, refused.message) == (exact.reason, exact.message.split("due to ")[-1])


EMPTY = prepare(busy_snapshot("n", random.Random(1), pods=0)).summary
RESOURCES = ("cpu", "memory", "ephemeral-storage", "pods", "example.com/gpu", "a.io/x")
AMOUNTS = st.dictionaries(st.sampled_from(RESOURCES), st.integers(0, 8))


@settings(max_examples=300, deadline=None)
@given(wanted=AMOUNTS, used=AMOUNTS, table=AMOUNTS, count=st.integers(0, 8))
def test_first_fit_failure_is_the_fit_predicates_first(wanted, used, table, count) -> None:
    allocatable = Allocatable(capacity=table, allocatable=table)
    free = {name: table.get(name, 0) - used.get(name, 0) for name in {*table, *used}}
    summary = replace(
        EMPTY,
        used=used,
        count=count,
        allocatable=allocatable,
        pods_left=table.get("pods", 0) - count,
        free=free,
    )
    facts = replace(pod_facts(_pod("1")), wanted=wanted, checked=compared_requests(wanted))
    expected = fit_failures(wanted, used, count, allocatable)
    assert first_fit_failure(summary, facts) == (expected[0] if expected else None)


@st.composite
def _plain_pods(draw):
    """The admission table's shape (one container, CPU and memory), or close to it."""
    cpu = draw(st.sampled_from(("100m", "500m", "1", "2", "3", "4", "5", "6", "7", "8", "12")))
    memory = draw(st.sampled_from(("1Mi", "256Mi", "1Gi", "100Gi")))
    doc = pod_json("p", cpu, memory)
    resources = doc["spec"]["containers"][0]["resources"]
    kind = draw(st.integers(0, 5))
    if kind == 0:
        del resources["limits"]  # Burstable
    elif kind == 1:
        doc["spec"]["containers"][0]["resources"] = {}  # BestEffort
    elif kind == 2:
        resources["limits"]["example.com/gpu"] = "1"  # a device: not the table's shape
        resources["requests"]["example.com/gpu"] = "1"
    return pod_from_manifest({"kind": "Pod", "apiVersion": "v1", **doc})


@settings(max_examples=150, deadline=None)
@given(node=nodes(), pod=_plain_pods() | pods())
def test_the_admission_table_answers_as_the_exact_check(node, pod) -> None:
    prepared = prepare(node)
    facts = pod_facts(pod)
    if rule_out(prepared.summary, facts, runs_here=False) is not None:
        return
    known = known_verdict(prepared, facts)
    if known is not None:
        assert known == judge(prepared, pod)


def test_the_admission_table_answers_the_common_shapes() -> None:
    """On busy nodes of every policy most plain pods are answered by the table, and each
    answer is the exact check's."""
    rng = random.Random(7)
    answered = checked = 0
    for index, policy in enumerate(("none", "best-effort", "restricted", "single-numa-node") * 3):
        node = prepare(busy_snapshot(f"n{index}", rng, pods=4, cores_per_numa=4,
                                     topology_policy=policy))  # fmt: skip
        for cpu in ("500m", "1", "2", "3", "4", "6"):
            pod = _pod(cpu, "300Mi")
            facts = pod_facts(pod)
            assert facts.simple == (0 if cpu == "500m" else int(cpu))
            if rule_out(node.summary, facts, runs_here=False) is not None:
                continue
            checked += 1
            known = known_verdict(node, facts)
            if known is not None:
                answered += 1
                assert known == judge(node, pod)
    assert checked
    assert answered >= checked * 3 // 4
    assert pod_facts(_pod("2", containers=2)).simple == -1
