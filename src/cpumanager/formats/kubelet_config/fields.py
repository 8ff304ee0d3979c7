"""Typed readers for single KubeletConfiguration fields (pure).

Each reader takes the raw mapping (YAML or JSON already loaded) and a v1beta1 field name,
and either returns a typed value or raises a one-line :class:`ConfigError` naming the field:
a wrong type is a decoding error for the kubelet too, so it stops at the first one.
"""

from __future__ import annotations

import math
import re
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
    "format_go_duration",
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
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_DURATION_UNITS = {
    "ns": Fraction(1, 10**9),
    "us": Fraction(1, 10**6),
    "µs": Fraction(1, 10**6),
    "μs": Fraction(1, 10**6),
    "ms": Fraction(1, 1000),
    "s": Fraction(1),
    "m": Fraction(60),
    "h": Fraction(3600),
}
_MAX_DURATION_S = Fraction(2**63 - 1, 10**9)  # Go's time.Duration is int64 nanoseconds


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


def parse_go_duration(text: str, *, field: str = "duration") -> Fraction:
    """Go's ``time.ParseDuration`` for non-negative durations, in seconds."""
    if text == "0":
        return Fraction(0)
    rest = text
    total = Fraction(0)
    if not rest:
        fail(f"{field}: {text!r} is not a duration; write e.g. '10s', '500ms' or '1m30s'")
    while rest:
        match = _DURATION_PART.match(rest)
        if match is None:
            fail(f"{field}: {text!r} is not a duration; write e.g. '10s', '500ms' or '1m30s'")
        total += Fraction(match[1]) * _DURATION_UNITS[match[2]]
        rest = rest[match.end() :]
    if total > _MAX_DURATION_S:
        fail(f"{field}: {text!r} is longer than Go's time.Duration can hold; shorten it")
    return total


def format_go_duration(seconds: Fraction) -> str:
    """Go's ``Duration.String()`` for non-negative whole nanoseconds: ``1m30s``, ``500ms``."""
    nanos = math.floor(seconds * 10**9)
    if nanos == 0:
        return "0s"
    if nanos < 10**9:
        for unit, size in (("ms", 10**6), ("µs", 10**3), ("ns", 1)):
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
    """The bytes a ``memory.available`` threshold holds back (a percentage needs capacity)."""
    if threshold.endswith("%"):
        try:
            percent = Fraction(threshold[:-1])
        except ValueError:
            fail(f"evictionHard.memory.available: {threshold!r} is not a percentage")
        if capacity is None:
            fail(
                "evictionHard.memory.available is a percentage; the machine's memory size is "
                "needed to check reservedMemory"
            )
        return Fraction(math.ceil(percent * capacity / 100))
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


def format_bytes(amount: Fraction | int) -> str:
    amount = Fraction(amount)
    for suffix, size in (("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if amount and amount % size == 0:
            return f"{amount // size}{suffix}"
    return str(amount.numerator) if amount.denominator == 1 else str(float(amount))
