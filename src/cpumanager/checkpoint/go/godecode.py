"""``encoding/json.Unmarshal`` into Go types as data (:mod:`gotypes`), as the kubelet decodes.

The input is the tree of :mod:`gojson` (syntax already checked) and a pre-initialised value:
keys fold case, unknown keys are ignored, ``null`` makes maps, slices, pointers and ``[]byte``
nil and leaves other values alone, a duplicate key decodes *into* the value already there
(structs and maps merge, slice elements below the old length are decoded into), map elements
start from zero, integer map keys parse as ``strconv.ParseInt``, ``[]byte`` is base64 (or an
array of bytes). The first type error is raised with Go's text: ``json: cannot unmarshal
array into Go struct field PodDevicesEntry.Data.PodDeviceEntries.DeviceIDs of type
checkpoint.DevicesPerNUMA`` (innermost struct, then the path of JSON field names; map keys
add nothing).
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from typing import Any, NoReturn

from cpumanager.checkpoint.go import gojson
from cpumanager.checkpoint.go.gojson import JSONArray, JSONNumber, JSONObject, JSONValue
from cpumanager.checkpoint.go.gotypes import (
    GoBytes,
    GoMap,
    GoScalar,
    GoSlice,
    GoStruct,
    GoType,
    ScalarKind,
    zero,
)

__all__ = ["GoTypeError", "unmarshal"]

_INT_RANGE = {
    "int": (-(1 << 63), (1 << 63) - 1),
    "int64": (-(1 << 63), (1 << 63) - 1),
    "uint64": (0, (1 << 64) - 1),
    "uint8": (0, 255),
}
_SIGNED = re.compile(r"[+-]?[0-9]+")
_UNSIGNED = re.compile(r"[0-9]+")
_B64_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")


class GoTypeError(Exception):
    """Go's ``UnmarshalTypeError`` (or a base64 error), as its text."""


@dataclass(slots=True)
class _Context:
    """Go's decoder ``errorContext``: innermost struct and the JSON field path."""

    struct: str | None
    path: tuple[str, ...]


def _fail(what: str, go_type_name: str, ctx: _Context) -> NoReturn:
    if ctx.struct is not None or ctx.path:
        message = (
            f"json: cannot unmarshal {what} into Go struct field "
            f"{ctx.struct or ''}.{'.'.join(ctx.path)} of type {go_type_name}"
        )
    else:
        message = f"json: cannot unmarshal {what} into Go value of type {go_type_name}"
    raise GoTypeError(message)


def _integer(text: str, kind: ScalarKind, go_type_name: str, ctx: _Context) -> int:
    """``strconv.ParseInt``/``ParseUint`` with the range of ``kind``; Go's error otherwise.

    JSON number literals and map keys alike: a fraction, an exponent or a value out of range
    is ``cannot unmarshal number <text>``.
    """
    pattern = _UNSIGNED if kind in ("uint64", "uint8") else _SIGNED
    low, high = _INT_RANGE[kind]
    if pattern.fullmatch(text) and len(text) <= 40 and low <= int(text) <= high:
        return int(text)
    _fail(f"number {text}", go_type_name, ctx)


def _scalar(node: JSONValue, go_type: GoScalar, current: Any, ctx: _Context) -> Any:
    if node is None:
        return current
    if go_type.kind == "string":
        if isinstance(node, str):
            return node
        _fail(gojson.kind_of(node), go_type.name, ctx)
    if isinstance(node, JSONNumber):
        return _integer(node.text, go_type.kind, go_type.name, ctx)
    _fail(gojson.kind_of(node), go_type.name, ctx)


def _base64(text: str) -> bytes:
    """``base64.StdEncoding.Decode`` (which skips CR and LF), with Go's error text.

    The byte offset in the message is the first character outside the alphabet, or the end
    of the text for a padding error (Go's offset can differ for misplaced padding).
    """
    stripped = text.replace("\r", "").replace("\n", "")
    try:
        return base64.b64decode(stripped.encode("ascii"), validate=True)
    except (UnicodeEncodeError, binascii.Error, ValueError):
        pass
    bad = next((i for i, ch in enumerate(stripped) if ch not in _B64_ALPHABET), len(stripped))
    message = f"illegal base64 data at input byte {bad}"
    raise GoTypeError(message)


def _bytes(node: JSONValue, go_type: GoBytes, current: Any, ctx: _Context) -> Any:
    if node is None:
        return None
    if isinstance(node, str):
        return _base64(node)
    if isinstance(node, JSONArray):
        byte = GoScalar("uint8", "uint8")
        return bytes(_scalar(item, byte, 0, ctx) for item in node.items)
    _fail(gojson.kind_of(node), go_type.name, ctx)


def _slice(node: JSONValue, go_type: GoSlice, current: Any, ctx: _Context) -> Any:
    if node is None:
        return None
    if not isinstance(node, JSONArray):
        _fail(gojson.kind_of(node), go_type.name, ctx)
    old = current or ()
    out = []
    for index, item in enumerate(node.items):
        base = old[index] if index < len(old) else zero(go_type.elem)
        out.append(_value(item, go_type.elem, base, ctx))
    return tuple(out)


def _map(node: JSONValue, go_type: GoMap, current: Any, ctx: _Context) -> Any:
    if node is None:
        return None
    if not isinstance(node, JSONObject):
        _fail(gojson.kind_of(node), go_type.name, ctx)
    out: dict[Any, Any] = {} if current is None else dict(current)
    key_type = go_type.key
    elem_zero = zero(go_type.elem)
    for key, item in node.members:
        parsed: Any = key
        if key_type.kind != "string":
            parsed = _integer(key, key_type.kind, key_type.name, ctx)
        out[parsed] = _value(item, go_type.elem, elem_zero, ctx)
    return out


_FOLDED: dict[str, str] = {}
_FOLD_CACHE_LIMIT = 1024


def _fold(key: str) -> str:
    """``gojson.fold_key``, remembered: the same few field names repeat in every entry."""
    found = _FOLDED.get(key)
    if found is None:
        found = gojson.fold_key(key)
        if len(_FOLDED) < _FOLD_CACHE_LIMIT:
            _FOLDED[key] = found
    return found


def _struct(node: JSONValue, go_type: GoStruct, current: Any, ctx: _Context) -> Any:
    if node is None:
        return current
    if not isinstance(node, JSONObject):
        _fail(gojson.kind_of(node), go_type.name, ctx)
    values = [getattr(current, attr) for attr in go_type.attr_names]
    folded = go_type.folded
    for key, item in node.members:
        index = folded.get(_fold(key))
        if index is None:
            continue
        spec = go_type.fields[index]
        inner = _Context(go_type.short_name, (*ctx.path, spec.json_name))
        values[index] = _value(item, spec.type, values[index], inner)
    return go_type.cls(*values)


def _value(node: JSONValue, go_type: GoType, current: Any, ctx: _Context) -> Any:
    if isinstance(go_type, GoScalar):
        return _scalar(node, go_type, current, ctx)
    if isinstance(go_type, GoStruct):
        return _struct(node, go_type, current, ctx)
    if isinstance(go_type, GoMap):
        return _map(node, go_type, current, ctx)
    if isinstance(go_type, GoSlice):
        return _slice(node, go_type, current, ctx)
    if isinstance(go_type, GoBytes):
        return _bytes(node, go_type, current, ctx)
    if node is None:
        return None
    base = current if current is not None else zero(go_type.elem)
    return _struct(node, go_type.elem, base, ctx)


def unmarshal(tree: JSONValue, go_type: GoStruct, initial: Any) -> Any:
    """``json.Unmarshal(data, &initial)``: the decoded value, or GoTypeError."""
    return _value(tree, go_type, initial, _Context(None, ()))
