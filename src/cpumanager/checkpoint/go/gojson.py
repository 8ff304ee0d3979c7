"""Go ``encoding/json`` as the kubelet uses it: a byte-exact writer and a Go-faithful reader.

Writer (``json.Marshal``): compact, no trailing newline; strings escape ``"`` ``\\`` and the
short forms ``\\n \\r \\t \\b \\f`` (Go >= 1.22 spells U+0008/U+000C as ``\\b``/``\\f``; kubelets
from v1.30 are built with it), other control characters as ``\\u00xx`` (lower-case hex), the
HTML-unsafe ``<`` ``>`` ``&`` as ``\\u003c`` ``\\u003e`` ``\\u0026``, U+2028/U+2029 as escapes,
and a lone surrogate (Go: invalid UTF-8) as ``\\ufffd``. Everything else is raw UTF-8.

Reader: parses into a small tree that keeps what Go's typed decoder can observe and Python's
``json`` would lose: duplicate keys in document order, number literals as text, Go's
replacement of invalid UTF-8 (one U+FFFD per bad byte) and of unpaired ``\\u`` surrogates.
Like Go, the whole input is checked for syntax before any value is used, so a syntax error
always wins over a type error. Nesting is walked with an explicit stack (Go allows 10,000
levels; Python's recursion limit must not decide).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NoReturn

from cpumanager.core.gocompat import go_quote

__all__ = [
    "GoJSONSyntaxError",
    "JSONArray",
    "JSONNumber",
    "JSONObject",
    "JSONValue",
    "encode_string",
    "fold_key",
    "kind_of",
    "parse",
]

MAX_DEPTH = 10_000


class GoJSONSyntaxError(ValueError):
    """A syntax error, worded as Go words it (``unexpected end of JSON input``, ...)."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset


@dataclass(frozen=True, slots=True)
class JSONNumber:
    """A number literal kept as its text: Go parses it only once the target type is known."""

    text: str


@dataclass(frozen=True, slots=True)
class JSONObject:
    """Members in document order, duplicates kept."""

    members: tuple[tuple[str, JSONValue], ...]


@dataclass(frozen=True, slots=True)
class JSONArray:
    items: tuple[JSONValue, ...]


JSONValue = str | bool | None | JSONNumber | JSONObject | JSONArray


def kind_of(value: JSONValue) -> str:
    """The word Go's decoder names a JSON value by in ``cannot unmarshal <kind> into ...``."""
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, JSONNumber):
        return "number"
    if isinstance(value, JSONObject):
        return "object"
    return "array"


# --- writer -----------------------------------------------------------------------------

_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}
for _code in range(0x20):
    _ESCAPES.setdefault(chr(_code), f"\\u{_code:04x}")
for _code in range(0xD800, 0xE000):
    _ESCAPES[chr(_code)] = "\\ufffd"
_NEEDS_ESCAPE = re.compile('["\\\\\x00-\x1f<>&\u2028\u2029\ud800-\udfff]')


def _escape(match: re.Match[str]) -> str:
    return _ESCAPES[match.group()]


def encode_string(text: str) -> str:
    """The JSON string literal Go's ``json.Marshal`` writes for ``text`` (quotes included)."""
    return '"' + _NEEDS_ESCAPE.sub(_escape, text) + '"'


# --- key matching -----------------------------------------------------------------------

_KEY_FOLD = str.maketrans({"\u212a": "k", "\u017f": "s"})


def fold_key(key: str) -> str:
    """Fold a JSON key the way Go matches it to an ASCII field name.

    ASCII letters fold case; U+212A (Kelvin) folds to ``k`` and U+017F (long s) to ``s``,
    the only non-ASCII runes whose simple case folding reaches an ASCII letter.
    """
    return "".join(ch.lower() if ch.isascii() else ch for ch in key.translate(_KEY_FOLD))


# --- reader -----------------------------------------------------------------------------

_WS = re.compile(rb"[ \t\n\r]*")
# A string body: anything but quote, backslash and control bytes, or a valid escape.
_STRING = re.compile(rb'"((?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*)"')
_NUMBER = re.compile(rb"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_SIMPLE_ESCAPES = {
    ord('"'): '"',
    ord("\\"): "\\",
    ord("/"): "/",
    ord("b"): "\b",
    ord("f"): "\f",
    ord("n"): "\n",
    ord("r"): "\r",
    ord("t"): "\t",
}
_ESCAPE_OR_END = re.compile(rb"\\")


def _describe(byte: int) -> str:
    """Go's ``quoteChar``: how a scanner error names the offending byte (read as a rune)."""
    if byte == ord("'"):
        return "'\\''"
    if byte == ord('"'):
        return "'\"'"
    return "'" + go_quote(chr(byte))[1:-1] + "'"


def decode_go_utf8(raw: bytes) -> str:
    """Decode UTF-8 replacing each invalid byte by one U+FFFD, as Go's decoder does."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    parts: list[str] = []
    rest = raw
    while rest:
        try:
            parts.append(rest.decode("utf-8"))
            break
        except UnicodeDecodeError as err:
            parts.append(rest[: err.start].decode("utf-8"))
            parts.append("\ufffd")
            rest = rest[err.start + 1 :]
    return "".join(parts)


def _unquote(body: bytes) -> str:
    """Go's ``unquote`` of a scanned string body (escapes already known to be valid)."""
    if b"\\" not in body:
        return decode_go_utf8(body)
    out: list[str] = []
    pos = 0
    size = len(body)
    while pos < size:
        found = _ESCAPE_OR_END.search(body, pos)
        stop = size if found is None else found.start()
        if stop > pos:
            out.append(decode_go_utf8(body[pos:stop]))
        if found is None:
            break
        kind = body[stop + 1]
        if kind != ord("u"):
            out.append(_SIMPLE_ESCAPES[kind])
            pos = stop + 2
            continue
        code = int(body[stop + 2 : stop + 6], 16)
        pos = stop + 6
        if 0xD800 <= code < 0xE000:
            low = -1
            if body[pos : pos + 2] == b"\\u":
                low = int(body[pos + 2 : pos + 6], 16)
            if 0xD800 <= code < 0xDC00 and 0xDC00 <= low < 0xE000:
                out.append(chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)))
                pos += 6
            else:
                out.append("\ufffd")
            continue
        out.append(chr(code))
    return "".join(out)


# Contexts of errors inside one token, where Go's end-of-input space is itself refused.
_INSIDE_A_TOKEN = (
    "in string escape code",
    "in \\u hexadecimal character escape",
    "in literal ",
    "in numeric literal",
    "after decimal point in numeric literal",
    "in exponent of numeric literal",
)


class _Parser:
    """Iterative JSON parser over bytes producing :data:`JSONValue` trees."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def _ws(self) -> None:
        match = _WS.match(self.data, self.pos)
        assert match is not None  # the pattern matches the empty string
        self.pos = match.end()

    def _eof(self) -> NoReturn:
        message = "unexpected end of JSON input"
        raise GoJSONSyntaxError(message, len(self.data))

    def _bad(self, context: str) -> NoReturn:
        if self.pos >= len(self.data):
            if not context.startswith(_INSIDE_A_TOKEN):
                self._eof()
            # Go's scanner ends the input by stepping a space: inside a token (an escape, a
            # literal, a number) that space is the invalid character it reports.
            message = f"invalid character ' ' {context}"
            raise GoJSONSyntaxError(message, len(self.data))
        message = f"invalid character {_describe(self.data[self.pos])} {context}"
        raise GoJSONSyntaxError(message, self.pos)

    def _string(self) -> str:
        match = _STRING.match(self.data, self.pos)
        if match is None:
            self._fail_in_string()
        assert match is not None
        self.pos = match.end()
        return _unquote(match.group(1))

    def _fail_in_string(self) -> None:
        """Locate why a string did not scan, to word the error as Go does."""
        pos = self.pos + 1
        data = self.data
        while pos < len(data):
            byte = data[pos]
            if byte == ord('"'):  # pragma: no cover - the regex would have matched
                break
            if byte < 0x20:
                self.pos = pos
                self._bad("in string literal")
            if byte == ord("\\"):
                pos += 1
                if pos >= len(data):
                    self.pos = pos
                    self._bad("in string escape code")
                if data[pos] == ord("u"):
                    for offset in range(1, 5):
                        if pos + offset >= len(data):
                            self.pos = len(data)
                            self._bad("in \\u hexadecimal character escape")
                        if chr(data[pos + offset]) not in "0123456789abcdefABCDEF":
                            self.pos = pos + offset
                            self._bad("in \\u hexadecimal character escape")
                    pos += 5
                    continue
                if chr(data[pos]) not in '"\\/bfnrt':
                    self.pos = pos
                    self._bad("in string escape code")
            pos += 1
        self.pos = len(data)
        self._eof()

    def _scalar(self) -> JSONValue:
        data = self.data
        if self.pos >= len(data):
            self._eof()
        byte = data[self.pos]
        if byte == ord('"'):
            return self._string()
        for word, value in ((b"true", True), (b"false", False), (b"null", None)):
            if byte == word[0]:
                end = self.pos + len(word)
                for index in range(self.pos + 1, end):
                    if index >= len(data) or data[index] != word[index - self.pos]:
                        expected = _describe(word[index - self.pos])
                        self.pos = index
                        self._bad(f"in literal {word.decode()} (expecting {expected})")
                self.pos = end
                return value
        if byte == ord("-") or ord("0") <= byte <= ord("9"):
            match = _NUMBER.match(data, self.pos)
            if match is None:  # a lone '-'
                self.pos += 1
                self._bad("in numeric literal")
            self.pos = match.end()
            self._check_number_end(match)
            return JSONNumber(match.group().decode("ascii"))
        self._bad("looking for beginning of value")

    def _check_number_end(self, match: re.Match[bytes]) -> None:
        """Go rejects ``1.`` and ``1e`` inside the number, not after it."""
        data = self.data
        if self.pos >= len(data):
            return
        nxt = data[self.pos]
        if nxt == ord(".") and match.group(1) is None and match.group(2) is None:
            self.pos += 1
            self._bad("after decimal point in numeric literal")
        if nxt in b"eE" and match.group(2) is None:
            self.pos += 1
            if self.pos < len(data) and data[self.pos] in b"+-":
                self.pos += 1
            self._bad("in exponent of numeric literal")

    def value(self) -> JSONValue:
        """Parse one complete value (any depth) with an explicit stack."""
        # Each frame: [is_object, members_or_items, pending_key]
        stack: list[tuple[bool, list[object], list[str]]] = []
        data = self.data
        self._ws()
        while True:
            # --- parse a value start
            if self.pos >= len(data):
                self._eof()
            byte = data[self.pos]
            result: JSONValue
            if byte == ord("{") or byte == ord("["):
                if len(stack) >= MAX_DEPTH:
                    message = "exceeded max depth"
                    raise GoJSONSyntaxError(message, self.pos)
                is_object = byte == ord("{")
                self.pos += 1
                self._ws()
                closer = ord("}") if is_object else ord("]")
                if self.pos < len(data) and data[self.pos] == closer:
                    self.pos += 1
                    result = JSONObject(()) if is_object else JSONArray(())
                else:
                    keys: list[str] = []
                    stack.append((is_object, [], keys))
                    if is_object:
                        self._object_key(keys)
                    continue
            else:
                result = self._scalar()
            # --- attach the finished value to its parents, closing containers as they end
            while True:
                if not stack:
                    return result
                is_object, items, keys = stack[-1]
                if is_object:
                    items.append((keys.pop(), result))
                else:
                    items.append(result)
                self._ws()
                if self.pos >= len(data):
                    self._eof()
                byte = data[self.pos]
                if byte == ord(","):
                    self.pos += 1
                    self._ws()
                    if is_object:
                        self._object_key(keys)
                    break
                closer = ord("}") if is_object else ord("]")
                if byte != closer:
                    where = "object key:value pair" if is_object else "array element"
                    self._bad(f"after {where}")
                self.pos += 1
                stack.pop()
                frozen = tuple(items)
                result = JSONObject(frozen) if is_object else JSONArray(frozen)  # type: ignore[arg-type]

    def _object_key(self, keys: list[str]) -> None:
        data = self.data
        if self.pos >= len(data):
            self._eof()
        if data[self.pos] != ord('"'):
            self._bad("looking for beginning of object key string")
        keys.append(self._string())
        self._ws()
        if self.pos >= len(data):
            self._eof()
        if data[self.pos] != ord(":"):
            self._bad("after object key")
        self.pos += 1
        self._ws()


def parse(data: bytes) -> JSONValue:
    """Parse a whole document as Go's ``json.Unmarshal`` sees it, or raise GoJSONSyntaxError."""
    parser = _Parser(data)
    value = parser.value()
    parser._ws()
    if parser.pos < len(data):
        parser._bad("after top-level value")
    return value
