"""The extender under hostile callers (issue 21): each numbered defect of the issue has a
test here that failed before the fix. Real HTTP on 127.0.0.1."""

from __future__ import annotations

import http.client
import json
import logging
import socket
import threading
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn

from cpumanager.core import limits
from cpumanager.extender import store as store_module
from cpumanager.extender.guards import header_timeout_protocol
from cpumanager.extender.server import ExtenderConfig, create_app
from cpumanager.extender.store import NodeStore
from tests.extender.conftest import TOKEN, Extender, FakeClock
from tests.extender.nodes import (
    make_snapshot,
    pod_json,
    running_pod,
    snapshot_document,
)


def push_doc(ext: Extender, name: str, document: Any, **kw: Any) -> tuple[int, Any]:
    return ext.call("POST", f"/v1/nodes/{name}/snapshot", document, **kw)


def push(ext: Extender, name: str, **shape: Any) -> dict[str, Any]:
    document = snapshot_document(make_snapshot(name, **shape))
    status, body = push_doc(ext, name, document)
    assert status == 200, body
    return document


def filter_names(ext: Extender, pod: dict[str, Any], names: list[str]) -> tuple[int, Any]:
    return ext.call("POST", "/filter", {"Pod": pod, "NodeNames": names})


# --- 1: a 1,024-NUMA node --------------------------------------------------------------------


@pytest.mark.extender_config(assume="all")
def test_1_a_node_of_1024_numa_nodes_is_judged_not_a_500(extender: Extender) -> None:
    options = {"max-allowable-numa-nodes": "1024"}
    push(
        extender,
        "wide",
        numa_per_socket=1024,
        cores_per_numa=1,
        threads=1,
        topology_policy="best-effort",
        config={"topologyManagerPolicyOptions": options},
    )
    push(extender, "plain")
    status, body = filter_names(extender, pod_json("p1", cpu="2"), ["wide", "plain"])
    assert status == 200, body
    assert body["NodeNames"] == ["wide", "plain"], body  # 2 CPUs over 2 NUMA nodes: admitted


# --- 2: pushes never hold the loop; one set of caps ------------------------------------------


def test_2_a_push_being_restored_delays_no_other_route(
    extender: Extender, monkeypatch: pytest.MonkeyPatch
) -> None:
    push(extender, "other")
    entered, release = threading.Event(), threading.Event()
    real = store_module.try_prepare

    def slow(snapshot: Any) -> Any:
        if snapshot.node_name == "slow":
            entered.set()
            release.wait(30)
        return real(snapshot)

    monkeypatch.setattr(store_module, "try_prepare", slow)
    result: dict[str, Any] = {}
    pusher = threading.Thread(
        target=lambda: result.update(answer=push_doc(
            extender, "slow", snapshot_document(make_snapshot("slow"))
        ))
    )  # fmt: skip
    pusher.start()
    try:
        assert entered.wait(20), "the push never reached its restore"
        # The restore is parked: every other route still answers (before the fix, the
        # restore ran on the event loop and each call below timed out).
        assert urllib.request.urlopen(extender.base + "/healthz", timeout=5).status == 200
        status, body = filter_names(extender, pod_json("p", cpu="1"), ["other"])
        assert status == 200, body
        assert body["NodeNames"] == ["other"]
        from cpumanager.nodeview.digest import snapshot_digest

        document = snapshot_document(make_snapshot("other"))
        status, _ = extender.call(
            "POST", "/v1/nodes/other/heartbeat", {"digest": snapshot_digest(document)}
        )
        assert status == 200
        assert result == {}  # the push is still being restored
    finally:
        release.set()
        pusher.join(30)
    assert result["answer"][0] == 200


@pytest.mark.parametrize(
    ("shape", "word"),
    [
        ({"numa_per_socket": 2, "cores_per_numa": 16_385, "threads": 2}, "CPUs"),
        ({"numa_per_socket": 1_025, "cores_per_numa": 1, "threads": 1}, "NUMA"),
    ],
)
def test_2_pushes_stop_at_the_machine_file_caps(
    extender: Extender, shape: dict[str, int], word: str
) -> None:
    document = snapshot_document(make_snapshot("huge", **shape))
    status, text = push_doc(extender, "huge", document)
    assert status == 400
    assert word in text
    assert "limit" in text


def test_2_pushes_stop_at_the_pod_cap(extender: Extender) -> None:
    document = snapshot_document(make_snapshot("many"))
    document["pods"] = [
        running_pod(f"u{i}", "100m", "1Mi", "many") for i in range(limits.MAX_PODS + 1)
    ]
    status, text = push_doc(extender, "many", document)
    assert status == 400
    assert "pods" in text
    assert "limit" in text


# --- 3: filters are cheap to send -------------------------------------------------------------


def test_3_a_pod_of_50000_containers_is_refused(extender: Extender) -> None:
    push(extender, "n")
    status, text = filter_names(extender, pod_json("big", cpu="1", containers=50_000), ["n"])
    assert status == 400
    assert "containers" in text


@pytest.mark.extender_config(body_timeout=0.5)
def test_3_an_incomplete_body_times_out(extender: Extender) -> None:
    host, port = extender.base.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=20)
    conn.putrequest("POST", "/filter")
    conn.putheader("Content-Length", "1000")
    conn.endheaders()
    conn.send(b'{"Pod": ')  # and nothing more
    response = conn.getresponse()
    assert response.status == 408
    assert b"did not arrive" in response.read()
    conn.close()


@pytest.mark.extender_config(max_buffered=4096)
def test_3_partial_bodies_together_cannot_pile_memory(extender: Extender) -> None:
    host, port = extender.base.removeprefix("http://").split(":")
    holder = socket.create_connection((host, int(port)), timeout=20)
    holder.sendall(
        b"POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n" + b" " * 3000
    )
    # The second body fits alone but not beside the first, once the server holds that one
    # (asked again until it does: ordering, not timing).
    for _ in range(200):
        conn = http.client.HTTPConnection(host, int(port), timeout=20)
        conn.request("POST", "/filter", body=b" " * 3000)
        response = conn.getresponse()
        text = response.read()
        conn.close()
        if response.status == 503:
            break
        assert response.status == 400  # not JSON: read whole, so the first was not held yet
        time.sleep(0.05)
    assert response.status == 503
    assert b"too many request bodies" in text
    holder.close()


@pytest.fixture
def guarded() -> Iterator[tuple[str, int]]:
    """An extender served with a request-head deadline of 1 s."""
    config = ExtenderConfig(token=TOKEN)
    app = create_app(config, NodeStore(clock=FakeClock()))
    server = uvicorn.Server(
        uvicorn.Config(
            app, host="127.0.0.1", port=0, log_level="error", http=header_timeout_protocol(1.0)
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    yield "127.0.0.1", server.servers[0].sockets[0].getsockname()[1]
    server.should_exit = True
    thread.join(10)


def test_3_a_slow_request_head_is_cut(guarded: tuple[str, int]) -> None:
    sock = socket.create_connection(guarded, timeout=20)
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")  # never ends its head
    assert sock.recv(100) == b""  # closed by the server (a timeout would raise)
    sock.close()
    # A keep-alive connection gets the same deadline for its next head.
    sock = socket.create_connection(guarded, timeout=20)
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    answer = b""
    while not answer.endswith(b"ok\n"):
        answer += sock.recv(1000)
    assert b"200 OK" in answer
    sock.sendall(b"GET /healthz HTTP/1.1\r\n")
    assert sock.recv(100) == b""
    sock.close()


# --- 4: bounded state ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["a" * 254, "Upper", "with%20space", "quote%22", "new%0Aline", "%E2%80%AEevil", "-a"]
)
def test_4_names_that_are_not_node_names_are_refused(extender: Extender, name: str) -> None:
    document = snapshot_document(make_snapshot("x"))
    status, text = push_doc(extender, name, document)
    assert status == 400
    assert "node name" in text
    assert len(extender.store) == 0


@pytest.mark.extender_config(max_nodes=2, stale_after=60.0)
def test_4_the_store_is_capped_and_evicts_only_stale_nodes(extender: Extender) -> None:
    push(extender, "a")
    extender.clock.now += 30
    push(extender, "b")
    document = snapshot_document(make_snapshot("c"))
    status, text = push_doc(extender, "c", document)
    assert status == 507
    assert "--max-nodes" in text
    extender.clock.now += 31  # a is now stale (61 s), b is not (31 s)
    assert push_doc(extender, "c", document)[0] == 200
    assert extender.store.get("a") is None
    assert extender.store.get("b") is not None
    assert extender.store.get("c") is not None
    page = urllib.request.urlopen(extender.base + "/metrics", timeout=10).read().decode()
    assert 'node="a"' not in page
    assert 'node="c"' in page


# --- 5: quantities --------------------------------------------------------------------------


def test_5_a_huge_quantity_is_a_400_not_a_500(extender: Extender) -> None:
    push(extender, "n")
    status, text = filter_names(extender, pod_json("q", cpu="1e9999"), ["n"])
    assert status == 400
    assert "too large" in text
    document = snapshot_document(make_snapshot("m"))
    document["pods"] = [running_pod("r1", "1e9999", "1Gi", "m")]
    status, text = push_doc(extender, "m", document)
    assert status == 400
    assert "too large" in text


# --- 10: internal errors ---------------------------------------------------------------------


def test_10_a_deep_heartbeat_is_a_400(extender: Extender) -> None:
    push(extender, "n")
    status, _ = extender.call("POST", "/v1/nodes/n/heartbeat", b"[" * 4000)
    assert status == 400


@pytest.mark.parametrize("name", ["\ud800", "UPPER", ""])
def test_10_node_names_in_extender_args_are_checked(extender: Extender, name: str) -> None:
    body = json.dumps({"Pod": pod_json("p", cpu="1"), "NodeNames": [name]}).encode()
    status, text = extender.call("POST", "/filter", body)
    assert status == 400
    assert "node name" in text


def test_10_deep_extender_args_are_a_400(extender: Extender) -> None:
    pod = pod_json("p", cpu="1")
    deep: Any = 1
    for _ in range(200):
        deep = [deep]
    pod["metadata"]["annotations"] = {"x": deep}
    status, text = filter_names(extender, pod, ["n"])
    assert status == 400
    assert "nested" in text


# --- 12: auth scheme case, client disconnects ------------------------------------------------


def test_12_the_bearer_scheme_is_case_insensitive(extender: Extender) -> None:
    document = snapshot_document(make_snapshot("n"))
    for scheme in ("bearer", "BEARER", "Bearer"):
        request = urllib.request.Request(
            extender.base + "/v1/nodes/n/snapshot",
            data=json.dumps(document).encode(),
            method="POST",
            headers={"Authorization": f"{scheme} {TOKEN.decode()}"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.status == 200
    status, _ = push_doc(extender, "n", document, token=b"wrong")
    assert status == 401


def test_12_a_client_that_leaves_mid_body_leaves_no_traceback(
    extender: Extender, caplog: pytest.LogCaptureFixture
) -> None:
    host, port = extender.base.removeprefix("http://").split(":")
    with caplog.at_level(logging.ERROR):
        for path in ("/filter", "/v1/nodes/n/snapshot"):
            sock = socket.create_connection((host, int(port)), timeout=20)
            sock.sendall(
                f"POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN.decode()}\r\n"
                "Content-Length: 5000\r\n\r\n{".encode()
            )
            time.sleep(0.2)  # ordering only: the handler is reading the body
            sock.close()
        page = ""
        for _ in range(200):  # until both disconnects are counted
            page = urllib.request.urlopen(extender.base + "/metrics", timeout=10).read().decode()
            if page.count('requests_total{code="499"') == 2:
                break
            time.sleep(0.05)
        assert urllib.request.urlopen(extender.base + "/healthz", timeout=5).status == 200
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
    assert page.count('requests_total{code="499"') == 2, page


def test_overlapping_calls_keep_the_collector_off_until_the_last_ends() -> None:
    import gc

    from cpumanager.extender.server import gc_paused

    first, second = gc_paused(), gc_paused()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)  # the first call ends while the second runs
    assert not gc.isenabled()
    second.__exit__(None, None, None)
    assert gc.isenabled()


@pytest.mark.extender_config(assume="all")
def test_a_defect_one_node_trips_fails_that_node_only(
    extender: Extender, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cpumanager.extender import decide

    real = decide.judge

    def trips(node: Any, pod: Any, *, assumed: Any = ()) -> Any:
        if len(node.restored.topology.all_cpus) == 64:  # the "bad" node's shape only
            raise IndexError("list index out of range")
        return real(node, pod, assumed=assumed)

    def table_trips(node: Any, facts: Any) -> Any:
        if len(node.restored.topology.all_cpus) == 64:
            raise KeyError("a defect in the push-time table")
        return None  # every other node goes to the exact check

    monkeypatch.setattr(decide, "judge", trips)
    monkeypatch.setattr(decide, "known_verdict", table_trips)
    push(extender, "bad", cores_per_numa=16)  # 2 NUMA x 16 cores x 2 threads: 64 CPUs
    push(extender, "good")
    status, body = filter_names(extender, pod_json("p", cpu="1"), ["bad", "good"])
    assert status == 200, body
    assert body["NodeNames"] == ["good"]
    assert body["FailedAndUnresolvableNodes"]["bad"].startswith("InternalError: ")
    assert "IndexError" in body["FailedAndUnresolvableNodes"]["bad"]
