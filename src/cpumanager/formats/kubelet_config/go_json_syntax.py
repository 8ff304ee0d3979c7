"""Go's encoding/json syntax errors, as its scanner words them (pure).

The kubelet finds a JSON file's ``apiVersion`` and ``kind`` with Go's ``encoding/json``
(the v1 scanner of the Go it is built with), and prints its error after ``couldn't get
version/kind; json parse error:``. Python's parser stops at the same character, mostly;
these turn its error into Go's words: ``invalid character 'k' looking for beginning of
object key string``, ``... after object key:value pair``, ``... in string literal``,
``... after decimal point in numeric literal``, ``... in literal true (expecting 'r')``,
``unexpected end of JSON input``.
"""

from __future__ import annotations

from collections.abc import Iterator

__all__ = ["ConstantError", "constant_problem", "go_json_syntax", "no_constant"]


class ConstantError(ValueError):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def no_constant(name: str) -> object:
    """``json.loads``' ``parse_constant``: Go's JSON has no NaN or Infinity."""
    raise ConstantError(name)


def constant_problem(text: str, name: str) -> str:
    """Go's scanner on the first ``NaN``/``Infinity``/``-Infinity`` outside a string."""
    position = _outside_strings(text, name)
    if name.startswith("-"):
        return f"invalid character {_go_quote_char(name[1])} in numeric literal"
    if position < 0:
        return f"invalid character {_go_quote_char(name[0])} looking for beginning of value"
    return f"invalid character {_go_quote_char(text[position])} looking for beginning of value"


def _outside_strings(text: str, word: str) -> int:
    """Where ``word`` first appears outside a JSON string, or -1."""
    for index, char in _structure(text):
        if char == word[0] and text.startswith(word, index):
            return index
    return -1


def _structure(text: str) -> Iterator[tuple[int, str]]:
    """Each character of ``text`` outside JSON strings (quotes included), with its index."""
    in_string = escaped = False
    for index, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        else:
            yield index, char


def go_json_syntax(text: str, err: ValueError) -> str:
    """Go's JSON syntax error for the first bad character (``invalid character 'k' looking
    for beginning of object key string``), as near as the position Python reports."""
    position = getattr(err, "pos", None)
    problem = str(err)
    if not isinstance(position, int) or position >= len(text):
        return "unexpected end of JSON input"
    if problem.startswith("Unterminated string"):
        return "unexpected end of JSON input"  # no closing quote before the end
    char = text[position]
    if problem.startswith("Invalid control character"):
        return f"invalid character {_go_quote_char(char)} in string literal"
    if problem.startswith("Invalid \\escape"):
        following = text[position + 1] if position + 1 < len(text) else ""
        if not following:
            return "unexpected end of JSON input"
        return f"invalid character {_go_quote_char(following)} in string escape code"
    shown = _go_quote_char(char)
    number = _number_problem(text, position)
    if number:
        return number
    if "Expecting property name" in problem:
        return f"invalid character {shown} looking for beginning of object key string"
    literal = _literal_problem(text, position)
    if "Expecting value" in problem and literal:
        return literal
    if "Expecting value" in problem:
        return f"invalid character {shown} looking for beginning of value"
    if "Extra data" in problem:
        return f"invalid character {shown} after top-level value"
    if "Expecting ':' delimiter" in problem:
        return f"invalid character {shown} after object key"
    if _innermost(text[:position]) == "[":
        return f"invalid character {shown} after array element"
    return f"invalid character {shown} after object key:value pair"


def _literal_problem(text: str, position: int) -> str | None:
    """Go's scanner inside ``true``, ``false`` or ``null`` (Python only says it expected a
    value): cut short, or the first character that differs."""
    word = {"t": "true", "f": "false", "n": "null"}.get(text[position])
    if word is None:
        return None
    for offset, wanted in enumerate(word):
        at = position + offset
        if at >= len(text):
            return "unexpected end of JSON input"
        if text[at] != wanted:
            found, expected = _go_quote_char(text[at]), _go_quote_char(wanted)
            return f"invalid character {found} in literal {word} (expecting {expected})"
    return None


def _number_problem(text: str, position: int) -> str | None:
    """Go's scanner inside a number Python ended early: ``1.`` or ``1e`` needs digits."""
    before = text[:position]
    char = text[position]
    if char == "." and before[-1:].isdigit():
        what = "after decimal point in numeric literal"
    elif char in "eE" and before[-1:].isdigit():
        what = "in exponent of numeric literal"
    else:
        return None
    rest = text[position + 1 :]
    if char in "eE" and rest[:1] in ("+", "-"):
        rest = rest[1:]
    if not rest:
        return "unexpected end of JSON input"
    if rest[0].isdigit():
        return None
    return f"invalid character {_go_quote_char(rest[0])} {what}"


def _go_quote_char(char: str) -> str:
    """Go's ``quoteChar``: ``'x'``, ``'\\''``, control characters escaped."""
    if char == "'":
        return "'\\''"
    if char == '"':
        return "'\"'"
    if char == "\\":
        return "'\\\\'"
    if char.isprintable():
        return f"'{char}'"
    named = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
    return "'" + named.get(char, f"\\x{ord(char):02x}") + "'"


def _innermost(prefix: str) -> str:
    """The innermost open bracket (``[`` or ``{``) at the end of ``prefix``, strings skipped."""
    stack: list[str] = []
    for _index, char in _structure(prefix):
        if char in "[{":
            stack.append(char)
        elif char in "]}" and stack:
            stack.pop()
    return stack[-1] if stack else ""
