"""Text from files and manifests made safe for one log line (pure).

File names and ``metadata.uid`` values come from whoever wrote the workloads directory; a
newline in one would forge a log line, an escape sequence would rewrite the terminal. Every
such value is logged through :func:`printable`, which keeps printable text as it is and
writes everything else (controls, separators, backslashes) as Python escapes.
"""

from __future__ import annotations

__all__ = ["printable"]

_LIMIT = 512


def _escape(char: str) -> str:
    if char == "\\":
        return "\\\\"
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def printable(text: str, *, limit: int = _LIMIT) -> str:
    """``text`` with non-printable characters escaped, cut at ``limit`` characters."""
    if text.isprintable() and "\\" not in text and len(text) <= limit:
        return text
    cut = text[:limit]
    out = "".join(c if c.isprintable() and c != "\\" else _escape(c) for c in cut)
    return out + ("..." if len(text) > limit else "")
