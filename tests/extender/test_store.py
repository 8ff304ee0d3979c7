"""The store's assumed pods: held per node, moved, expired, ended by a report or forget."""

from __future__ import annotations

from dataclasses import replace

from cpumanager.extender.store import NodeStore
from cpumanager.formats.manifest import pod_from_manifest
from cpumanager.nodeview.pods import node_pods_from_reduced
from tests.extender.conftest import FakeClock
from tests.extender.nodes import make_snapshot, pod_json, running_pod


def _store(*names: str) -> tuple[NodeStore, FakeClock]:
    clock = FakeClock()
    store = NodeStore(clock=clock)
    for name in names:
        store.put(make_snapshot(name), name)
    return store, clock


def _pod(uid: str):
    return pod_from_manifest({"kind": "Pod", "apiVersion": "v1", **pod_json(uid, "1")})


def _held(store: NodeStore, name: str) -> list[str]:
    entry = store.get(name)
    assert entry is not None
    return [str(pod.uid) for pod, _ in store.assumed_pods(entry)]


def test_assuming_again_moves_the_pod_unless_asked_to_keep_it() -> None:
    store, _ = _store("a", "b", "c")
    store.assume("a", _pod("p"), "shape", 30)
    store.assume("b", _pod("p"), "shape", 30)
    assert (_held(store, "a"), _held(store, "b")) == ([], ["p"])
    store.assume("c", _pod("p"), "shape", 30, move=False)
    assert (_held(store, "b"), _held(store, "c"), store.assumed_count()) == (["p"], ["p"], 2)
    store.forget("p")
    assert (_held(store, "b"), _held(store, "c"), store.assumed_count()) == ([], [], 0)


def test_expired_and_reported_pods_are_no_longer_held() -> None:
    store, clock = _store("a", "b")
    store.assume("a", _pod("old"), "shape", 10)
    store.assume("a", _pod("new"), "shape", 60, move=False)
    store.assume("b", _pod("seen"), "shape", 60)
    clock.now += 11
    assert _held(store, "a") == ["new"]
    assert store.assumed_count() == 2
    reported = node_pods_from_reduced([running_pod("seen", "1", "1Gi", "a")])
    store.put(replace(make_snapshot("a"), pods=reported), "a with seen")
    assert (_held(store, "a"), _held(store, "b"), store.assumed_count()) == (["new"], [], 1)
