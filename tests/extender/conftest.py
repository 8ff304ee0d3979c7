"""A real extender on 127.0.0.1 (uvicorn in a thread), and a small HTTP client."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import uvicorn

from cpumanager.extender.binding import PodSource
from cpumanager.extender.fanout import Fanout
from cpumanager.extender.server import ExtenderConfig, create_app
from cpumanager.extender.store import NodeStore

TOKEN = b"s3cret-token"


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Extender:
    base: str
    store: NodeStore
    clock: FakeClock

    def call(
        self, method: str, path: str, body: Any = None, *, token: bytes | None = TOKEN
    ) -> tuple[int, Any]:
        data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method)
        if token is not None:
            request.add_header("Authorization", "Bearer " + token.decode())
        request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                status, raw = response.status, response.read()
        except urllib.error.HTTPError as err:
            status, raw = err.code, err.read()
        try:
            return status, json.loads(raw)
        except ValueError:
            return status, raw.decode()


def start_extender(
    config: ExtenderConfig,
    *,
    fanout: Fanout | None = None,
    api: PodSource | None = None,
    clock: FakeClock | None = None,
) -> tuple[Extender, uvicorn.Server, threading.Thread]:
    clock = clock or FakeClock()
    store = NodeStore(clock=clock)
    app = create_app(config, store, fanout=fanout, api=api)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            pytest.fail("the extender did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    return Extender(f"http://127.0.0.1:{port}", store, clock), server, thread


@pytest.fixture
def extender(request: pytest.FixtureRequest) -> Iterator[Extender]:
    marker = request.node.get_closest_marker("extender_config")
    options = marker.kwargs if marker else {}
    api = options.pop("api", None)
    config = ExtenderConfig(token=TOKEN, **options)
    running, server, thread = start_extender(config, api=api)
    yield running
    server.should_exit = True
    thread.join(timeout=10)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "extender_config(**kw): options of the test's extender")
