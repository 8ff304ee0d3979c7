"""The API server through the kubernetes client (``adapters/kube_api.py``): kubeconfig
loading, no redirect followed (the token stays with the API server), timeouts, one-line
errors, the calls' shapes."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from cpumanager.adapters.kube_api import KubeApi, KubeApiError, api_client


class Recorder:
    def __init__(self) -> None:
        self.requests: list[tuple[str, str, str, bytes]] = []
        self.answers: dict[str, tuple[int, dict[str, str], bytes]] = {}
        self.hang = threading.Event()


def serve(recorder: Recorder) -> tuple[ThreadingHTTPServer, str]:
    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            auth = self.headers.get("authorization") or ""
            recorder.requests.append((self.command, self.path, auth, body))
            if self.path.startswith("/hang"):
                recorder.hang.wait(5)
            route = self.path.split("?")[0]
            status, headers, payload = recorder.answers.get(route, (404, {}, b"{}"))
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = _answer  # noqa: N815

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def kubeconfig(tmp_path: Path, server: str, token: str = "secret-token") -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": server}}],
                "users": [{"name": "u", "user": {"token": token}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    return path


@pytest.fixture
def api_server() -> Iterator[tuple[Recorder, str]]:
    recorder = Recorder()
    server, url = serve(recorder)
    yield recorder, url
    recorder.hang.set()
    server.shutdown()
    server.server_close()


def test_calls_carry_the_token_and_decode(api_server, tmp_path: Path) -> None:
    recorder, url = api_server
    pod = {"metadata": {"name": "p", "namespace": "ns", "uid": "u"}, "spec": {}}
    recorder.answers["/api/v1/namespaces/ns/pods/p"] = (200, {}, json.dumps(pod).encode())
    listed = {"metadata": {"resourceVersion": "7"}, "items": [pod]}
    recorder.answers["/api/v1/pods"] = (200, {}, json.dumps(listed).encode())
    recorder.answers["/api/v1/namespaces/ns/pods/p/binding"] = (201, {}, b"{}")
    api = api_client(kubeconfig(tmp_path, url))
    assert api.pod("ns", "p") == pod
    assert api.node_pods("n1") == ([pod], "7")
    api.bind("ns", "p", "u", "n1")
    methods = [(m, p.split("?")[0], a) for m, p, a, _ in recorder.requests]
    assert methods == [
        ("GET", "/api/v1/namespaces/ns/pods/p", "Bearer secret-token"),
        ("GET", "/api/v1/pods", "Bearer secret-token"),
        ("POST", "/api/v1/namespaces/ns/pods/p/binding", "Bearer secret-token"),
    ]
    assert "fieldSelector=spec.nodeName%3Dn1" in recorder.requests[1][1]
    binding = json.loads(recorder.requests[2][3])
    assert binding["target"] == {"apiVersion": "v1", "kind": "Node", "name": "n1"}
    assert binding["metadata"]["uid"] == "u"
    assert api.pod("ns", "missing") is None  # 404
    api.close()


def test_a_redirect_is_not_followed_and_the_token_goes_nowhere(api_server, tmp_path) -> None:
    recorder, url = api_server
    elsewhere = Recorder()
    other, other_url = serve(elsewhere)
    try:
        target = f"{other_url}/api/v1/namespaces/ns/pods/p"
        recorder.answers["/api/v1/namespaces/ns/pods/p"] = (302, {"Location": target}, b"")
        api = api_client(kubeconfig(tmp_path, url))
        with pytest.raises(KubeApiError, match="cannot read pod ns/p"):
            api.pod("ns", "p")
        assert elsewhere.requests == []
        api.close()
    finally:
        other.shutdown()
        other.server_close()


def test_errors_are_one_line_and_requests_time_out(api_server, tmp_path: Path) -> None:
    recorder, url = api_server
    message = json.dumps({"message": "pods is forbidden:\nUser cannot list"}).encode()
    recorder.answers["/api/v1/pods"] = (403, {}, message)
    api = api_client(kubeconfig(tmp_path, url), timeout=0.5)
    with pytest.raises(KubeApiError) as caught:
        api.node_pods("n1")
    assert "\n" not in str(caught.value)
    assert "HTTP 403: pods is forbidden: User cannot list" in str(caught.value)
    slow = api_client(kubeconfig(tmp_path, url + "/hang"), timeout=0.3)
    with pytest.raises(KubeApiError):
        slow.pod("ns", "p")
    api.close()
    slow.close()


def test_no_configuration_is_a_one_line_error(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(KubeApiError, match="no usable cluster configuration"):
        api_client()
    bad = tmp_path / "bad"
    bad.write_text("not: [a kubeconfig")
    with pytest.raises(KubeApiError, match="--kubeconfig"):
        api_client(bad)


def test_the_class_is_what_api_client_returns(api_server, tmp_path: Path) -> None:
    _, url = api_server
    api = api_client(kubeconfig(tmp_path, url))
    assert isinstance(api, KubeApi)
    api.close()


def test_the_watch_yields_events_and_ends_on_an_error_event(api_server, tmp_path) -> None:
    recorder, url = api_server
    pod = {"metadata": {"name": "p", "namespace": "ns"}, "spec": {"nodeName": "n1"}}
    lines = [
        {"type": "ADDED", "object": pod},
        {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "9"}}},
        {
            "type": "ERROR",
            "object": {
                "kind": "Status",
                "code": 410,
                "reason": "Expired",
                "message": "too old resource version",
            },
        },
    ]
    body = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    recorder.answers["/api/v1/pods"] = (200, {"Content-Type": "application/json"}, body)
    api = api_client(kubeconfig(tmp_path, url))
    seen: list[tuple[str, str]] = []

    def drain() -> None:
        for kind, obj in api.watch_node_pods("n1", "5", seconds=5):
            seen.append((kind, obj["metadata"].get("name")))

    with pytest.raises(KubeApiError, match="HTTP 410"):
        drain()
    assert seen[0] == ("ADDED", "p")  # a pod without containers is passed on, not validated
    query = recorder.requests[0][1]
    assert "watch=True" in query or "watch=true" in query
    assert "fieldSelector=spec.nodeName%3Dn1" in query
    assert "resourceVersion=5" in query
    api.close()


def test_an_empty_list_still_gives_its_version_and_a_consistent_list_asks_for_now(
    api_server, tmp_path: Path
) -> None:
    recorder, url = api_server
    empty = {"kind": "PodList", "metadata": {"resourceVersion": "42"}, "items": []}
    recorder.answers["/api/v1/pods"] = (200, {}, json.dumps(empty).encode())
    api = api_client(kubeconfig(tmp_path, url))
    # The watch resumes at the list's version even when the node has no pods.
    assert api.node_pods("n1") == ([], "42")
    assert "resourceVersion=0" in recorder.requests[-1][1]  # the cache, as it is
    assert api.node_pods("n1", consistent=True) == ([], "42")
    assert "resourceVersion" not in recorder.requests[-1][1]  # as of now
    recorder.answers["/api/v1/pods"] = (200, {}, b'["not a list"]')
    with pytest.raises(KubeApiError, match="not a PodList"):
        api.node_pods("n1")
    api.close()
