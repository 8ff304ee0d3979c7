"""A snapshot that could not read what the kubelet has is NodeNotRestorable, never an
empty node (``visibility.py``)."""

from __future__ import annotations

import dataclasses

from cpumanager.extender.store import NodeStore, snapshot_digest
from cpumanager.extender.visibility import unseen
from cpumanager.nodeview.pods import node_pods_from_reduced
from cpumanager.nodeview.snapshot import Source, snapshot_to_dict
from tests.extender.conftest import Extender
from tests.extender.nodes import make_snapshot, pod_json, running_pod

BASE = make_snapshot("n")


def with_sources(*sources: Source, running: bool = False):
    pods = node_pods_from_reduced([running_pod("r", "2", "1Gi", "n")]) if running else ()
    return dataclasses.replace(BASE, sources=(*BASE.sources, *sources), pods=pods)


def test_unreadable_checkpoints_are_unseen() -> None:
    for kind in ("cpu_manager_state", "memory_manager_state", "kubelet_internal_checkpoint"):
        snapshot = with_sources(Source(kind, "unreadable", "/x", "Permission denied"))
        problem = unseen(snapshot)
        assert problem is not None
        assert kind in str(problem)
        assert "Permission" in str(problem)


def test_a_missing_cpu_checkpoint_counts_only_on_a_running_node() -> None:
    missing = Source("cpu_manager_state", "missing", "/x", "no such file")
    assert unseen(with_sources(missing)) is None  # a kubelet not yet started: fresh state
    assert unseen(with_sources(missing, running=True)) is not None
    lazy = Source("memory_manager_state", "missing", "/x", "no such file")
    assert unseen(with_sources(lazy, running=True)) is None
    assert unseen(with_sources(Source("cpu_manager_state", "ok", "/x"), running=True)) is None


def test_the_extender_judges_an_unseen_node_not_restorable(extender: Extender) -> None:
    snapshot = with_sources(Source("cpu_manager_state", "unreadable", "/x", "Permission denied"))
    status, _ = extender.call("POST", "/v1/nodes/n/snapshot", snapshot_to_dict(snapshot))
    assert status == 200
    _, result = extender.call("POST", "/filter", {"Pod": pod_json("p", "2"), "NodeNames": ["n"]})
    assert result["NodeNames"] == []
    assert result["FailedAndUnresolvableNodes"]["n"].startswith("NodeNotRestorable")
    assert "could not read cpu_manager_state" in result["FailedAndUnresolvableNodes"]["n"]


def test_the_store_keeps_the_refusal() -> None:
    store = NodeStore()
    snapshot = with_sources(Source("kubelet_internal_checkpoint", "unreadable", "/x", "EACCES"))
    store.put(snapshot, snapshot_digest(snapshot_to_dict(snapshot)))
    entry = store.get("n")
    assert entry is not None
    assert isinstance(entry.prepared, Exception)


def test_a_pod_no_manager_pins_passes_nodes_without_a_snapshot(extender: Extender) -> None:
    free = pod_json("agent", "100m")
    free["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "100m"}}
    _, result = extender.call("POST", "/filter", {"Pod": free, "NodeNames": ["new-node"]})
    assert result["NodeNames"] == ["new-node"]
    _, result = extender.call(
        "POST", "/filter", {"Pod": pod_json("g", "2"), "NodeNames": ["new-node"]}
    )
    assert result["NodeNames"] == []
    assert result["FailedNodes"]["new-node"].startswith("SnapshotMissing")
