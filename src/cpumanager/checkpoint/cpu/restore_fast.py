"""Restore fast path: the kubelet's own ``cpu_manager_state`` to the state, at C speed.

:func:`read_v2` answers for a V2 file in the layout Go's ``json.Marshal`` writes (compact,
keys sorted, nothing escaped) with the state a kubelet restores from it, or None, and then
the readers of :mod:`codec_fast` and :mod:`codec` decide (and word every error). Its work is a
fixed number of passes in C whatever the number of containers (one JSON scan, joins,
whole-text replaces, FNV-1a, ``map`` over C functions); no Python code runs per container,
which is what made a restore of 1,000 containers slower than the kubelet's. Why each
shortcut gives Go's answer is said where it is taken;
``tests/checkpoint/cpu/test_restore_vs_restore_fast.py`` compares it with the generic reader
on generated and corrupted files.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping
from functools import reduce
from itertools import chain, compress, islice, repeat
from types import MappingProxyType
from typing import Any

from cpumanager.checkpoint.cpu.codec_fast import (
    _DEFAULT_BYTES,
    _ENTRIES_BYTES,
    _PREFIX_BYTES,
    _SUFFIX_BYTES,
    _UINT64_MAX,
    SORTED,
    _new_set,
    _set_bits,
    c_json,
    spew_checked,
)
from cpumanager.checkpoint.go.fnv import fnv1a_32, fnv1a_32_function
from cpumanager.core.cpuset import MAX_CHECKPOINT_CPU_ID, CPUSet

__all__ = ["ReadV2", "read_v2"]

# What :func:`read_v2` hands over: policy name, default set, assignments (read-only, sorted).
ReadV2 = tuple[str, CPUSet, Mapping[str, Mapping[str, CPUSet]]]

# The file as json.Marshal writes it, the two strings printable ASCII without '"' or '\\'
# (JSON strings as they are read); the entries object is checked once scanned: written
# back, it must give its own text (see _read_entries).
_WRITTEN = re.compile(
    rb'\{"policyName":"([ !#-\[\]-~]*)","defaultCpuSet":"([ !#-\[\]-~]*)","entries":(\{.*\}),'
    rb'"checksum":(0|[1-9][0-9]{0,19})\}',
    re.DOTALL,
)
# The same file with no entries (a node without exclusive CPUs): no JSON parser needed, the
# two strings are printable ASCII without '"' or '\\'.
_WRITTEN_EMPTY = re.compile(
    rb'\{"policyName":"([ !#-\[\]-~]*)","defaultCpuSet":"([ !#-\[\]-~]*)",'
    rb'"checksum":(0|[1-9][0-9]{0,19})\}'
)
_DIGITS = b"0123456789"
# The separators between the ids of "a-b" elements only ("-,-,...,-"), for up to 4,096.
_ALTERNATING = b"-," * 4096
# A separator between two ids: ',' starts a new element (1), '-' continues a range (0).
_ELEMENT_STARTS = bytes.maketrans(b",-", b"\x01\x00")
# The bits of a run of w + 1 CPUs, for the usual short runs (a dict: no negative indexes).
_RUNS = {width: (2 << width) - 1 for width in range(256)}
_EMPTY = CPUSet()


def read_v2(data: bytes) -> ReadV2 | None:
    """The state a kubelet restores from ``data`` when it is a V2 file in the kubelet's layout.

    None means "ask the other readers": anything else (whitespace, unsorted or duplicate
    keys, escapes, non-ASCII, nulls, a checksum that does not verify, a CPU list outside
    the usual digits, a default set that does not parse) is decided there, and errors are
    worded there. A file read here is one every kubelet reads as V2 with the same content:
    V1 fails on its entries (objects where V1 wants strings); with no entries V1 may
    succeed, and then migrates to this same empty state.

    Nothing is cached: a file never seen before costs the same as one read a moment ago.
    """
    if not data.isascii():
        return None
    found = _WRITTEN.fullmatch(data)
    if found is not None:
        return _read_entries(found)
    empty = _WRITTEN_EMPTY.fullmatch(data)
    if empty is None:
        return None
    policy, default_text, stored = empty.groups()
    checksum = int(stored)
    if checksum != 0 and checksum != _checksum_of(policy, default_text, b"map[]"):
        return None
    if not default_text:
        return policy.decode(), _EMPTY, MappingProxyType({})
    masks = _cpu_masks(default_text.decode(), [default_text.decode()])
    if masks is None:
        return None
    return policy.decode(), CPUSet.from_bits(masks[0]), MappingProxyType({})


# orjson's scanner and writer and the C FNV-1a, resolved on the first restore
_Tools = tuple[Callable[[str | bytes], Any], Callable[..., bytes], Callable[[bytes], int]]
_tools: _Tools | None = None


def _resolve_tools() -> _Tools:
    global _tools  # noqa: PLW0603 - resolved once, lazily, to keep imports cheap
    _tools = (*c_json(), fnv1a_32_function())
    return _tools


def _read_entries(found: re.Match[bytes]) -> ReadV2 | None:
    loads, dumps, fnv = _tools or _resolve_tools()
    policy, default_bytes, body, stored = found.groups()
    try:
        entries = loads(body)
    except ValueError:  # orjson's errors, recursion depth included, are ValueErrors
        return None
    checksum = int(stored)
    if type(entries) is not dict or not entries or checksum > _UINT64_MAX:
        return None
    try:  # dict.values refuses anything but a dict, str.join anything but strings
        values = list(chain.from_iterable(map(dict.values, entries.values())))
        lists_text = ",".join(values)
    except TypeError:
        return None  # a null, number, list or string where Go wants an object or a string
    # What json.Marshal writes for what was scanned (compact, every map sorted) is the
    # entries' text itself: no whitespace, no key given twice (Go merges or overrides; the
    # scanner keeps the last), pods and containers in Go's order. No escape either (Go and
    # the scanner read them alike, but the checksum's text is made by replaces): braces
    # only as structure, no key led by a comma, no backslash.
    if dumps(entries, option=SORTED) != body:
        return None
    spewed = spew_checked(body, len(entries), len(values))
    if spewed is None:
        return None
    if checksum != 0:
        parts = (_PREFIX_BYTES, policy, _DEFAULT_BYTES, default_bytes, _ENTRIES_BYTES, spewed)
        if checksum != fnv(b"".join(parts) + _SUFFIX_BYTES):
            return None
    default_text = default_bytes.decode()
    masks = _usual_masks(lists_text, len(values), default_text, loads)
    if masks is not None:
        pass
    elif default_text:
        joined = f"{lists_text},{default_text}" if values else default_text
        masks = _cpu_masks(joined, [*values, default_text])
    else:
        masks = _cpu_masks(lists_text, values) if values else []
    if masks is None:
        return None
    sets = list(map(_new_set, repeat(CPUSet, len(masks))))
    any(map(_set_bits, sets, masks))  # each call returns None: any() runs them all
    default = sets[-1] if default_text else _EMPTY
    # zip stops at the end of each pod's names, taking no extra set (no strict=: zip would
    # parse the keyword, a tenth of this loop's cost)
    remaining = iter(sets)
    assignments = {
        pod: MappingProxyType(dict(zip(names, remaining)))  # noqa: B905
        for pod, names in entries.items()
    }
    return policy.decode(), default, MappingProxyType(assignments)


def _checksum_of(policy: bytes, default: bytes, spewed: bytes) -> int:
    parts = (_PREFIX_BYTES, policy, _DEFAULT_BYTES, default, _ENTRIES_BYTES, spewed, _SUFFIX_BYTES)
    return fnv1a_32(b"".join(parts))


def _usual_masks(
    lists_text: str, count: int, default_text: str, loads: Callable[[str], Any]
) -> list[int] | None:
    """The masks of ``count`` CPU lists of one ``a-b`` range each and of the default set
    (``a-b`` ranges), last; None for anything else (then :func:`_cpu_masks` decides)."""
    if not count or not default_text:
        return None
    joined = f"{lists_text},{default_text}"
    separators = joined.encode().translate(None, _DIGITS)
    size = len(separators)
    # "-" then "," alternating, and as many ids as the lists and the default's ranges hold
    if (
        not size & 1
        or separators != _ALTERNATING[:size]
        or size + 1 != 2 * count + 2 * (default_text.count(",") + 1)
    ):
        return None
    try:
        ids = loads(f"[{joined.replace('-', ',')}]")
    except ValueError:
        return None  # an empty id, a leading zero
    # a start above the bound is above its end or makes that end so: no range either way
    if max(ids) > MAX_CHECKPOINT_CPU_ID:
        return None
    pairs = iter(ids)  # zip(pairs, pairs): each start with its end, with no halves copied
    try:  # a run of width w (end - start) is _RUNS[w]; a wide or reversed one is not there
        # (the separators' count made the ids even; strict= would cost zip a slow parse)
        masks = [_RUNS[end - start] << start for start, end in zip(pairs, pairs)]  # noqa: B905
    except KeyError:
        return None
    if len(masks) > count + 1:
        masks[count:] = [reduce(operator.or_, masks[count:])]
    return masks


def _cpu_masks(joined: str, lists: list[str]) -> list[int] | None:
    """The bitmask of every CPU list (``joined`` is ``",".join(lists)``), in bulk.

    None when any list is outside the usual form: ``a`` or ``a-b`` elements joined by
    ``,``, ids in plain decimal (no sign, no leading zero) up to the checkpoint bound,
    ``a <= b`` (the exact parser decides the rest and words the errors). One scan reads
    every id as JSON; the separators between ids (digits deleted) say which start an
    element and which end one, and an element with two dashes shows as ``--`` among them.
    Overlapping or unsorted elements are fine, as in Go's cpuset.
    """
    separators = joined.encode().translate(None, _DIGITS)
    count = len(separators)
    ranges = count & 1 and separators == _ALTERNATING[:count]  # "a-b" elements only
    if not ranges and (separators.translate(None, b",-") or b"--" in separators):
        return None
    try:
        ids = c_json()[0](f"[{joined.replace('-', ',')}]")
    except ValueError:
        return None  # an empty element or id, a leading zero
    # digits and commas only: ints, or floats past 64 bits (also past the bound)
    if not ids or max(ids) > MAX_CHECKPOINT_CPU_ID:
        return None
    if b"-" not in separators:  # single ids only
        masks = list(map(operator.lshift, repeat(1), ids))
    else:
        if ranges or (
            separators[:1] == b"-" and separators[-1:] == b"-" and b",," not in separators
        ):
            starts, ends = ids[0::2], ids[1::2]  # ranges only: "-" and "," alternate
        else:
            flags = separators.translate(_ELEMENT_STARTS)
            starts = list(compress(ids, b"\x01" + flags))
            ends = list(compress(ids, flags + b"\x01"))
        widths = map(operator.sub, ends, starts)
        try:  # a run of width w (end - start) is _RUNS[w]; a wide or reversed one is not there
            masks = list(map(operator.lshift, map(_RUNS.__getitem__, widths), starts))
        except KeyError:
            listed_widths = list(map(operator.sub, ends, starts))
            if min(listed_widths) < 0:
                return None
            runs = map(operator.sub, map(operator.lshift, repeat(2), listed_widths), repeat(1))
            masks = list(map(operator.lshift, runs, starts))
    if len(masks) == len(lists):
        return masks
    if len(masks) - len(lists) == lists[-1].count(","):  # only the last list (the default)
        return [*masks[: len(lists) - 1], reduce(operator.or_, masks[len(lists) - 1 :])]
    sizes = map(operator.add, map(str.count, lists, repeat(",")), repeat(1))
    return list(map(reduce, repeat(operator.or_), map(islice, repeat(iter(masks)), sizes)))
