"""Error messages are one line by construction, whatever value they quote (issue 21)."""

from __future__ import annotations

import pytest

from cpumanager.errors import ConfigError, CpuManagerError, KubeletConfigInvalidError


@pytest.mark.parametrize("value", ["a\nb", "a\r\nb", "a\u2028b", "a\x85b", "a\x0bb\x0cc"])
def test_a_quoted_line_break_is_escaped(value: str) -> None:
    error = ConfigError(f'unknown policy: "{value}"; cpuManagerPolicy is "none" or "static"')
    assert len(error.message.splitlines()) == 1
    assert len(str(error).splitlines()) == 1
    assert error.message.startswith('unknown policy: "a\\')


def test_every_error_kind_is_one_line() -> None:
    many = KubeletConfigInvalidError(("first\nerror", "second"))
    assert len(many.message.splitlines()) == 1
    assert CpuManagerError("plain message").message == "plain message"
