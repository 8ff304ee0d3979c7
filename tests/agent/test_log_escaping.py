"""Names and uids from files are logged escaped (issue 11, item 7)."""

from __future__ import annotations

import pytest

from cpumanager.adapters.memory_store import InMemoryStore
from cpumanager.checkpoint.cpu.codec import encode_v2
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.printable import printable
from cpumanager.core.state import StateSnapshot
from tests.agent.test_loop import make

FORGED = "x\n2026-01-01 INFO cpumanager.agent: all good"


def test_a_stored_uid_with_a_newline_is_logged_on_one_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    stored = StateSnapshot("static", CPUSet.parse("0-2,4-7"), {FORGED: {"main": CPUSet.parse("3")}})
    s = make(store=InMemoryStore(encode_v2(stored)))
    with caplog.at_level("INFO", logger="cpumanager.agent"):
        report = s.loop.tick()
    assert [e["uid"] for e in report.released] == [FORGED]
    released = [r.getMessage() for r in caplog.records if "released CPUs" in r.getMessage()]
    assert len(released) == 1
    assert "\n" not in released[0]
    assert "x\\x0a2026" in released[0]


@pytest.mark.parametrize(
    ("text", "expected"),
    [("plain", "plain"), ("a\nb", "a\\x0ab"), ("\x1b[2J", "\\x1b[2J"), ("a\\b", "a\\\\b"),
     ("\u2028", "\\u2028"), ("é", "é")],
)  # fmt: skip
def test_printable(text: str, expected: str) -> None:
    assert printable(text) == expected
