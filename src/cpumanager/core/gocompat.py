"""Go's text conventions, where our messages and parsers must match the kubelet's.

One home for the small pieces of Go behaviour that several layers repeat: ``%q`` quoting
in error messages and ``strconv.ParseBool``. Go duration parsing lives with the kubelet
configuration that reads it (:func:`cpumanager.formats.kubelet_config.parse_go_duration`).
"""

from __future__ import annotations

__all__ = ["GO_FALSE", "GO_TRUE", "go_quote", "one_line", "parse_go_bool"]

# strconv.ParseBool accepts exactly these spellings.
GO_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
GO_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def parse_go_bool(text: str) -> bool | None:
    """Go's ``strconv.ParseBool``; None when the text is not a boolean."""
    if text in GO_TRUE:
        return True
    if text in GO_FALSE:
        return False
    return None


def go_quote(text: str) -> str:
    """Approximately Go's ``%q``: double quotes, ``\\"`` and ``\\\\``, non-printables escaped."""
    out = ['"']
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) <= 0xFF:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


def one_line(text: str) -> str:
    """``text`` as is when printable, else with Go-style escapes (for one-line messages)."""
    return text if text.isprintable() else go_quote(text)[1:-1]
