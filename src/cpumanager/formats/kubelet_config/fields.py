"""Typed readers for single KubeletConfiguration fields (pure).

Each reader takes the raw mapping (YAML or JSON already loaded) and a v1beta1 field name,
and either returns a typed value or raises a one-line :class:`ConfigError` naming the field:
a wrong type is a decoding error for the kubelet too, so it stops at the first one.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Mapping
from fractions import Fraction
from types import MappingProxyType
from typing import NoReturn

from cpumanager.core.quantity import parse_quantity
from cpumanager.errors import ConfigError, WorkloadError

__all__ = [
    "RESERVABLE",
    "STRING_MAPS",
    "check_string_maps",
    "bool_field",
    "empty_map",
    "eviction_bytes",
    "eviction_hard",
    "fail",
    "feature_gates",
    "format_bytes",
    "go_quantity_text",
    "quantity_format",
    "format_go_duration",
    "go_duration_nanos",
    "int_field",
    "mapping",
    "options",
    "parse_go_duration",
    "quantity",
    "reservation",
    "str_field",
    "str_list",
]

RESERVABLE = ("cpu", "memory", "ephemeral-storage", "pid")


# v1beta1 fields typed map[string]string: the kubelet's JSON decoder refuses a YAML boolean
# or number there (``full-pcpus-only: true`` must be quoted).
STRING_MAPS = (
    "cpuManagerPolicyOptions",
    "topologyManagerPolicyOptions",
    "kubeReserved",
    "systemReserved",
    "evictionHard",
)
_JSON_KINDS = (
    (bool, "bool"),
    (int, "number"),
    (float, "number"),
    (list, "array"),
    (dict, "object"),
)


def check_string_maps(body: Mapping[str, object]) -> None:
    """Refuse non-string values in string maps, as decoding a configuration file does.

    The scenario format is more lenient (it turns ``true`` and ``8`` into strings); files
    the kubelet reads are checked here first.
    """
    for name in STRING_MAPS:
        raw = body.get(name)
        if not isinstance(raw, Mapping):
            continue
        for key, value in raw.items():
            kind = next((label for t, label in _JSON_KINDS if isinstance(value, t)), None)
            if kind is not None:
                fail(
                    f"json: cannot unmarshal {kind} into Go struct field "
                    f"KubeletConfiguration.{name} of type string ({name}.{key}: {value!r}); "
                    f'quote the value, e.g. "{_yaml_text(value)}"'
                )


def _yaml_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def fail(message: str) -> NoReturn:
    raise ConfigError(message)


def empty_map() -> Mapping[str, str]:
    return MappingProxyType({})


_GO_UNITS = {
    "ns": 1,
    "us": 10**3,
    "\u00b5s": 10**3,  # micro sign
    "\u03bcs": 10**3,  # Greek mu
    "ms": 10**6,
    "s": 10**9,
    "m": 60 * 10**9,
    "h": 3600 * 10**9,
}
_OVER = 1 << 63  # Go's bound while summing (uint64 compared with 1<<63)


def _go_time_quote(text: str) -> str:
    """The ``time`` package's own quoting: non-ASCII and control bytes as ``\\xNN``."""
    out = ['"']
    for ch in text:
        if ord(ch) >= 0x80 or ch < " ":
            out.extend(f"\\x{byte:02x}" for byte in ch.encode("utf-8", "surrogatepass"))
        else:
            out.append("\\" + ch if ch in '"\\' else ch)
    out.append('"')
    return "".join(out)


def go_duration_nanos(text: str) -> int:
    """Go's ``time.ParseDuration`` exactly: signed nanoseconds, or ValueError with Go's text.

    A sign, then one or more ``<number><unit>`` parts (``1h30m``, ``-1.5s``, ``.5ms``);
    ``0`` alone (or ``-0``/``+0``) needs no unit. Fractions are rounded toward zero through
    float64 as Go does, and the total must fit an int64 (``-9223372036854775808ns`` fits).
    """
    invalid = f"time: invalid duration {_go_time_quote(text)}"
    rest = text
    negative = False
    if rest[:1] in ("-", "+"):
        negative = rest[0] == "-"
        rest = rest[1:]
    if rest == "0":
        return 0
    if not rest:
        raise ValueError(invalid)
    total = 0
    while rest:
        if not (rest[0] == "." or "0" <= rest[0] <= "9"):
            raise ValueError(invalid)
        digits = len(rest) - len(rest.lstrip("0123456789"))
        whole = 0
        for ch in rest[:digits]:
            if whole > _OVER // 10:
                raise ValueError(invalid)
            whole = whole * 10 + int(ch)
            if whole > _OVER:
                raise ValueError(invalid)
        rest = rest[digits:]
        frac, scale, has_frac = 0, 1.0, False
        if rest[:1] == ".":
            rest = rest[1:]
            count = len(rest) - len(rest.lstrip("0123456789"))
            has_frac = count > 0
            overflow = False
            for ch in rest[:count]:
                if overflow:
                    continue
                if frac > (_OVER - 1) // 10:
                    overflow = True
                    continue
                bigger = frac * 10 + int(ch)
                if bigger > _OVER:
                    overflow = True
                    continue
                frac, scale = bigger, scale * 10
            rest = rest[count:]
        if not digits and not has_frac:
            raise ValueError(invalid)
        end = 0
        while end < len(rest) and not (rest[end] == "." or "0" <= rest[end] <= "9"):
            end += 1
        if end == 0:
            missing = f"time: missing unit in duration {_go_time_quote(text)}"
            raise ValueError(missing)
        unit_text, rest = rest[:end], rest[end:]
        unit = _GO_UNITS.get(unit_text)
        if unit is None:
            unknown = f"time: unknown unit {_go_time_quote(unit_text)} in duration "
            raise ValueError(unknown + _go_time_quote(text))
        if whole > _OVER // unit:
            raise ValueError(invalid)
        whole *= unit
        if frac > 0:
            whole += int(float(frac) * (float(unit) / scale))
            if whole > _OVER:
                raise ValueError(invalid)
        total += whole
        if total > _OVER:
            raise ValueError(invalid)
    if negative:
        return -total
    if total > _OVER - 1:
        raise ValueError(invalid)
    return total


def parse_go_duration(text: str, *, field: str = "duration") -> Fraction:
    """Go's ``time.ParseDuration`` (negative durations included), in seconds."""
    try:
        nanos = go_duration_nanos(text)
    except ValueError as err:
        fail(f"{field}: {err}; write e.g. '10s', '500ms' or '1m30s'")
    return Fraction(nanos, 10**9)


def format_go_duration(seconds: Fraction) -> str:
    """Go's ``Duration.String()`` for whole nanoseconds: ``1m30s``, ``500ms``, ``-5s``."""
    nanos = math.floor(seconds * 10**9)
    if nanos < 0:
        return "-" + format_go_duration(Fraction(-nanos, 10**9))
    if nanos == 0:
        return "0s"
    if nanos < 10**9:
        for unit, size in (("ms", 10**6), ("\u00b5s", 10**3), ("ns", 1)):
            if nanos >= size:
                return _decimal(nanos, size) + unit
    hours, rest = divmod(nanos, 3600 * 10**9)
    minutes, rest = divmod(rest, 60 * 10**9)
    text = _decimal(rest, 10**9) + "s"
    if hours or minutes:
        text = f"{minutes}m{text}"
    if hours:
        text = f"{hours}h{text}"
    return text


def _decimal(amount: int, unit: int) -> str:
    whole, frac = divmod(amount, unit)
    if not frac:
        return str(whole)
    digits = len(str(unit)) - 1
    return f"{whole}.{str(frac).rjust(digits, '0').rstrip('0')}"


def mapping(raw: object, path: str) -> Mapping[str, object]:
    if not isinstance(raw, Mapping) or not all(isinstance(k, str) for k in raw):
        fail(f"{path}: expected a mapping with string keys, got {type(raw).__name__}")
    return raw


def str_field(body: Mapping[str, object], key: str, default: str = "") -> str:
    value = body.get(key)
    if value is None:
        return default
    if not isinstance(value, str):
        fail(f"{key}: expected a string, got {value!r}")
    return value


def int_field(body: Mapping[str, object], key: str, default: int = 0) -> int:
    value = body.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        fail(f"{key}: expected an integer, got {value!r}")
    if not -(2**31) <= value < 2**31:
        fail(f"{key}: {value} does not fit the kubelet's int32; give a smaller number")
    return value


def bool_field(body: Mapping[str, object], key: str, default: bool) -> bool:
    value = body.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        fail(f"{key}: expected true or false, got {value!r}")
    return value


def str_list(body: Mapping[str, object], key: str, default: tuple[str, ...]) -> tuple[str, ...]:
    value = body.get(key)
    if value is None:
        return default
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        fail(f"{key}: expected a list of strings, got {value!r}")
    return tuple(value)


def quantity(amount: object, path: str) -> Fraction:
    if isinstance(amount, bool) or not isinstance(amount, str | int | float):
        fail(f"{path}: expected a quantity such as '1' or '500m', got {amount!r}")
    try:
        return parse_quantity(amount, field=path)
    except WorkloadError as err:
        raise ConfigError(err.message) from err


def reservation(body: Mapping[str, object], key: str) -> Mapping[str, Fraction]:
    raw = body.get(key)
    if raw is None:
        return MappingProxyType({})
    out: dict[str, Fraction] = {}
    for resource, amount in mapping(raw, key).items():
        if resource not in RESERVABLE:
            fail(f'{key}: cannot reserve "{resource}" resource; reserve one of {RESERVABLE}')
        amount_q = quantity(amount, f"{key}.{resource}")
        if amount_q < 0:
            fail(f'{key}: resource quantity for "{resource}" cannot be negative: {amount}')
        out[resource] = amount_q
    return MappingProxyType(out)


def _float32(value: float) -> float:
    """``value`` rounded to the nearest float32, as Go's float32 conversion does."""
    return float(struct.unpack("f", struct.pack("f", value))[0])


def eviction_hard(body: Mapping[str, object], default: Mapping[str, str]) -> Mapping[str, str]:
    raw = body.get("evictionHard")
    if raw is None:
        return default
    out = {}
    for signal, threshold in mapping(raw, "evictionHard").items():
        if not isinstance(threshold, str):
            fail(f"evictionHard.{signal}: expected a string such as '100Mi' or '5%'")
        out[signal] = threshold
    return MappingProxyType(out)


def eviction_bytes(threshold: str, capacity: int | None) -> Fraction:
    """The bytes a ``memory.available`` threshold holds back (a percentage needs capacity).

    A percentage is the kubelet's ``GetThresholdQuantity``: the text read as a float32,
    divided by 100 in float32, times the capacity in float64, truncated; ``0%`` and
    ``100%`` are ignored (no threshold), as its parser ignores them.
    """
    if threshold.endswith("%"):
        if threshold in ("0%", "100%"):
            return Fraction(0)
        try:
            percent = _float32(_float32(float(threshold.rstrip("%"))) / 100)
        except (ValueError, OverflowError):
            fail(f"evictionHard.memory.available: {threshold!r} is not a percentage")
        if capacity is None:
            fail(
                "evictionHard.memory.available is a percentage; the machine's memory size is "
                "needed to check reservedMemory"
            )
        if not math.isfinite(percent):
            fail(f"evictionHard.memory.available: {threshold!r} is not a percentage")
        return Fraction(int(float(capacity) * percent))
    return quantity(threshold, "evictionHard.memory.available")


def options(body: Mapping[str, object], key: str) -> Mapping[str, str]:
    raw = body.get(key)
    if raw is None:
        return empty_map()
    out = {}
    for name, value in mapping(raw, key).items():
        # YAML turns an unquoted true / 8 into bool / int; the kubelet wants strings.
        text = value
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, int):
            text = str(value)
        if not isinstance(text, str):
            fail(f'{key}.{name}: expected a string value such as "true", got {value!r}')
        out[name] = text
    return MappingProxyType(out)


def feature_gates(body: Mapping[str, object]) -> Mapping[str, bool]:
    raw = body.get("featureGates")
    if raw is None:
        return MappingProxyType({})
    out = {}
    for name, value in mapping(raw, "featureGates").items():
        if not isinstance(value, bool):
            fail(f"featureGates.{name}: expected true or false, got {value!r}")
        out[name] = value
    return MappingProxyType(out)


_BINARY_SUFFIXES = ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_DECIMAL_SUFFIXES = {0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}


def quantity_format(text: object) -> str:
    """The format Go's ``resource.ParseQuantity`` gives ``text``: ``BinarySI`` (Ki .. Ei),
    ``DecimalExponent`` (1e9) or ``DecimalSI`` (k, M, G, .., or none; a YAML number too)."""
    if not isinstance(text, str):
        return "DecimalSI"
    body = text.strip().rstrip("0123456789").rstrip("+-")
    if body.endswith(_BINARY_SUFFIXES):
        return "BinarySI"
    if body.endswith(("e", "E")) and body != text.strip():
        return "DecimalExponent"
    return "DecimalSI"


def go_quantity_text(amount: int, fmt: str) -> str:
    """A whole number of bytes as Go's ``Quantity.String`` prints it in format ``fmt``
    (``BinarySI``: base-1024 suffixes when exact, plain below 1024; ``DecimalSI``: the
    largest k/M/G/.. power of 1000 that divides it; ``DecimalExponent``: ``e3``, ``e6``..)."""
    if amount == 0:
        return "0"
    if fmt == "BinarySI" and abs(amount) >= 1024:
        mantissa, power = amount, 0
        while power < len(_BINARY_SUFFIXES) and mantissa % 1024 == 0:
            mantissa //= 1024
            power += 1
        return f"{mantissa}{_BINARY_SUFFIXES[power - 1] if power else ''}"
    mantissa, exponent = amount, 0
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    mantissa *= 10 ** (exponent % 3)
    exponent -= exponent % 3
    if fmt == "DecimalExponent":
        return f"{mantissa}e{exponent}" if exponent else str(mantissa)
    if exponent > 18:
        mantissa, exponent = mantissa * 10 ** (exponent - 18), 18
    return f"{mantissa}{_DECIMAL_SUFFIXES[exponent]}"


def format_bytes(amount: Fraction | int) -> str:
    amount = Fraction(amount)
    for suffix, size in (("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if amount and amount % size == 0:
            return f"{amount // size}{suffix}"
    return str(amount.numerator) if amount.denominator == 1 else str(float(amount))
