"""Binding-aware state (``binding.py``): filter changes nothing, bind checks and assumes
exactly where the pod is bound, a failed bind assumes nothing, assumptions end when the
snapshot reports the pod, when the API server no longer has it on the node, or by time;
a fresh replica learns earlier binds from the API server."""

from __future__ import annotations

import dataclasses
import json
import threading
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cpumanager.errors import InputError
from cpumanager.extender.binding import SETTLE_SECONDS, Bindings, parse_bind_args
from cpumanager.extender.judge import Verdict
from cpumanager.extender.protocol import ExtenderArgs
from cpumanager.extender.server import ExtenderConfig
from cpumanager.extender.store import NodeStore, snapshot_digest
from cpumanager.nodeview.pods import node_pods_from_reduced
from cpumanager.nodeview.snapshot import snapshot_to_dict
from tests.extender.conftest import TOKEN, FakeClock, start_extender
from tests.extender.fake_api import FakeApi
from tests.extender.nodes import make_snapshot, pod_json, running_pod

# NUMA 0: 7 usable CPUs (CPU 0 reserved), NUMA 1: 8, single-numa-node
NODE = make_snapshot("n", cores_per_numa=4)


def put(store: NodeStore, snapshot=NODE) -> None:
    store.put(snapshot, snapshot_digest(snapshot_to_dict(snapshot)))


def reporting(uids_cpus: list[tuple[str, str]]):
    """NODE with these pods running (as its agent would report them)."""
    pods = node_pods_from_reduced([running_pod(u, c, "1Gi", "n") for u, c in uids_cpus])
    return dataclasses.replace(NODE, pods=pods)


class Harness:
    """A store, a fake API server and Bindings whose check is the extender's exact check."""

    def __init__(self, api: FakeApi | None = None, clock: FakeClock | None = None) -> None:
        from cpumanager.extender.judge import judge
        from cpumanager.extender.prepared import PreparedNode

        self.clock = clock or FakeClock()
        self.store = NodeStore(clock=self.clock)
        self.api = api or FakeApi()
        put(self.store)

        def check(args: ExtenderArgs) -> Verdict:
            entry = self.store.get(args.node_names[0])
            assert entry is not None
            assert isinstance(entry.prepared, PreparedNode)
            held = tuple(p for p, _ in self.store.assumed_pods(entry) if p.uid != args.pod.uid)
            return judge(entry.prepared, args.pod, assumed=held)

        self.bindings = Bindings(self.store, self.api, check, ttl=30.0)

    def bind(self, uid: str, cpu: str, node: str = "n") -> str:
        pod = pod_json(uid, cpu)
        if ("default", pod["metadata"]["name"]) not in self.api.pods:
            self.api.add(pod)
        args = {"PodName": f"pod-{uid}", "PodNamespace": "default", "PodUID": uid, "Node": node}
        import json

        return self.bindings.bind(parse_bind_args(json.dumps(args).encode()))

    def held(self) -> list[str]:
        entry = self.store.get("n")
        assert entry is not None
        return sorted(str(p.uid) for p, _ in self.store.assumed_pods(entry))


def test_bind_assumes_exactly_where_bound_and_refuses_what_no_longer_fits() -> None:
    h = Harness()
    assert h.bind("a", "6") == ""
    assert h.bind("b", "6") == ""
    assert h.held() == ["a", "b"]
    assert h.api.pods[("default", "pod-a")]["spec"]["nodeName"] == "n"
    error = h.bind("c", "3")  # 3 CPUs left, no NUMA node has 3 free
    assert "no longer admits" in error
    assert "TopologyAffinityError" in error
    assert h.held() == ["a", "b"]
    assert h.api.pods[("default", "pod-c")]["spec"].get("nodeName") is None


def test_a_failed_bind_assumes_nothing() -> None:
    h = Harness(FakeApi(refuse_binds=True))
    error = h.bind("a", "2")
    assert "refused" in error
    assert h.held() == []


def test_bind_of_a_deleted_or_replaced_pod_is_refused() -> None:
    h = Harness()
    args = b'{"PodName": "gone", "PodNamespace": "default", "PodUID": "x", "Node": "n"}'
    assert "no longer exists" in h.bindings.bind(parse_bind_args(args))
    h.api.add(
        pod_json("new-uid", "1")
        | {"metadata": {"name": "p", "namespace": "default", "uid": "new-uid"}}
    )
    args = b'{"PodName": "p", "PodNamespace": "default", "PodUID": "old-uid", "Node": "n"}'
    assert "uid changed" in h.bindings.bind(parse_bind_args(args))
    assert h.held() == []


def test_the_snapshot_catching_up_ends_the_assumption() -> None:
    h = Harness()
    assert h.bind("a", "2") == ""
    put(h.store, reporting([("a", "2")]))
    assert h.held() == []


def test_a_pod_deleted_before_its_node_reports_it_is_forgotten_at_the_next_bind() -> None:
    h = Harness()
    assert h.bind("a", "6") == ""
    h.api.delete("default", "pod-a")
    h.clock.now += SETTLE_SECONDS  # a just-bound pod is kept even if the list lacks it
    assert h.bind("b", "6") == ""
    assert h.held() == ["b"]


def test_assumptions_expire() -> None:
    h = Harness()
    assert h.bind("a", "2") == ""
    h.clock.now += 31
    assert h.held() == []


def test_a_restarted_replica_learns_earlier_binds_from_the_api_server() -> None:
    first = Harness()
    assert first.bind("a", "6") == ""
    assert first.bind("b", "6") == ""
    second = Harness(first.api, first.clock)  # a new replica: empty memory, same API server
    assert second.held() == []
    error = second.bind("c", "3")
    assert "no longer admits" in error
    assert second.held() == ["a", "b"]


def test_bind_args_are_checked() -> None:
    with pytest.raises(InputError, match="PodUID"):
        parse_bind_args(b'{"PodName": "p", "PodNamespace": "d", "Node": "n"}')
    with pytest.raises(InputError, match="not JSON"):
        parse_bind_args(b"{")
    args = parse_bind_args(b'{"podname": "p", "podnamespace": "d", "poduid": "u", "node": "n"}')
    assert (args.name, args.namespace, args.uid, args.node) == ("p", "d", "u", "n")
    # Names as the API server has them: a node name is put in a field selector.
    for key, value in [
        ("Node", "n,metadata.namespace=kube-system"),
        ("Node", "N1"),
        ("PodName", "p/../x"),
        ("PodNamespace", "a.b"),
        ("PodNamespace", "x" * 64),
    ]:
        body = {"PodName": "p", "PodNamespace": "d", "PodUID": "u", "Node": "n"} | {key: value}
        with pytest.raises(InputError, match=key):
            parse_bind_args(json.dumps(body).encode())


SIZES = st.sampled_from(["1", "2", "3", "4", "6", "500m"])
STEP = st.one_of(
    st.tuples(st.just("bind"), SIZES),
    st.tuples(st.just("fail-bind"), SIZES),
    st.tuples(st.just("report"), st.just("")),
    st.tuples(st.just("delete"), st.just("")),
    st.tuples(st.just("restart"), st.just("")),
    st.tuples(st.just("tick"), st.just("")),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(STEP, min_size=1, max_size=14))
def test_bound_pods_never_overcommit_the_node(steps: list[tuple[str, str]]) -> None:
    """Whatever happens (binds, failed binds, reports, deletions, a replica restart, time),
    the pods the API server has on the node, replayed through a fresh kubelet, are all
    admitted."""
    from cpumanager.adapters.memory_store import InMemoryStore
    from cpumanager.formats.manifest import pod_from_manifest
    from cpumanager.manager.node import Node

    h = Harness()
    count = 0
    for action, size in steps:
        if action in ("bind", "fail-bind"):
            count += 1
            h.api.refuse_binds = action == "fail-bind"
            h.bind(f"p{count}", size)
            h.api.refuse_binds = False
        elif action == "report":
            bound = h.api.bound().get("n", [])
            pods = [
                (p["metadata"]["uid"], p["spec"]["containers"][0]["resources"]["requests"]["cpu"])
                for p in bound
            ]
            put(h.store, reporting(pods))
        elif action == "delete" and h.api.bound().get("n"):
            # a pod deleted from the API server; its node has not run it (not reported)
            pod = h.api.bound()["n"][-1]
            entry = h.store.get("n")
            assert entry is not None
            if pod["metadata"]["uid"] not in {str(u) for u in entry.reported}:
                h.api.delete("default", pod["metadata"]["name"])
        elif action == "restart":
            h = Harness(h.api, h.clock)
        elif action == "tick":
            h.clock.now += 40  # assumptions expire: the API server is still the record
    node = Node(topology=NODE.topology(), kubelet=NODE.kubelet_config(), store=InMemoryStore())
    node.start(active_pods=list)
    for doc in h.api.bound().get("n", []):
        pod = pod_from_manifest({"kind": "Pod", "apiVersion": "v1", **doc})
        assert node.admit(pod).admitted, doc["metadata"]["uid"]


def test_filter_changes_no_state_in_bind_mode() -> None:
    assert ExtenderConfig().assume == "bind"


def test_a_pod_no_manager_pins_is_bound_without_listing_the_node() -> None:
    h = Harness()
    pod = pod_json("be", "1")
    pod["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "100m"}}
    h.api.add(pod)
    args = b'{"PodName": "pod-be", "PodNamespace": "default", "PodUID": "be", "Node": "n"}'
    assert h.bindings.bind(parse_bind_args(args)) == ""
    assert h.api.calls == ["get", "bind"]
    assert h.bind("g", "2") == ""  # a pinned pod: the node's pods are listed first
    assert h.api.calls[2:] == ["get", "list", "bind"]


def test_the_per_node_locks_do_not_outlive_the_binds() -> None:
    """A bind names any node it likes (up to 253 characters): the lock table holds only
    nodes being bound to now, however many names were sent."""
    h = Harness()
    known = h.bindings

    def missing(args: ExtenderArgs) -> Verdict:
        return Verdict(False, "SnapshotMissing", f"no snapshot of {args.node_names[0]}")

    h.bindings = Bindings(h.store, h.api, missing, ttl=30.0)
    for i in range(200):
        assert "SnapshotMissing" in h.bind(f"x{i}", "1", node=f"unknown-{i}")
    assert h.bindings._locks == {}
    h.bindings = known
    assert h.bind("a", "2") == ""
    assert h.bindings._locks == {}


def test_binds_to_one_node_still_take_turns() -> None:
    """Two binds to one node never check at the same time (the second sees the first's
    assumption): many threads binding 6-CPU pods to a 15-CPU node bind exactly two."""
    import threading

    h = Harness()
    barrier = threading.Barrier(6)
    errors: dict[str, str] = {}

    def one(uid: str) -> None:
        h.api.add(pod_json(uid, "6"))
        barrier.wait()
        errors[uid] = h.bind(uid, "6")

    threads = [threading.Thread(target=one, args=(f"t{i}",)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(e == "" for e in errors.values()) == [False] * 4 + [True] * 2
    assert len(h.held()) == 2


class StalledApi(FakeApi):
    """An API server whose pod reads stall until ``release`` is set; ``entered`` counts
    the binds waiting on it."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.entered = threading.Semaphore(0)

    def pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        self.entered.release()
        self.release.wait(timeout=60)
        return super().pod(namespace, name)


def test_stalled_binds_do_not_hold_filter_or_prioritize() -> None:
    """Binds wait on the API server in their own lane: with two binds stalled inside it
    (as many as filter and prioritize have threads), both verbs still answer, before any
    bind has."""
    api = StalledApi()
    running, server, thread = start_extender(ExtenderConfig(token=TOKEN), api=api)
    answers: list[tuple[int, Any]] = []
    try:
        put(running.store)
        pod = pod_json("g", "2")
        api.add(pod)
        binds = [
            threading.Thread(
                target=lambda node=node: answers.append(
                    running.call(
                        "POST",
                        "/bind",
                        {
                            "PodName": "pod-g",
                            "PodNamespace": "default",
                            "PodUID": "g",
                            "Node": node,
                        },
                    )
                )
            )
            for node in ("n", "m")
        ]
        for bind in binds:
            bind.start()
        for _ in binds:  # both binds are inside the API server now
            assert api.entered.acquire(timeout=30)
        status, body = running.call("POST", "/filter", {"Pod": pod, "NodeNames": ["n"]})
        assert status == 200, body
        assert body["NodeNames"] == ["n"]
        status, scores = running.call("POST", "/prioritize", {"Pod": pod, "NodeNames": ["n"]})
        assert status == 200, scores
        assert answers == []  # the verbs answered while every bind still waited
        api.release.set()
        for bind in binds:
            bind.join(timeout=30)
        assert sorted(status for status, _ in answers) == [200, 200]
    finally:
        api.release.set()
        server.should_exit = True
        thread.join(timeout=10)
