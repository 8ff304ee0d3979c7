"""Textual mutations of a checkpoint file: where a fast reader must agree with the exact one.

Each mutation targets one rule the C scanner and Go's decoder see differently (duplicate
keys, case-folded or unknown keys, ``null``, ``-0``, floats, out-of-range numbers, escapes,
non-ASCII, whitespace, key order, truncation, a wrong checksum).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from hypothesis import strategies as st

from cpumanager.errors import CheckpointError

NUMBER = re.compile(rb"(?<=[:\[,])-?[0-9]+")
STRING = re.compile(rb'"[^"\\]*"')
SEPARATOR = re.compile(rb"[:,\[\]{}]")
# a key and its scalar or flat-list value
PAIR = re.compile(rb'"[^"]*":(-?[0-9]+|"[^"]*"|\[[^\[\]{}]*\])')
NUMBERS = (
    b"-0",
    b"-1",
    b"0",
    b"1.0",
    b"1e3",
    b"18446744073709551616",
    b"9223372036854775808",
    b"-9223372036854775809",
    b"null",
    b"true",
    b'"5"',
    b"[]",
    b"{}",
)
STRINGS = (
    b'"a\\u0041"',
    b'"\xc3\xa9"',
    b'"\xff"',
    b'"memory"',
    b'"Size"',
    b'"size"',
    b'"SIZE"',
    b'"numaAffinity"',
    b'"type"',
    b'"-1"',
    b'"07"',
    b'"+7"',
    b'"AQI="',
    b'"AQI"',
    b'"A-I="',
    b'"x"',
    b'"x,y"',
    b'"{}"',
    b'""',
    b"null",
    b"7",
    b"[]",
    b"{}",
)
SEPARATORS = (b", ", b" :", b"\n", b"\t", b"", b",", b"{", b"]")


@st.composite
def mutated(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` with one to three tokens replaced, duplicated, dropped, or cut short."""
    out = data
    for _ in range(draw(st.integers(1, 3))):
        action = draw(
            st.sampled_from(["number", "string", "separator", "duplicate", "merge", "cut"])
        )
        if action == "merge":
            out = _merge(out, draw)
            continue
        pattern, choices = {
            "number": (NUMBER, NUMBERS),
            "string": (STRING, STRINGS),
            "separator": (SEPARATOR, SEPARATORS),
            "duplicate": (PAIR, ()),
            "cut": (SEPARATOR, ()),
        }[action]
        found = list(pattern.finditer(out))
        if not found:
            continue
        match = draw(st.sampled_from(found))
        start, end = match.span()
        if action == "duplicate":  # Go merges or overrides, Python keeps the last one
            out = out[:end] + b"," + match.group() + out[end:]
        elif action == "cut":
            out = out[:start]
        else:
            out = out[:start] + draw(st.sampled_from(choices)) + out[end:]
    return out


OBJECT_KEY = re.compile(rb'"[^"]*":\{')


@st.composite
def merged(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` with one object-valued key repeated without its first member."""
    return _merge(data, draw)


def _merge(data: bytes, draw: st.DrawFn) -> bytes:
    """An object-valued key again, without its first member: Go merges, Python replaces."""
    found = list(OBJECT_KEY.finditer(data))
    if not found:
        return data
    match = draw(st.sampled_from(found))
    depth = 0
    for end in range(match.end() - 1, len(data)):  # no braces inside these files' strings
        depth += {ord("{"): 1, ord("}"): -1}.get(data[end], 0)
        if depth == 0:
            break
    else:
        return data
    try:  # an earlier mutation may have broken it
        value = json.loads(data[match.end() - 1 : end + 1])
    except ValueError:
        return data
    rest = dict(list(value.items())[1:])
    copy = match.group()[:-1] + json.dumps(rest, separators=(",", ":")).encode()
    return data[: end + 1] + b"," + copy + data[end + 1 :]


def with_python_checksum(
    text: bytes, key: bytes, checksum_of: Callable[[bytes], int | None]
) -> bytes:
    """``text`` with its checksum made to match what Python's ``json`` reads from it.

    A mutation usually breaks the checksum, and a reader that misreads the mutated value
    would then refuse the file for the wrong reason: with the checksum of Python's reading
    in place, only a reader that reads as Go does gives the right verdict.
    """
    try:
        canonical = json.dumps(json.loads(text), separators=(",", ":")).encode()
    except (ValueError, RecursionError):
        return text
    checksum = checksum_of(canonical)
    if checksum is None:
        return text
    found = list(re.finditer(rb'"' + key + rb'":[0-9]+', text))
    if not found:
        return text
    start, end = found[-1].span()
    return text[:start] + b'"' + key + b'":' + str(checksum).encode() + text[end:]


def outcome(call: object) -> object:
    """A decode's value, or its error's type and text."""
    try:
        return call()  # type: ignore[operator]
    except CheckpointError as err:
        return type(err), str(err)
