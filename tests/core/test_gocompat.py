"""Go's text conventions: %q quoting and strconv.ParseBool, as the kubelet's messages use them."""

from __future__ import annotations

import pytest

from cpumanager.core.gocompat import go_quote, one_line, parse_go_bool


@pytest.mark.parametrize(
    ("text", "quoted"),
    [
        ("plain", '"plain"'),
        ('a"\\\n\t\r\x01é\u2028', '"a\\"\\\\\\n\\t\\r\\x01é\\u2028"'),
        ("\U000e0001", '"\\U000e0001"'),
        ("", '""'),
    ],
)
def test_go_quote(text: str, quoted: str) -> None:
    assert go_quote(text) == quoted


def test_one_line_escapes_only_what_is_not_printable() -> None:
    assert one_line("plain name") == "plain name"
    assert one_line('say "hi"') == 'say "hi"'
    assert one_line("two\nlines") == "two\\nlines"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        *[(t, True) for t in ("1", "t", "T", "TRUE", "true", "True")],
        *[(t, False) for t in ("0", "f", "F", "FALSE", "false", "False")],
        *[(t, None) for t in ("yes", "tRUE", " true", "", "2", "on")],
    ],
)
def test_parse_go_bool_accepts_exactly_strconv_spellings(text: str, value: bool | None) -> None:
    assert parse_go_bool(text) is value
