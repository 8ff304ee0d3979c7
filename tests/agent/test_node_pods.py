"""The agent's pod list from the API server (list, then watch on spec.nodeName) and its push
to every extender replica."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cpumanager.agent.publish import EveryEndpoint, NodePods, token_reader
from cpumanager.errors import HostError, InputError


class FakePodsApi:
    def __init__(self, events: list[tuple[str, dict[str, Any]]]) -> None:
        self.events = events
        self.calls: list[tuple[str, str]] = []

    def node_pods(self, node: str, *, active_only: bool = True):
        self.calls.append(("list", node))
        return [pod("a")], "41"

    def watch_node_pods(self, node: str, version: str, *, seconds: int = 300):
        self.calls.append(("watch", version))
        yield from self.events


def pod(name: str, phase: str = "Pending") -> dict[str, Any]:
    return {"metadata": {"namespace": "ns", "name": name}, "status": {"phase": phase}}


def test_the_list_then_the_watch_keep_the_file(tmp_path: Path) -> None:
    events = [
        ("ADDED", pod("b")),
        ("MODIFIED", pod("a", "Running")),
        ("BOOKMARK", {}),
        ("DELETED", pod("b")),
    ]
    api = FakePodsApi(events)
    dest = tmp_path / "pods.json"
    watcher = NodePods(api, "n1", dest)
    with pytest.raises(HostError, match="no pod list"):
        watcher.ready()
    watcher.once()
    watcher.ready()
    assert api.calls == [("list", "n1"), ("watch", "41")]
    items = json.loads(dest.read_text())["items"]
    assert [(p["metadata"]["name"], p["status"]["phase"]) for p in items] == [("a", "Running")]


def test_every_endpoint_is_pushed_and_the_worst_answer_counts(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("t1\n")
    sender = EveryEndpoint(
        "https://ext.ns.svc:8443",
        token_reader(token),
        resolve=lambda _n, _p: ["10.0.0.1", "10.0.0.2"],
    )
    answers = {"10.0.0.1": 200, "10.0.0.2": 200}
    seen: list[tuple[str, str]] = []

    def one(address: str, path: str, body: bytes) -> int:
        seen.append((address, path))
        return answers[address]

    sender._one = one  # type: ignore[method-assign]
    assert sender.post("/v1/nodes/n/heartbeat", b"{}") == 200
    assert {a for a, _ in seen} == {"10.0.0.1", "10.0.0.2"}
    answers["10.0.0.2"] = 409
    assert sender.post("/x", b"") == 409
    answers["10.0.0.2"] = 0
    assert sender.post("/x", b"") == 0
    token.write_text("t2")  # rotated: read again at the next push
    assert token_reader(token)() == b"t2"
    with pytest.raises(InputError, match="https"):
        EveryEndpoint("http://ext:8888", token_reader(None))
