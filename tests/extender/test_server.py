"""The extender over real HTTP: protocol shapes, pushes, auth, stale nodes, bad bodies."""

from __future__ import annotations

import pytest

from tests.extender.conftest import Extender
from tests.extender.nodes import make_snapshot, pod_json, snapshot_document


def push(ext: Extender, name: str, **shape) -> dict:
    document = snapshot_document(make_snapshot(name, **shape))
    status, body = ext.call("POST", f"/v1/nodes/{name}/snapshot", document)
    assert status == 200, body
    return document


def test_filter_passes_admitting_nodes_and_explains_rejections(extender: Extender) -> None:
    push(extender, "small", cores_per_numa=2)  # 4 CPUs per NUMA node
    push(extender, "big", cores_per_numa=8)  # 16 CPUs per NUMA node
    args = {"Pod": pod_json("p1", "6"), "NodeNames": ["small", "big"]}
    status, result = extender.call("POST", "/filter", args)
    assert status == 200
    assert result["NodeNames"] == ["big"]
    assert set(result) == {
        "Nodes",
        "NodeNames",
        "FailedNodes",
        "FailedAndUnresolvableNodes",
        "Error",
    }
    # single-numa-node and no NUMA node has 6 free CPUs: ruled out before the exact check
    assert result["FailedNodes"]["small"].startswith("NoNUMANodeFits: single-numa-node: 6 ")
    assert result["Error"] == ""


def test_filter_echoes_node_objects_when_sent_a_node_list(extender: Extender) -> None:
    push(extender, "a")
    node = {"metadata": {"name": "a", "labels": {"x": "y"}}}
    args = {"Pod": pod_json("p1", "2"), "Nodes": {"items": [node]}}
    status, result = extender.call("POST", "/filter", args)
    assert status == 200
    assert result["Nodes"]["items"] == [node]
    assert result["NodeNames"] is None


def test_prioritize_scores_within_zero_to_ten(extender: Extender) -> None:
    push(extender, "small", cores_per_numa=2)
    push(extender, "big", cores_per_numa=8)
    status, result = extender.call(
        "POST", "/prioritize", {"Pod": pod_json("p1", "6"), "NodeNames": ["small", "big"]}
    )
    assert status == 200
    scores = {entry["Host"]: entry["Score"] for entry in result}
    assert scores["small"] == 0
    assert 0 < scores["big"] <= 10


@pytest.mark.extender_config(assume="all")  # filter assumes (no bindVerb)
def test_assumed_pods_hold_cpus_until_reported(extender: Extender) -> None:
    push(extender, "n", cores_per_numa=4)  # NUMA 0: 7 usable CPUs (0 reserved), NUMA 1: 8
    for uid in ("p1", "p2"):
        _status, result = extender.call(
            "POST", "/filter", {"Pod": pod_json(uid, "6"), "NodeNames": ["n"]}
        )
        assert result["NodeNames"] == ["n"]
    # 3 CPUs are left in total but no NUMA node has 3 free: the exact check says so
    _, third = extender.call("POST", "/filter", {"Pod": pod_json("p3", "3"), "NodeNames": ["n"]})
    assert third["NodeNames"] == []
    assert third["FailedNodes"]["n"].startswith("TopologyAffinityError")
    assert "after 2 assumed pod(s)" in third["FailedNodes"]["n"]
    # the earlier pods' assumptions expire: it fits again
    extender.clock.now += 31
    _, again = extender.call("POST", "/filter", {"Pod": pod_json("p3", "3"), "NodeNames": ["n"]})
    assert again["NodeNames"] == ["n"]


@pytest.mark.extender_config(assume="all")  # filter assumes (no bindVerb)
def test_a_reported_pod_is_no_longer_assumed(extender: Extender) -> None:
    push(extender, "n")
    extender.call("POST", "/filter", {"Pod": pod_json("p1", "2"), "NodeNames": ["n"]})
    assert extender.store.assumed_count() == 1
    extender.store.forget("p1")
    assert extender.store.assumed_count() == 0


@pytest.mark.extender_config(assume="all")  # filter assumes (no bindVerb)
def test_refiltering_a_pod_does_not_count_it_twice(extender: Extender) -> None:
    push(extender, "n", cores_per_numa=4)
    for _ in range(3):
        _status, result = extender.call(
            "POST", "/filter", {"Pod": pod_json("p1", "8"), "NodeNames": ["n"]}
        )
        assert result["NodeNames"] == ["n"]


def test_missing_and_stale_nodes_fail_by_default_and_are_counted(extender: Extender) -> None:
    push(extender, "n")
    extender.clock.now += 61
    status, result = extender.call(
        "POST", "/filter", {"Pod": pod_json("p1", "1"), "NodeNames": ["n", "ghost"]}
    )
    assert result["NodeNames"] == []
    assert result["FailedNodes"]["n"].startswith("SnapshotStale")
    assert result["FailedNodes"]["ghost"].startswith("SnapshotMissing")
    _, page = extender.call("GET", "/metrics")
    assert (
        'cpumanager_extender_filter_outcomes_total{reason="SnapshotStale",result="fail"} 1.0'
        in page
    )
    assert 'cpumanager_extender_snapshot_age_seconds{node="n"} 61.0' in page
    # a heartbeat with the pushed digest makes it fresh again without a new snapshot
    from cpumanager.nodeview.digest import snapshot_digest

    document = snapshot_document(make_snapshot("n"))
    status, _ = extender.call(
        "POST", "/v1/nodes/n/heartbeat", {"digest": snapshot_digest(document)}
    )
    assert status == 200
    _, result = extender.call("POST", "/filter", {"Pod": pod_json("p1", "1"), "NodeNames": ["n"]})
    assert result["NodeNames"] == ["n"]


@pytest.mark.extender_config(stale_policy="pass")
def test_stale_nodes_can_be_passed_unchecked(extender: Extender) -> None:
    _status, result = extender.call(
        "POST", "/filter", {"Pod": pod_json("p1", "1"), "NodeNames": ["ghost"]}
    )
    assert result["NodeNames"] == ["ghost"]
    _, page = extender.call("GET", "/metrics")
    assert (
        'cpumanager_extender_filter_outcomes_total{reason="SnapshotMissing",result="pass"} 1.0'
        in page
    )


POD = '{"metadata": {"name": "x"}, "spec": {"containers": [{"name": "c"}]}}'


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (b"{not json", "not JSON"),
        (b'{"Pod": {"metadata": {"name": "x"}, "spec": {}}, "NodeNames": []}', "container"),
        (b"[]", "JSON object"),
        (b'{"NodeNames": ["a"]}', "Pod is missing"),
        (b'{"Pod": %s}' % POD.encode(), "neither Nodes nor NodeNames"),
        (b'{"Pod": %s, "NodeNames": [1]}' % POD.encode(), "list of strings"),
        (b'{"Pod": %s, "Nodes": {"items": [{}]}}' % POD.encode(), "metadata.name"),
        (
            b'{"Pod": {"metadata": {"name": "x"}, "spec": {"containers": 3}}, "NodeNames": []}',
            "Pod:",
        ),
    ],
)
def test_malformed_bodies_are_400_with_one_line(
    extender: Extender, body: bytes, fragment: str
) -> None:
    for verb in ("/filter", "/prioritize"):
        status, text = extender.call("POST", verb, body)
        assert status == 400
        assert fragment in text
        assert text.count("\n") == 1


@pytest.mark.extender_config(max_body=1000)
def test_oversized_bodies_are_refused(extender: Extender) -> None:
    status, text = extender.call("POST", "/filter", b" " * 5000)
    assert status == 413
    assert "limit" in text


def test_unauthenticated_pushes_are_refused(extender: Extender) -> None:
    document = snapshot_document(make_snapshot("n"))
    for token in (None, b"wrong", b"s3cret-token-longer"):
        status, text = extender.call("POST", "/v1/nodes/n/snapshot", document, token=token)
        assert status == 401
        assert "Bearer" in text
    assert extender.store.get("n") is None
    status, _ = extender.call("POST", "/v1/nodes/n/heartbeat", {"digest": "x"}, token=None)
    assert status == 401


def test_push_checks_the_node_name_and_snapshot(extender: Extender) -> None:
    document = snapshot_document(make_snapshot("n"))
    status, text = extender.call("POST", "/v1/nodes/other/snapshot", document)
    assert status == 400
    assert "not 'other'" in text
    status, text = extender.call("POST", "/v1/nodes/n/snapshot", {"schema": "nope"})
    assert status == 400
    status, body = extender.call("POST", "/v1/nodes/n/snapshot", document)
    assert body == {"node": "n", "changed": True}
    document["collectedAt"] = "2026-12-03T11:00:00Z"
    status, body = extender.call("POST", "/v1/nodes/n/snapshot", document)
    assert body == {"node": "n", "changed": False}


@pytest.mark.extender_config(assume="all")  # filter assumes (no bindVerb)
def test_healthz_and_metrics(extender: Extender) -> None:
    assert extender.call("GET", "/healthz") == (200, "ok\n")
    push(extender, "n")
    extender.call("POST", "/filter", {"Pod": pod_json("p1", "2"), "NodeNames": ["n"]})
    _, page = extender.call("GET", "/metrics")
    assert 'cpumanager_extender_requests_total{code="200",route="filter"} 1.0' in page
    assert 'cpumanager_extender_request_duration_seconds_count{route="filter"} 1.0' in page
    assert "cpumanager_extender_assumed_pods 1.0" in page


def test_a_snapshot_without_a_pod_list_is_not_trusted(extender: Extender) -> None:
    from dataclasses import replace

    document = snapshot_document(replace(make_snapshot("n"), pods=None))
    status, _ = extender.call("POST", "/v1/nodes/n/snapshot", document)
    assert status == 200
    _, result = extender.call("POST", "/filter", {"Pod": pod_json("p1", "1"), "NodeNames": ["n"]})
    assert result["NodeNames"] == []
    assert result["FailedNodes"]["n"].startswith("SnapshotWithoutPods")


def test_nodes_in_one_state_share_a_verdict_that_names_each_pod(extender: Extender) -> None:
    # 16 CPUs, two NUMA nodes of 8, CPU 0 reserved: three containers of 5 pass every rule
    # (largest 5, 15 together), but the third finds no NUMA node with 5 left: only the
    # exact check refuses, with single-numa-node's TopologyAffinityError.
    for name in ("x", "y"):
        push(extender, name)
    for uid in ("p1", "p2"):  # one spec: the second call reuses the first one's exact check
        pod = pod_json(uid, "5", containers=3)
        _, result = extender.call("POST", "/filter", {"Pod": pod, "NodeNames": ["x", "y"]})
        assert result["NodeNames"] == []
        for text in result["FailedNodes"].values():
            assert text.startswith("TopologyAffinityError: ")
            assert f"default/pod-{uid} is a Guaranteed pod." in text
            assert "pod-p1" not in text or uid == "p1"


def test_collection_is_paused_only_during_a_call() -> None:
    import gc

    from cpumanager.extender.server import gc_paused

    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # an application that turned it off keeps it off
    finally:
        gc.enable()
