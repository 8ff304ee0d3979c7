"""``--log-format``: one line per event, text or one JSON object, control characters inert."""

from __future__ import annotations

import json
import logging

import pytest

from cpumanager.cli.logs import configure, log


def test_text_lines_escape_control_characters(capsys: pytest.CaptureFixture[str]) -> None:
    configure("text")
    log("publish", "failed: \x1b[31mred", node="n\n1")
    err = capsys.readouterr().err
    assert err == "cpumanager: publish: failed: \\x1b[31mred node=n\\n1\n"


def test_json_lines_carry_the_fields(capsys: pytest.CaptureFixture[str]) -> None:
    configure("json")
    log("extender", "starting", level=logging.WARNING, listen="http://127.0.0.1:1", workers=2)
    (line,) = capsys.readouterr().err.splitlines()
    event = json.loads(line)
    assert event["logger"] == "cpumanager.extender"
    assert event["level"] == "warning"
    assert (event["msg"], event["listen"], event["workers"]) == (
        "starting",
        "http://127.0.0.1:1",
        2,
    )
    assert event["time"].endswith("Z")


def test_level_filters(capsys: pytest.CaptureFixture[str]) -> None:
    configure("text", "warning")
    log("agent", "quiet")
    log("agent", "loud", level=logging.ERROR)
    assert capsys.readouterr().err == "cpumanager: agent: loud\n"
