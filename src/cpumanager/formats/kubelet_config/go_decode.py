"""A KubeletConfiguration decoded as Go's JSON decoder decodes it into v1beta1 (pure).

``decode_fields`` types every field (``v1beta1.FIELD_KINDS``) and the nested structs field
by field, with Go's rules and texts (measured on 1.32, bench/diff_kubelet_config.py):

* a value of the wrong type is kept as the first error and decoding goes on
  (``json: cannot unmarshal string into Go struct field KubeletConfiguration.maxPods of type
  int32``; nested: ``MemoryReservation.reservedMemory.numaNode``, Go's type names);
* a field with its own decoder (a ``metav1.Duration``, a ``resource.Quantity``) refusing
  stops decoding at once, whatever was kept before;
* a YAML file reaches the decoder re-encoded as JSON: keys sorted, numbers as Go prints a
  float64 or an integer; a JSON file keeps its order and its literals (:class:`JsonFloat`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Final

from cpumanager.errors import ConfigError
from cpumanager.formats.kubelet_config.fields import go_duration_nanos
from cpumanager.formats.kubelet_config.v1beta1 import FIELD_KINDS

__all__ = [
    "json_kind",
    "GO_TYPES",
    "STRUCTS",
    "JsonFloat",
    "JsonInt",
    "decode_fields",
    "go_json_number",
    "go_quantity_error",
    "quantity_problem",
]

_INT_RANGE = {
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint32": (0, 2**32 - 1),
}

# The Go type each non-scalar field decodes into, as Go's decoder names it in its errors
# (``of type []v1beta1.MemoryReservation``), and the fields of the nested structs: JSON name
# -> Go kind. A kind naming a struct (a key of STRUCTS) is decoded field by field; "any" is
# not checked (logging's options, vmodule and flush frequency).
GO_TYPES: Final[Mapping[str, str]] = {
    "authentication": "v1beta1.KubeletAuthentication",
    "authorization": "v1beta1.KubeletAuthorization",
    "memorySwap": "v1beta1.MemorySwapConfiguration",
    "logging": "v1.LoggingConfiguration",
    "shutdownGracePeriodByPodPriority": "[]v1beta1.ShutdownGracePeriodByPodPriority",
    "crashLoopBackOff": "v1beta1.CrashLoopBackOffConfig",
    "reservedMemory": "[]v1beta1.MemoryReservation",
    "registerWithTaints": "[]v1.Taint",
    "tracing": "v1.TracingConfiguration",
    "configMapAndSecretChangeDetectionStrategy": "v1beta1.ResourceChangeDetectionStrategy",
}
STRUCTS: Final[Mapping[str, Mapping[str, str]]] = {
    "v1beta1.KubeletAuthentication": {
        "x509": "v1beta1.KubeletX509Authentication",
        "webhook": "v1beta1.KubeletWebhookAuthentication",
        "anonymous": "v1beta1.KubeletAnonymousAuthentication",
    },
    "v1beta1.KubeletX509Authentication": {"clientCAFile": "string"},
    "v1beta1.KubeletWebhookAuthentication": {"enabled": "bool", "cacheTTL": "duration"},
    "v1beta1.KubeletAnonymousAuthentication": {"enabled": "bool"},
    "v1beta1.KubeletAuthorization": {
        "mode": "v1beta1.KubeletAuthorizationMode",
        "webhook": "v1beta1.KubeletWebhookAuthorization",
    },
    "v1beta1.KubeletWebhookAuthorization": {
        "cacheAuthorizedTTL": "duration",
        "cacheUnauthorizedTTL": "duration",
    },
    "v1beta1.MemorySwapConfiguration": {"swapBehavior": "string"},
    "v1.LoggingConfiguration": {
        "format": "string",
        "flushFrequency": "flush",
        "verbosity": "v1.VerbosityLevel",
        "vmodule": "[]v1.VModuleItem",
        "options": "v1.FormatOptions",
    },
    "v1.VModuleItem": {"filePattern": "string", "verbosity": "v1.VerbosityLevel"},
    "v1.FormatOptions": {"text": "v1.TextOptions", "json": "v1.JSONOptions"},
    "v1.TextOptions": {"splitStream": "bool", "infoBufferSize": "any"},
    "v1.JSONOptions": {"splitStream": "bool", "infoBufferSize": "any"},
    "v1beta1.ShutdownGracePeriodByPodPriority": {
        "priority": "int32",
        "shutdownGracePeriodSeconds": "int64",
    },
    "v1beta1.CrashLoopBackOffConfig": {"maxContainerRestartPeriod": "*duration"},
    "v1beta1.MemoryReservation": {"numaNode": "int32", "limits": "v1.ResourceList"},
    "v1.Taint": {
        "key": "string",
        "value": "string",
        "effect": "v1.TaintEffect",
        "timeAdded": "any",
    },
    "v1.TracingConfiguration": {"endpoint": "string", "samplingRatePerMillion": "int32"},
}
# Named Go types over a basic one: decoded as the basic type, named in errors.
NAMED = {
    "v1beta1.KubeletAuthorizationMode": "string",
    "v1beta1.ResourceChangeDetectionStrategy": "string",
    "v1.TaintEffect": "string",
    "v1.VerbosityLevel": "uint32",
}
# Durations held by pointer (JSON null leaves them nil); the others are metav1.Duration
# values, whose decoder reads null as the empty duration and refuses it.
_POINTER_DURATIONS = frozenset({"cpuCFSQuotaPeriod", "containerLogMonitorInterval"})
_QUANTITY_FORMAT = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)


class JsonInt(int):
    """An integer read from a JSON file, with the literal as written: Go names it so,
    however large, and reads ``-0`` into a float64 as negative zero."""

    literal: str

    def __new__(cls, literal: str) -> JsonInt:
        made = super().__new__(cls, literal)
        made.literal = literal
        return made


class JsonFloat(float):
    """A float read from a JSON file, with the literal as written (Go names the literal it
    cannot fit: ``number 1.0``)."""

    literal: str

    def __new__(cls, literal: str) -> JsonFloat:
        made = super().__new__(cls, literal)
        made.literal = literal
        return made


def json_kind(value: object) -> str:
    """The JSON kind Go's decoder names in a type error (``cannot unmarshal <kind> into``)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return "value"


def go_json_number(value: int | float) -> str:
    """A number as the kubelet's decoder sees it: a JSON file's literal as written, a YAML
    number as Go's JSON encoder prints it (YAML reaches the decoder re-encoded as JSON).

    YAML integers beyond uint64 are floats to Go's YAML reader, printed shortest
    (``1e+30``, ``-9223372036854776000``).
    """
    if isinstance(value, JsonFloat):
        return value.literal
    if isinstance(value, JsonInt):
        return value.literal
    if isinstance(value, int):
        if -(2**63) <= value < 2**64:
            return str(value)
        value = float(value)
    size = abs(value)
    if size != 0 and (size < 1e-6 or size >= 1e21):
        text = repr(value)
        mantissa, _, exponent = text.partition("e")
        sign = "-" if exponent.startswith("-") else "+"
        return f"{mantissa.removesuffix('.0')}e{sign}{exponent.lstrip('+-').lstrip('0') or '0'}"
    return format(Decimal(repr(value)).normalize(), "f")


class _Decoding:
    """One decode: Go's decoder keeps the first type mismatch and goes on, but a field's own
    decoder failing (a duration, a quantity) stops it at once."""

    def __init__(self, *, sort_keys: bool) -> None:
        self.sort_keys = sort_keys
        self.saved: str | None = None

    def mismatch(self, value: object, struct: str, path: str, go_type: str) -> None:
        if self.saved is None:
            self.saved = _mismatch_text(value, struct, path, go_type)

    def items(self, mapping: Mapping[str, object]) -> list[tuple[str, object]]:
        pairs = [(str(k), v) for k, v in mapping.items()]
        return sorted(pairs) if self.sort_keys else pairs


def _mismatch_text(value: object, struct: str, path: str, go_type: str) -> str:
    kind = json_kind(value)
    basic = NAMED.get(go_type, go_type)
    if kind == "number" and basic in ("int32", "int64", "uint32", "float64"):
        assert isinstance(value, int | float)
        kind = f"number {go_json_number(value)}"  # Go names the literal it cannot fit
    return f"json: cannot unmarshal {kind} into Go struct field {struct}.{path} of type {go_type}"


def decode_fields(
    body: Mapping[str, object],
    *,
    from_json: bool = False,
    pairs: Sequence[tuple[str, object]] = (),
) -> dict[str, object]:
    """Every field typed as Go decodes it (durations in nanoseconds); unknown fields dropped.

    Raises ConfigError with Go's text: a duration or quantity that does not parse at once,
    else the first field of the wrong type. Go reads a YAML file re-encoded as JSON, so
    keys in sorted order; a JSON file in its own order (``from_json``). JSON ``null`` leaves
    a field unset, except a duration held by value (``time: invalid duration ""``).
    """
    if pairs:
        # a JSON file's repeated key is decoded at each place it appears: errors first
        _decode_pairs(_Decoding(sort_keys=False), [(k, v) for k, v in pairs if k in body])
    decoding = _Decoding(sort_keys=not from_json)
    return _decode_pairs(decoding, decoding.items(body))


def _decode_pairs(decoding: _Decoding, pairs: list[tuple[str, object]]) -> dict[str, object]:
    out: dict[str, object] = {}
    for name, value in pairs:
        kind = FIELD_KINDS.get(name)
        if kind is None:
            continue
        kind = GO_TYPES.get(name, kind)
        if value is None and not (kind == "duration" and name not in _POINTER_DURATIONS):
            continue
        typed = _decode(decoding, "KubeletConfiguration", name, kind, value)
        if typed is not _BAD:
            out[name] = typed
    if decoding.saved is not None:
        raise ConfigError(decoding.saved)
    return out


_BAD = object()  # a value of the wrong type (the error is kept; decoding goes on)


def _decode(d: _Decoding, struct: str, path: str, kind: str, value: object) -> object:
    """``value`` decoded as Go type ``kind`` (``struct.path`` names it in errors); _BAD when
    of the wrong type (the mismatch is kept, decoding goes on)."""
    basic = NAMED.get(kind, kind)
    if basic == "any":
        return value
    if basic in ("duration", "*duration"):
        return _duration(struct, path, value, pointer=basic == "*duration")
    if basic == "flush":
        return _flush_frequency(struct, path, value)
    if basic == "quantity":
        problem = quantity_problem(value)
        if problem:
            raise ConfigError(problem)
        return value
    typed = _BAD if value is None else _container(d, struct, path, basic, value)
    if typed is _NOT_CONTAINER:
        typed = _scalar(basic, value)
    if typed is _BAD:
        d.mismatch(value, struct, path, kind)
    return typed


_NOT_CONTAINER = object()


def _duration(struct: str, path: str, value: object, *, pointer: bool) -> object:
    """A ``metav1.Duration``: its own decoder refuses at once (a null held by value is the
    empty duration)."""
    if value is None:
        if pointer:
            return None
        value = ""
    if not isinstance(value, str):
        kind = json_kind(value)
        msg = f"json: cannot unmarshal {kind} into Go struct field {struct}.{path} of type string"
        raise ConfigError(msg)
    try:
        return go_duration_nanos(value)
    except ValueError as err:
        raise ConfigError(str(err)) from err


def _flush_frequency(struct: str, path: str, value: object) -> object:
    """logging's ``TimeOrMetaDuration``: a duration string, or nanoseconds as a number; its
    own decoder refuses anything else at once, quoting the JSON it was given (measured)."""
    if value is None or isinstance(value, str):
        return _duration(struct, path, value, pointer=True)
    number = _go_integer(value)
    if number is not None and -(2**63) <= number < 2**63:
        return number
    kind = json_kind(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        raw = go_json_number(value)
        kind = f"number {raw}"
    else:
        raw = json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    quoted = json.dumps(raw, ensure_ascii=False)
    inner = f"json: cannot unmarshal {kind} into Go value of type time.Duration"
    msg = f"invalid duration {quoted}: {inner}"
    raise ConfigError(msg)


def _scalar(basic: str, value: object) -> object:
    if basic == "string":
        return value if isinstance(value, str) else _BAD
    if basic == "bool":
        return value if isinstance(value, bool) else _BAD
    if basic in _INT_RANGE:
        number = _go_integer(value)
        low, high = _INT_RANGE[basic]
        return number if number is not None and low <= number <= high else _BAD
    if basic == "float64":
        number_ok = isinstance(value, int | float) and not isinstance(value, bool)
        if not number_ok or not math.isfinite(value):  # type: ignore[arg-type]
            return _BAD
        return float(value.literal) if isinstance(value, JsonInt) else float(value)  # type: ignore[arg-type]
    return _BAD


def _container(d: _Decoding, struct: str, path: str, basic: str, value: object) -> object:
    """A map, list or struct decoded entry by entry; _BAD when the JSON value is not one;
    _NOT_CONTAINER when ``basic`` is a scalar type."""
    if basic.startswith("map[string]") or basic == "v1.ResourceList":
        if not isinstance(value, Mapping):
            return _BAD
        inner = "quantity" if basic == "v1.ResourceList" else basic.removeprefix("map[string]")
        out: dict[str, object] = {}
        for key, item in d.items(value):
            if item is None and inner != "quantity":
                out[key] = _ZERO.get(inner)  # Go stores the zero value
                continue
            typed = _decode(d, struct, path, inner, item)
            out[key] = item if typed is _BAD else typed
        return out
    if basic.startswith("[]"):
        if not isinstance(value, list):
            return _BAD
        inner = basic.removeprefix("[]")
        items: list[object] = []
        for item in value:
            typed = _ZERO.get(inner) if item is None else _decode(d, struct, path, inner, item)
            items.append(item if typed is _BAD or inner in STRUCTS else typed)
        return items
    fields = STRUCTS.get(basic)
    if fields is None:
        return _NOT_CONTAINER
    if not isinstance(value, Mapping):
        return _BAD
    name = basic.rpartition(".")[2]
    for key, item in d.items(value):
        field_kind = fields.get(key)
        if field_kind is not None and (item is not None or field_kind == "duration"):
            _decode(d, name, f"{path}.{key}", field_kind, item)
    return dict(value)


_ZERO: Mapping[str, object] = {"string": "", "bool": False, "[]string": []}


def _go_integer(value: object) -> int | None:
    """The integer Go reads from a JSON number, or None (not a number, or not integral as
    written: a JSON file's ``1.0`` is refused, a YAML ``1.0`` arrives as ``1``)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    text = go_json_number(value)
    if not text.lstrip("-").isdigit():
        return None
    return int(text)


def quantity_problem(value: object) -> str | None:
    """``resource.Quantity``'s decoder refusing a JSON value, with its text, or None.

    A JSON number is read as its text; ``true``, a list or an object fail the format.
    """
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip(" \t\n\r\v\f")
    elif isinstance(value, int | float) and not isinstance(value, bool):
        text = go_json_number(value)
    else:
        return _QUANTITY_FORMAT
    return go_quantity_error(text)


_SUFFIX_CHARS = "eEinumkKMGTP"
_SUFFIXES = frozenset(
    {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n", "u", "m", "", "k", "M", "G", "T", "P", "E"}
)


def go_quantity_error(text: str) -> str | None:
    """``resource.ParseQuantity``'s error for ``text`` (format, then suffix), or None."""
    if text == "":
        return _QUANTITY_FORMAT
    if text == "0":
        return None
    pos = 1 if text[0] in "+-" else 0
    end = len(text)
    while pos < end and text[pos].isascii() and text[pos].isdigit():
        pos += 1
    if pos < end and text[pos] == ".":
        pos += 1
        while pos < end and text[pos].isascii() and text[pos].isdigit():
            pos += 1
    start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos].isascii() and text[pos].isdigit():
        pos += 1
    if pos < end:
        return _QUANTITY_FORMAT
    suffix = text[start:]
    if suffix in _SUFFIXES:
        return None
    exponent = suffix[1:]
    if suffix[:1] in ("e", "E") and re.fullmatch(r"[+-]?[0-9]+", exponent):
        return None if -(2**63) <= int(exponent) < 2**63 else "unable to parse quantity's suffix"
    return "unable to parse quantity's suffix"
