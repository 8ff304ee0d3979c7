"""Go types as data, and three things the kubelet does to values of them, byte for byte.

A checkpoint struct is described once (:class:`GoStruct` with its fields and tags, maps,
slices, pointers, scalars) and three generic walkers serve every checkpoint kind:

* :func:`unmarshal` is ``encoding/json.Unmarshal`` into a pre-initialised value, over the
  tree of :mod:`gojson` (syntax already checked): keys fold case, unknown keys are ignored,
  ``null`` makes maps, slices, pointers and ``[]byte`` nil and leaves other values alone,
  a duplicate key decodes *into* the value already there (structs and maps merge, slice
  elements below the old length are decoded into), map elements start from zero, integer
  map keys parse as ``strconv.ParseInt``, ``[]byte`` is base64 (or an array of bytes). The
  first type error is raised with Go's text: ``json: cannot unmarshal array into Go struct
  field PodDevicesEntry.Data.PodDeviceEntries.DeviceIDs of type checkpoint.DevicesPerNUMA``
  (innermost struct, then the path of JSON field names; map keys add nothing).
* :func:`marshal` is ``json.Marshal``: fields in declaration order, ``omitempty`` drops
  empty maps/strings, map keys are written as strings and sorted *as strings* (so ``"10"``
  sorts before ``"2"``), nil maps/slices/pointers are ``null``, ``[]byte`` is standard base64.
* :func:`spew` is go-spew's ``%#v`` under the kubelet's hashing configuration
  (``SortKeys``, ``DisableMethods``, ``SpewKeys``; ``k8s.io/apimachinery/pkg/util/dump.ForHash``
  adds ``DisablePointerAddresses`` and ``DisableCapacities``, which ``%#v`` never prints
  anyway). Types are printed in parentheses except for map keys/values and slice elements;
  a pointer there prints ``<*>``; nil maps, slices and pointers print ``<nil>``; map keys sort
  by value (integers numerically, strings bytewise); a ``[]byte`` prints its bytes in decimal.
  One spew quirk is kept: a nil pointer that is the last value of a map leaves the
  formatter's "ignore next type" flag set, so the *next* struct field is printed without its
  type.

Values: a struct is an instance of its frozen dataclass, a map a ``dict`` (``None`` = nil),
a slice a ``tuple`` (``None`` = nil), ``[]byte`` ``bytes`` (``None`` = nil), a pointer its
struct or ``None``. Treat them as read-only.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field, fields
from typing import Any, Literal, NoReturn

from cpumanager.checkpoint import gojson
from cpumanager.checkpoint.checksum import clean_text
from cpumanager.checkpoint.gojson import JSONArray, JSONNumber, JSONObject, JSONValue

__all__ = [
    "GoBytes",
    "GoField",
    "GoMap",
    "GoPtr",
    "GoScalar",
    "GoSlice",
    "GoStruct",
    "GoType",
    "GoTypeError",
    "marshal",
    "spew",
    "unmarshal",
    "zero",
]

ScalarKind = Literal["string", "int", "int64", "uint64", "uint8"]
_INT_RANGE = {
    "int": (-(1 << 63), (1 << 63) - 1),
    "int64": (-(1 << 63), (1 << 63) - 1),
    "uint64": (0, (1 << 64) - 1),
    "uint8": (0, 255),
}
_SIGNED = re.compile(r"[+-]?[0-9]+")
_UNSIGNED = re.compile(r"[0-9]+")
_B64_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")


@dataclass(frozen=True, slots=True)
class GoScalar:
    """A string or integer kind; ``name`` is its Go type as reflect prints it."""

    kind: ScalarKind
    name: str


@dataclass(frozen=True, slots=True)
class GoBytes:
    """``[]byte``: base64 in JSON, decimal bytes in spew."""

    name: str = "[]uint8"


@dataclass(frozen=True, slots=True)
class GoSlice:
    elem: GoType
    name: str


@dataclass(frozen=True, slots=True)
class GoMap:
    key: GoScalar
    elem: GoType
    name: str


@dataclass(frozen=True, slots=True)
class GoPtr:
    """A pointer to a struct (the only pointers the checkpoints hold)."""

    elem: GoStruct

    @property
    def name(self) -> str:
        return "*" + self.elem.name


@dataclass(frozen=True, slots=True)
class GoField:
    go_name: str
    json_name: str
    type: GoType
    omitempty: bool = False


@dataclass(frozen=True, slots=True)
class GoStruct:
    """A struct type; ``cls`` is a frozen dataclass whose fields follow ``fields`` in order."""

    package: str
    short_name: str
    cls: type
    fields: tuple[GoField, ...]
    attr_names: tuple[str, ...] = field(default=(), init=False, compare=False)
    folded: dict[str, int] = field(default_factory=dict, init=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        names = tuple(f.name for f in fields(self.cls))
        if len(names) != len(self.fields):
            message = (
                f"{self.cls.__name__} has {len(names)} fields, "
                f"{self.short_name} has {len(self.fields)}"
            )
            raise ValueError(message)
        object.__setattr__(self, "attr_names", names)
        folded = {gojson.fold_key(f.json_name): i for i, f in enumerate(self.fields)}
        object.__setattr__(self, "folded", folded)

    @property
    def name(self) -> str:
        return f"{self.package}.{self.short_name}"

    def attrs(self) -> tuple[str, ...]:
        return self.attr_names


GoType = GoScalar | GoBytes | GoSlice | GoMap | GoPtr | GoStruct


def zero(go_type: GoType) -> Any:
    """Go's zero value of ``go_type``."""
    if isinstance(go_type, GoScalar):
        return "" if go_type.kind == "string" else 0
    if isinstance(go_type, GoStruct):
        return go_type.cls(*(zero(f.type) for f in go_type.fields))
    return None


# --- unmarshal ----------------------------------------------------------------------------


class GoTypeError(Exception):
    """Go's ``UnmarshalTypeError`` (or a base64 error), as its text."""


@dataclass(slots=True)
class _Context:
    """Go's decoder ``errorContext``: innermost struct and the JSON field path."""

    struct: str | None
    path: tuple[str, ...]


def _kind_of(value: JSONValue) -> str:
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, JSONNumber):
        return "number"
    if isinstance(value, JSONObject):
        return "object"
    return "array"


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
        _fail(_kind_of(node), go_type.name, ctx)
    if isinstance(node, JSONNumber):
        return _integer(node.text, go_type.kind, go_type.name, ctx)
    _fail(_kind_of(node), go_type.name, ctx)


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
    _fail(_kind_of(node), go_type.name, ctx)


def _slice(node: JSONValue, go_type: GoSlice, current: Any, ctx: _Context) -> Any:
    if node is None:
        return None
    if not isinstance(node, JSONArray):
        _fail(_kind_of(node), go_type.name, ctx)
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
        _fail(_kind_of(node), go_type.name, ctx)
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
        _fail(_kind_of(node), go_type.name, ctx)
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


# --- marshal ------------------------------------------------------------------------------


def _empty(value: Any, go_type: GoType) -> bool:
    if isinstance(go_type, GoScalar):
        return bool(value == zero(go_type))
    if isinstance(go_type, GoStruct):
        return False
    return value is None or len(value) == 0


def _marshal(value: Any, go_type: GoType, out: list[str]) -> None:
    if isinstance(go_type, GoScalar):
        out.append(gojson.encode_string(value) if go_type.kind == "string" else str(value))
    elif isinstance(go_type, GoStruct):
        out.append("{")
        first = True
        for spec, attr in zip(go_type.fields, go_type.attrs(), strict=True):
            item = getattr(value, attr)
            if spec.omitempty and _empty(item, spec.type):
                continue
            if not first:
                out.append(",")
            first = False
            out.append(gojson.encode_string(spec.json_name) + ":")
            _marshal(item, spec.type, out)
        out.append("}")
    elif value is None:
        out.append("null")
    elif isinstance(go_type, GoPtr):
        _marshal(value, go_type.elem, out)
    elif isinstance(go_type, GoBytes):
        out.append('"' + base64.b64encode(value).decode("ascii") + '"')
    elif isinstance(go_type, GoSlice):
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(",")
            _marshal(item, go_type.elem, out)
        out.append("]")
    else:
        out.append("{")
        keyed = sorted(((str(key), key) for key in value), key=lambda pair: pair[0])
        for index, (text, key) in enumerate(keyed):
            if index:
                out.append(",")
            out.append(gojson.encode_string(text) + ":")
            _marshal(value[key], go_type.elem, out)
        out.append("}")


def marshal(value: Any, go_type: GoType) -> bytes:
    """``json.Marshal(value)``: compact, no trailing newline."""
    out: list[str] = []
    _marshal(value, go_type, out)
    return "".join(out).encode("utf-8")


# --- spew ---------------------------------------------------------------------------------


class _Spew:
    """go-spew's ``formatState`` for ``%#v``, reduced to the kinds the checkpoints use."""

    __slots__ = ("ignore_next_type", "out")

    def __init__(self) -> None:
        self.out: list[str] = []
        self.ignore_next_type = False

    def pointer(self, value: Any, go_type: GoPtr) -> None:
        if value is None:
            if self.ignore_next_type:
                self.out.append("<nil>")  # the flag stays set, as in go-spew
                return
            self.out.append(f"({go_type.name})<nil>")
            return
        if self.ignore_next_type:
            self.out.append("<*>")
        else:
            self.out.append(f"({go_type.name})")
        self.ignore_next_type = True
        self.format(value, go_type.elem)

    def format(self, value: Any, go_type: GoType) -> None:
        if isinstance(go_type, GoPtr):
            self.pointer(value, go_type)
            return
        out = self.out
        if not self.ignore_next_type:
            out.append(f"({go_type.name})")
        self.ignore_next_type = False
        if isinstance(go_type, GoScalar):
            out.append(clean_text(value) if go_type.kind == "string" else str(value))
        elif isinstance(go_type, GoStruct):
            out.append("{")
            for index, (spec, attr) in enumerate(zip(go_type.fields, go_type.attrs(), strict=True)):
                if index:
                    out.append(" ")
                out.append(spec.go_name + ":")
                self.format(getattr(value, attr), spec.type)
            out.append("}")
        elif value is None:
            out.append("<nil>")
        elif isinstance(go_type, GoBytes):
            out.append("[" + " ".join(str(byte) for byte in value) + "]")
        elif isinstance(go_type, GoSlice):
            out.append("[")
            for index, item in enumerate(value):
                if index:
                    out.append(" ")
                self.ignore_next_type = True
                self.format(item, go_type.elem)
            out.append("]")
        else:
            self.map(value, go_type)

    def map(self, value: Any, go_type: GoMap) -> None:
        out = self.out
        out.append("map[")
        keys = sorted(value, key=clean_text) if go_type.key.kind == "string" else sorted(value)
        for index, key in enumerate(keys):
            if index:
                out.append(" ")
            self.ignore_next_type = True
            self.format(key, go_type.key)
            out.append(":")
            self.ignore_next_type = True
            self.format(value[key], go_type.elem)
        out.append("]")


def spew(value: Any, go_type: GoType, *, pointer: bool = False) -> str:
    """go-spew ``%#v`` of ``value`` (of ``&value`` when ``pointer``)."""
    state = _Spew()
    if pointer:
        assert isinstance(go_type, GoStruct)
        state.pointer(value, GoPtr(go_type))
    else:
        state.format(value, go_type)
    return "".join(state.out)
