"""Typed reads of parsed JSON for the snapshot model; every failure is one SnapshotError line.

``where`` is the JSON path of the value (``podResources.pods[3].containers[0].cpuIds``), so a
hand-edited or truncated snapshot says exactly which field is wrong.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NoReturn

from cpumanager.errors import SnapshotError

__all__ = ["fail", "get_bool", "get_int", "get_list", "get_map", "get_str", "kind_of", "obj"]

_INT64 = (1 << 63) - 1
_REMEDY = "write the snapshot again with 'cpumanager node snapshot'"


def kind_of(value: object) -> str:
    """A JSON-ish name for the type of ``value`` (for messages)."""
    match value:
        case None:
            return "null"
        case bool():
            return "a boolean"
        case int() | float():
            return "a number"
        case str():
            return "a string"
        case list():
            return "a list"
        case dict():
            return "an object"
    return type(value).__name__


def fail(where: str, problem: str) -> NoReturn:
    """Raise the one-line SnapshotError for the field at ``where``."""
    msg = f"snapshot field {where}: {problem}; {_REMEDY}"
    raise SnapshotError(msg)


def _at(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def obj(raw: object, where: str) -> Mapping[str, object]:
    """``raw`` as a JSON object."""
    if not isinstance(raw, dict):
        fail(where, f"expected an object, got {kind_of(raw)}")
    return raw


def get_map(body: Mapping[str, object], key: str, where: str) -> Mapping[str, object]:
    """The object under ``key`` (missing = empty)."""
    return obj(body.get(key, {}), _at(where, key))


def get_list(body: Mapping[str, object], key: str, where: str) -> list[object]:
    """The list under ``key`` (missing or null = empty)."""
    raw = body.get(key)
    if raw is None:
        return []
    if not isinstance(raw, list):
        fail(_at(where, key), f"expected a list, got {kind_of(raw)}")
    return raw


def get_str(body: Mapping[str, object], key: str, where: str, *, default: str = "") -> str:
    """The string under ``key`` (missing = ``default``)."""
    raw = body.get(key, default)
    if not isinstance(raw, str):
        fail(_at(where, key), f"expected a string, got {kind_of(raw)}")
    return raw


def get_int(body: Mapping[str, object], key: str, where: str, *, default: int = 0) -> int:
    """The non-negative int64 under ``key`` (missing = ``default``)."""
    raw = body.get(key, default)
    if isinstance(raw, bool) or not isinstance(raw, int):
        fail(_at(where, key), f"expected a whole number, got {kind_of(raw)}")
    if not 0 <= raw <= _INT64:
        fail(_at(where, key), f"{raw} is out of range (0 to 2^63-1)")
    return raw


def get_bool(body: Mapping[str, object], key: str, where: str, *, default: bool = False) -> bool:
    """The boolean under ``key`` (missing = ``default``)."""
    raw = body.get(key, default)
    if not isinstance(raw, bool):
        fail(_at(where, key), f"expected true or false, got {kind_of(raw)}")
    return raw
