"""A fast path to :func:`gojson.parse`'s tree through the C JSON scanner, for well-formed input.

``gojson.parse`` walks the bytes in Python to keep every rule of Go's decoder; on a large
checkpoint that walk is most of the decode time. Python's ``json`` scanner builds the same
tree when it is told to keep duplicate keys in order (``object_pairs_hook``) and number
literals as text (``parse_int``/``parse_float``), and when the input has none of the few
things the two decoders treat differently:

* bytes that are not valid UTF-8 (Go substitutes U+FFFD per bad byte);
* ``\\u`` escapes of surrogates (Go substitutes U+FFFD for unpaired ones);
* ``NaN``/``Infinity`` (Python accepts them, Go does not), and any syntax error at all
  (only ``gojson`` words the error as Go does);
* nesting deeper than Python's recursion allows (Go allows 10,000 levels).

Any of those sends the input to ``gojson.parse``, so the result (tree or error) is always
``gojson.parse``'s: the test suite checks the two against each other on every golden file
and on mutated ones.
"""

from __future__ import annotations

import json
import re
from typing import Any, NoReturn

from cpumanager.checkpoint.go import gojson
from cpumanager.checkpoint.go.gojson import JSONArray, JSONNumber, JSONObject, JSONValue

__all__ = ["parse"]

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


class _UnsupportedError(Exception):
    """The input needs Go's own rules: use the faithful parser."""


def _constant(_text: str) -> NoReturn:
    raise _UnsupportedError


def _array(items: list[Any]) -> JSONArray:
    return JSONArray(tuple(_array(item) if isinstance(item, list) else item for item in items))


def _pairs(pairs: list[tuple[str, Any]]) -> JSONObject:
    """Called bottom-up for every object: lists below it become JSONArray here."""
    return JSONObject(
        tuple((key, _array(value) if isinstance(value, list) else value) for key, value in pairs)
    )


_DECODER = json.JSONDecoder(
    object_pairs_hook=_pairs,
    parse_int=JSONNumber,
    parse_float=JSONNumber,
    parse_constant=_constant,
)


def parse(data: bytes) -> JSONValue:
    """The tree ``gojson.parse(data)`` returns (or its GoJSONSyntaxError), usually faster."""
    if _SURROGATE_ESCAPE.search(data) is None:
        try:
            text = data.decode("utf-8")
            if not text.startswith("\ufeff"):
                value = _DECODER.decode(text)
                return _array(value) if isinstance(value, list) else value
        except (UnicodeDecodeError, ValueError, RecursionError, _UnsupportedError):
            pass
    return gojson.parse(data)
