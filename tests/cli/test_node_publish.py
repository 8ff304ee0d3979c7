"""`node publish --once` tells the truth in its exit code; its logs are one line each."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from cpumanager.extender.server import ExtenderConfig
from tests.cli.runner import Run, run_main
from tests.extender.conftest import TOKEN, Extender, start_extender
from tests.nodeview.fixture_nodes import NODES_DIR

NODE = NODES_DIR / "kubeadm"


@pytest.fixture
def ext() -> Iterator[Extender]:
    running, server, thread = start_extender(ExtenderConfig(token=TOKEN))
    yield running
    server.should_exit = True
    thread.join(timeout=10)


def _publish(tmp_path: Path, url: str, token: bytes, *extra: str) -> Run:
    token_file = tmp_path / "token"
    token_file.write_bytes(token + b"\n")
    return run_main(
        [
            "node", "publish", "--to", url, "--token-file", token_file, "--once",
            "--root", NODE, "--kubelet-root", NODE / "var/lib/kubelet",
            "--pods", NODE / "pods.json", "--socket", NODE / "no.sock", "--timeout", "2",
            *extra,
        ]
    )  # fmt: skip


def test_delivered_exits_0_with_a_start_line(ext: Extender, tmp_path: Path) -> None:
    result = _publish(tmp_path, ext.base, TOKEN)
    assert result.exit_code == 0, result.stderr
    first = result.stderr.splitlines()[0]
    assert first.startswith("cpumanager: publish: starting to=" + ext.base)
    assert "token=set" in first
    assert TOKEN.decode() not in result.stderr


def test_refused_token_exits_1_with_the_cause(ext: Extender, tmp_path: Path) -> None:
    result = _publish(tmp_path, ext.base, b"wrong")
    assert result.exit_code == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith(f"cpumanager: error: nothing delivered to {ext.base}: push answered 401")
    assert "--token-file" in last


def test_unreachable_exits_3(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = _publish(tmp_path, f"http://127.0.0.1:{port}", TOKEN)
    assert result.exit_code == 3
    assert "answered nothing" in result.stderr
    assert "refused" in result.stderr.lower()


def test_dns_failure_keeps_its_cause(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_such_host(*args: object, **kwargs: object) -> object:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", no_such_host)
    result = _publish(tmp_path, "http://extender.invalid:8888", TOKEN)
    assert result.exit_code == 3
    assert "Name or service not known" in result.stderr.strip().splitlines()[-1]


def test_json_logs_are_one_object_a_line(ext: Extender, tmp_path: Path) -> None:
    result = _publish(tmp_path, ext.base, TOKEN, "--log-format", "json")
    assert result.exit_code == 0, result.stderr
    lines = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]
    assert [line["msg"] for line in lines] == ["starting", "pushed"]
    assert lines[0]["logger"] == "cpumanager.publish"
    assert lines[0]["to"] == ext.base
    assert {"time", "level"} <= set(lines[1])
