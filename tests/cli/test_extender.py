"""`cpumanager extender`'s options: refused before anything is served."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from tests.cli.runner import run_main
from tests.extender.conftest import TOKEN


@pytest.mark.parametrize(
    ("argv", "code", "says"),
    [
        (["--workers", "0"], 2, "--workers"),
        (["--workers", "many"], 2, "--workers"),
        (["--listen", "nowhere"], 1, "--listen 'nowhere' is not HOST:PORT"),
        (["--push-listen", "nowhere"], 1, "--push-listen 'nowhere' is not HOST:PORT"),
        (
            ["--listen", "127.0.0.1:9", "--push-listen", "0.0.0.0:9"],
            1,
            "--push-listen needs a port of its own",
        ),
    ],
    ids=["zero workers", "workers not a number", "bad listen", "bad push listen", "one port"],
)
def test_bad_options_are_refused(argv: list[str], code: int, says: str) -> None:
    result = run_main(["extender", *argv])
    assert result.exit_code == code
    assert says in result.stderr


@pytest.mark.parametrize("option", ["--assume-ttl", "--stale-after", "--ready-after"])
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e9", "0.5", "soon"])
def test_seconds_must_be_finite_and_bounded(option: str, value: str) -> None:
    if option == "--ready-after" and value == "0.5":
        value = "-1"  # half a second is a fine wait before ready
    # an unusable --listen: an accepted value ends at the listen check, never serving
    result = run_main(["extender", "--listen", "nowhere", "--no-api", option, value])
    assert result.exit_code == 2
    assert option in result.stderr
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error")]
    assert len(errors) == 1
    assert option in errors[0]


def test_help_names_the_workers_option() -> None:
    result = run_main(["extender", "--help"])
    assert result.exit_code == 0
    assert "--workers" in result.output


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--auth", "tokenreview", "--no-api"], "--auth tokenreview needs API server access"),
        (["--kubeconfig", "/nonexistent/kubeconfig"], "no usable cluster configuration"),
    ],
    ids=["tokenreview without api", "missing kubeconfig"],
)
def test_cluster_options_are_refused_in_one_line(argv: list[str], says: str) -> None:
    result = run_main(["extender", "--listen", "127.0.0.1:1", *argv])
    assert result.exit_code == 1
    assert says in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_malformed_agent_service_account_is_refused(tmp_path) -> None:
    config = tmp_path / "kubeconfig"
    config.write_text(
        '{"apiVersion": "v1", "kind": "Config", "current-context": "x",'
        ' "clusters": [{"name": "c", "cluster": {"server": "http://127.0.0.1:1"}}],'
        ' "users": [{"name": "u", "user": {"token": "t"}}],'
        ' "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}]}'
    )
    result = run_main(
        [
            "extender",
            "--listen",
            "127.0.0.1:1",
            "--kubeconfig",
            str(config),
            "--auth",
            "tokenreview",
            "--agent-service-account",
            "no-colon",
        ]
    )
    assert result.exit_code == 1
    assert "is not NAMESPACE:NAME" in result.stderr


def test_start_line_names_the_address_and_the_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cpumanager.cli import extender as command

    served: list[Any] = []

    async def record(servers: list[Any]) -> None:
        served.extend(servers)

    monkeypatch.setattr(command, "serve_together", record)
    token = tmp_path / "token"
    token.write_text("s3cret\n")
    argv = ["extender", "--listen", "127.0.0.1:18888", "--token-file", token]
    result = run_main([*argv, "--log-format", "json"])
    assert result.exit_code == 0, result.stderr
    start = json.loads(result.stderr.splitlines()[0])
    assert start["msg"] == "starting"
    assert start["listen"] == "http://127.0.0.1:18888"
    assert start["token"] == "set"
    assert start["stale"] == "fail"
    assert "s3cret" not in result.stderr
    assert start["pushListen"] == "same"
    assert [(s.config.host, s.config.port) for s in served] == [("127.0.0.1", 18888)]
    text = run_main(argv)
    assert text.stderr.startswith("cpumanager: extender: starting listen=http://127.0.0.1:18888")
    served.clear()
    split = run_main([*argv, "--push-listen", "0.0.0.0:18889", "--log-format", "json"])
    assert split.exit_code == 0, split.stderr
    assert json.loads(split.stderr.splitlines()[0])["pushListen"] == "http://0.0.0.0:18889"
    assert [(s.config.host, s.config.port) for s in served] == [
        ("127.0.0.1", 18888),
        ("0.0.0.0", 18889),
    ]
    assert served[1].config.lifespan == "off"  # the schedulers' listener owns the lifespan


def test_access_log_one_line_per_request(capsys: pytest.CaptureFixture[str]) -> None:
    from cpumanager.cli.extender import access_logged
    from cpumanager.cli.logs import configure
    from cpumanager.extender.server import ExtenderConfig, create_app

    configure("json")
    app = access_logged(create_app(ExtenderConfig(token=TOKEN)))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        while not server.started:
            assert thread.is_alive()
            time.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        base = f"http://127.0.0.1:{port}"
        with urllib.request.urlopen(base + "/healthz", timeout=10) as answer:
            assert answer.status == 200
        refused = urllib.request.Request(base + "/v1/nodes/n1/snapshot", data=b"{}", method="POST")
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(refused, timeout=10)
        assert err.value.code == 401
        err.value.close()
    finally:
        server.should_exit = True
        thread.join(timeout=10)
    lines = [json.loads(ln) for ln in capsys.readouterr().err.splitlines() if ln.startswith("{")]
    access = [ln for ln in lines if ln["logger"] == "cpumanager.access"]
    assert [(a["method"], a["path"], a["status"]) for a in access] == [
        ("GET", "/healthz", 200),
        ("POST", "/v1/nodes/n1/snapshot", 401),
    ]
    assert all(a["ms"] >= 0 and a["client"].startswith("127.0.0.1:") for a in access)
