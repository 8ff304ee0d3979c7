"""Two listeners over one state (``create_apps``, ``--push-listen``): the schedulers' port
serves no pushes and the agents' port serves no verbs, so what can reach the agents' port
(every node) cannot bind a pod."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn
from starlette.applications import Starlette

from cpumanager.extender.server import ExtenderConfig, create_apps
from cpumanager.extender.store import NodeStore
from tests.extender.conftest import TOKEN, Extender, FakeClock
from tests.extender.fake_api import FakeApi
from tests.extender.nodes import make_snapshot, pod_json, snapshot_document


def serve(app: Starlette, **options: Any) -> tuple[uvicorn.Server, threading.Thread, int]:
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=0, log_level="error", **options)
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            pytest.fail("a listener did not start")
        time.sleep(0.01)
    return server, thread, server.servers[0].sockets[0].getsockname()[1]


@pytest.fixture
def split() -> Iterator[tuple[Extender, Extender, FakeApi]]:
    """(the schedulers' port, the agents' port, the API server) over one store."""
    clock = FakeClock()
    store = NodeStore(clock=clock)
    api = FakeApi()
    verbs, pushes = create_apps(ExtenderConfig(token=TOKEN), store, api=api)
    running = [serve(verbs), serve(pushes, lifespan="off")]
    yield (
        Extender(f"http://127.0.0.1:{running[0][2]}", store, clock),
        Extender(f"http://127.0.0.1:{running[1][2]}", store, clock),
        api,
    )
    for server, thread, _ in running:
        server.should_exit = True
        thread.join(timeout=10)


BIND = {"PodName": "pod-g", "PodNamespace": "default", "PodUID": "g", "Node": "n"}


def test_each_port_answers_its_own_routes_only(
    split: tuple[Extender, Extender, FakeApi],
) -> None:
    schedulers, agents, api = split
    document = snapshot_document(make_snapshot("n", cores_per_numa=4))
    pod = pod_json("g", "2")
    api.add(pod)
    # The agents' routes on the schedulers' port: not found, and nothing stored.
    status, _ = schedulers.call("POST", "/v1/nodes/n/snapshot", document)
    assert status == 404
    status, _ = schedulers.call("POST", "/v1/nodes/n/heartbeat", {"digest": "x"})
    assert status == 404
    assert schedulers.store.get("n") is None
    # The schedulers' routes on the agents' port: not found, and nothing bound.
    for path, body in (
        ("/bind", BIND),
        ("/filter", {"Pod": pod, "NodeNames": ["n"]}),
        ("/prioritize", {"Pod": pod, "NodeNames": ["n"]}),
    ):
        status, _ = agents.call("POST", path, body)
        assert status == 404, path
    for path in ("/metrics", "/readyz", "/healthz"):
        status, _ = agents.call("GET", path)
        assert status == 404, path
    assert api.bound() == {}
    assert "bind" not in api.calls
    # Each on its own port: the push lands in the one store the verbs read.
    status, body = agents.call("POST", "/v1/nodes/n/snapshot", document)
    assert status == 200, body
    status, body = schedulers.call("POST", "/filter", {"Pod": pod, "NodeNames": ["n"]})
    assert status == 200, body
    assert body["NodeNames"] == ["n"]
    status, body = schedulers.call("POST", "/bind", BIND)
    assert (status, body) == (200, {"Error": ""})
    assert [p["metadata"]["uid"] for p in api.bound()["n"]] == ["g"]
    status, _ = schedulers.call("GET", "/healthz")
    assert status == 200
