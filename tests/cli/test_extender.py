"""`cpumanager extender`'s options: refused before anything is served."""

from __future__ import annotations

import pytest

from tests.cli.runner import run_main


@pytest.mark.parametrize(
    ("argv", "code", "says"),
    [
        (["--workers", "0"], 2, "--workers"),
        (["--workers", "many"], 2, "--workers"),
        (["--listen", "nowhere"], 1, "--listen 'nowhere' is not HOST:PORT"),
    ],
    ids=["zero workers", "workers not a number", "bad listen"],
)
def test_bad_options_are_refused(argv: list[str], code: int, says: str) -> None:
    result = run_main(["extender", *argv])
    assert result.exit_code == code
    assert says in result.stderr


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
