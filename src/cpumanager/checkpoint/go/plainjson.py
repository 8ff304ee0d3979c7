"""The C JSON scanner for checkpoint files Go reads the same way, and bulk value checks.

The memory and device checkpoints' fast readers (``memory/codec_fast_read``, ``device/codec_fast``)
start here. ``json.loads`` builds the same values Go's decoder sees when the input is ASCII
without a backslash (no escapes, no invalid UTF-8, no byte-order mark). Two differences
remain, and counting finds both: duplicate keys (Go merges or overrides them, Python keeps
the last) and negative numbers (Go refuses ``-0`` for an unsigned field, Python reads 0).
Without a backslash every ``"`` of a well-formed document delimits a string, so a reader
that walked fewer strings than half the quotes saw a key collapse; and a reader whose
strings hold fewer ``-`` than the text saw a minus sign outside them. Floats, ``NaN``,
other literals and out-of-range integers fail the readers' type and range checks. Whatever
is refused goes to the faithful reader (:mod:`gojson`, :mod:`godecode`), which also words
every error.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Iterable
from itertools import repeat
from typing import Any, NamedTuple, TypeVar

__all__ = [
    "marshal_safe",
    "without_cycle_collection",
    "INT64_MAX",
    "INT64_MIN",
    "UINT64_MAX",
    "PlainDocument",
    "all_of_type",
    "build_slotted",
    "columns",
    "fields_only",
    "ints_within",
    "keys_sorted",
    "load_plain",
]

T = TypeVar("T")
R = TypeVar("R")

UINT64_MAX = (1 << 64) - 1
INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1


class PlainDocument(NamedTuple):
    """A document ``json.loads`` reads as Go does, and what a reader must account for.

    ``strings``: how many strings the text holds (a reader that walked fewer saw a
    duplicate key collapse). ``dashes``: how many ``-`` it holds (a reader whose strings
    hold fewer saw a negative number: Go refuses ``-0`` for an unsigned field, Python
    reads 0; ``-Infinity`` too).
    """

    tree: dict[str, Any]
    strings: int
    dashes: int


def _c_loads() -> Callable[[bytes], Any]:
    """orjson's scanner (pinned; about twice the standard library's speed), else ``json``'s.

    Both return the same values for the input admitted here: ASCII without a backslash.
    orjson turns integers past 64 bits into floats; both are refused by the range checks.
    """
    try:
        from orjson import loads
    except ImportError:  # pragma: no cover - a broken install still reads the same values
        return json.loads
    return loads


_loads: Callable[[bytes], Any] | None = None


def load_plain(data: bytes) -> PlainDocument | None:
    """The top-level object of ``data`` and its counts, or None (faithful reader).

    None also for any syntax error: only :mod:`gojson` words it as Go does.
    """
    global _loads  # noqa: PLW0603 - resolved once, lazily, to keep imports cheap
    if _loads is None:
        _loads = _c_loads()
    if not data.isascii() or b"\\" in data:
        return None
    try:
        tree = _loads(data)
    except (ValueError, RecursionError):
        return None
    if type(tree) is not dict:
        return None
    return PlainDocument(tree, data.count(b'"') // 2, data.count(b"-"))


def all_of_type(values: Iterable[object], kind: type) -> bool:
    """Every value exactly of ``kind`` (``bool`` is not ``int`` here, as in JSON)."""
    return set(map(type, values)) <= {kind}


def ints_within(values: list[Any], low: int, high: int) -> bool:
    """Every value a Python ``int`` (not bool, not float) in ``[low, high]``."""
    if not values:
        return True
    return all_of_type(values, int) and low <= min(values) and max(values) <= high


def fields_only(values: list[Any], width: int, getter: Callable[[Any], Any]) -> list[Any] | None:
    """``getter`` over ``values`` when every value is an object of ``width`` keys, else None.

    With ``getter`` reading ``width`` distinct keys, those keys are exactly the object's.
    """
    if not values:
        return []
    try:  # len refuses numbers, the getter anything but an object holding its keys
        if set(map(len, values)) != {width}:
            return None
        return list(map(getter, values))
    except (TypeError, KeyError):
        return None


def keys_sorted(maps: Iterable[dict[str, Any]]) -> bool:
    """Every map's keys in sorted order (as ``json.Marshal`` writes them)."""
    maps = list(maps)
    return list(map(list, maps)) == list(map(sorted, maps))


def columns(rows: list[tuple[Any, ...]], width: int) -> list[tuple[Any, ...]]:
    """Rows of ``width`` values as ``width`` columns."""
    # fields_only made every row ``width`` long (strict= would cost zip a slow parse)
    return list(zip(*rows)) if rows else [()] * width  # noqa: B905


_new = object.__new__


def build_slotted(cls: type[T], fields: list[Any], count: int) -> list[T]:
    """``count`` instances of a slotted dataclass from its field columns, without __init__.

    The values are already checked; filling the slots column by column is a few C calls
    instead of one Python ``__init__`` per instance.
    """
    made: list[T] = list(map(_new, repeat(cls, count)))
    for name, column in zip(cls.__slots__, fields, strict=True):  # type: ignore[attr-defined]
        any(map(cls.__dict__[name].__set__, made, column))  # None each time: any runs them all
    return made


def marshal_safe(text: str) -> bool:
    """Nothing in ``text`` that ``json.Marshal`` would escape (the fast writers
    check their whole text once with it)."""
    return (
        text.isascii()
        and text.isprintable()
        and "\\" not in text
        and "<" not in text
        and ">" not in text
        and "&" not in text
    )


def without_cycle_collection(build: Callable[[T], R], value: T) -> R:
    """``build(value)`` with the cycle collector held off while a reader builds objects.

    The scanner's tree and the values built from it are thousands of containers without a
    cycle; each 700 made starts a collection that walks the young ones again (a third of a
    1,000-container read went there). Refcounting frees everything as before, and one
    collection, if any is due, runs after. A collector already off stays off.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        return build(value)
    finally:
        if enabled:
            gc.enable()
