"""Fast paths for the usual ``kubelet_internal_checkpoint`` (V2): the exact path's bytes.

The exact path (:mod:`goencode`, :mod:`gospew`, :mod:`godecode`) walks Go types as data one
value at a time; on 1,000 entries of a 120-byte ``AllocResp`` the per-byte decimal of
go-spew's ``[]uint8`` alone is thousands of Python calls. Here:

* **writing** builds both texts with one f-string per entry; ``AllocResp`` goes through C
  (``base64`` for JSON, a ``str.translate`` table from byte to decimal for go-spew). A nil
  map, slice or ``[]byte`` (None) makes the builders raise: the exact path decides. The JSON
  is then checked once: printable ASCII, nothing ``json.Marshal`` escapes, two quotes per
  string written; go-spew's text only needs to be ASCII (it prints strings raw);
* **reading** takes a :mod:`plainjson` document whose objects hold exactly the Go field
  names (no ``null``, no unknown or case-folded key), strings where strings go, canonical
  decimal NUMA keys, valid base64, and whose checksum verifies against the text built here.
  Anything else (V1 files included) returns None and the exact reader decides and words.

Tests compare both directions with the exact path on random and mutated checkpoints.
"""

from __future__ import annotations

import binascii
import operator
import re
from collections import deque
from collections.abc import Sequence
from functools import partial
from itertools import accumulate, chain, repeat
from operator import itemgetter
from typing import Any

from cpumanager.checkpoint.device.model import (
    DeviceCheckpointData,
    DeviceManagerCheckpoint,
    PodDevicesEntry,
)
from cpumanager.checkpoint.go.fnv import fnv1a_32
from cpumanager.checkpoint.go.plainjson import (
    UINT64_MAX,
    PlainDocument,
    all_of_type,
    build_slotted,
    columns,
    fields_only,
    ints_within,
    load_plain,
    marshal_safe,
    without_cycle_collection,
)

__all__ = ["decode_device_plain", "decode_device_tree", "marshal_device", "spew_device"]

_DATA_PREFIX = "(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint.PodDevicesEntry)["
_REGISTERED = "] RegisteredDevices:(map[string][]string)map["
# byte -> "decimal " for go-spew's []uint8 (the last space is cut)
_DECIMALS = {byte: f"{byte} " for byte in range(256)}
# byte -> its hundreds, tens and units digit, NUL for a leading zero (see _spew_all_bytes)
_HUNDREDS = bytes(48 + byte // 100 if byte >= 100 else 0 for byte in range(256))
_TENS = bytes(48 + byte // 10 % 10 if byte >= 10 else 0 for byte in range(256))
_UNITS = bytes(48 + byte % 10 for byte in range(256))
_ENTRY_VALUES = itemgetter("PodUID", "ContainerName", "ResourceName", "DeviceIDs", "AllocResp")
_NUMA_KEYS = re.compile(r"(?:0|-?[1-9][0-9]{0,17})(?:,(?:0|-?[1-9][0-9]{0,17}))*")
_TOP = frozenset({"Data", "Checksum"})
_b2a = binascii.b2a_base64
# what base64.b64decode(text, validate=True) runs: Go's padded standard alphabet
_strict_a2b = partial(binascii.a2b_base64, strict_mode=True)
_DATA = frozenset({"PodDeviceEntries", "RegisteredDevices"})


def _spew_bytes(value: Any) -> str:
    """go-spew's ``[]uint8`` body: each byte in decimal (raises on a nil slice)."""
    text: str = value.decode("latin-1").translate(_DECIMALS)
    return text[:-1]


def _spew_all_bytes(values: list[Any]) -> list[str]:
    """:func:`_spew_bytes` of every value, in whole-buffer passes (raises on a nil slice).

    Each byte takes four cells, hundreds, tens, units and a space, filled by a translate of
    all the bytes at once (a leading zero digit is a NUL); the space after each value's
    last byte becomes a mark, the NULs go, and a split on the marks gives the values.
    """
    joined = b"".join(values)
    lengths = list(map(len, values))
    if not lengths or not min(lengths):  # an empty value leaves no cell to mark
        return [_spew_bytes(value) for value in values]
    size = len(joined)
    cells = bytearray(4 * size)
    cells[0::4] = joined.translate(_HUNDREDS)
    cells[1::4] = joined.translate(_TENS)
    cells[2::4] = joined.translate(_UNITS)
    cells[3::4] = b" " * size
    ends = map(operator.sub, map(operator.mul, accumulate(lengths), repeat(4)), repeat(1))
    deque(map(cells.__setitem__, ends, repeat(1)), maxlen=0)
    parts = cells.translate(None, b"\0").decode("ascii").split("\x01")
    parts.pop()  # after the last mark
    return parts


def _spew_ids(ids: Any) -> str:
    """go-spew's ``map[-1:[a] 0:[b c]]`` body (raises on a nil map or list)."""
    if len(ids) == 1:  # the usual entry: its devices on one node
        ((node, devices),) = ids.items()
        return f"{node}:[{' '.join(devices)}]"
    return " ".join([f"{node}:[{' '.join(devices)}]" for node, devices in sorted(ids.items())])


def _spew_registered(registered: dict[str, Any]) -> str:
    return " ".join([f"{name}:[{' '.join(ids)}]" for name, ids in sorted(registered.items())])


def _spew_text(entries: list[str], registered: str) -> str:
    return f"{_DATA_PREFIX}{' '.join(entries)}{_REGISTERED}{registered}]}}"


def spew_device(checkpoint: DeviceManagerCheckpoint) -> str | None:
    """go-spew's text of ``checkpoint.data`` (what the checksum covers), or None."""
    data = checkpoint.data
    if data.pod_device_entries is None or data.registered_devices is None:
        return None
    try:
        rows = data.pod_device_entries
        responses = _spew_all_bytes([entry.alloc_resp for entry in rows])
        entries = [
            f"{{PodUID:(string){entry.pod_uid} ContainerName:(string){entry.container_name}"
            f" ResourceName:(string){entry.resource_name}"
            f" DeviceIDs:(checkpoint.DevicesPerNUMA)map[{_spew_ids(entry.device_ids)}]"
            f" AllocResp:([]uint8)[{response}]}}"
            for entry, response in zip(rows, responses, strict=True)
        ]
        text = _spew_text(entries, _spew_registered(data.registered_devices))
    except (AttributeError, TypeError):
        return None
    return text if text.isascii() else None


def _json_strings(values: Any) -> str:
    return '"' + '","'.join(values) + '"' if values else ""


def _base64_all(values: list[Any]) -> list[str]:
    """``base64.b64encode`` of every value (raises on a nil slice).

    When every length is a multiple of 3 no value ends in padding, so the encoding of all
    the values joined is their encodings joined: one C call, then one slice per value.
    """
    lengths = list(map(len, values))
    if any(map(operator.mod, lengths, repeat(3))):
        return [_b2a(value, newline=False).decode("ascii") for value in values]
    text = _b2a(b"".join(values), newline=False).decode("ascii")
    ends = list(
        accumulate(map(operator.floordiv, map(operator.mul, lengths, repeat(4)), repeat(3)))
    )
    return list(map(text.__getitem__, map(slice, [0, *ends[:-1]], ends)))


def _json_ids(ids: Any) -> str:
    if len(ids) == 1:  # the usual entry: its devices on one node
        ((node, devices),) = ids.items()
        return f'"{node}":[{_json_strings(devices)}]'
    # Go writes int map keys as strings and sorts them as strings ("-1" < "10" < "2")
    keyed = sorted((str(node), devices) for node, devices in ids.items())
    return ",".join([f'"{node}":[{_json_strings(devices)}]' for node, devices in keyed])


def marshal_device(checkpoint: DeviceManagerCheckpoint) -> bytes | None:
    """``json.Marshal`` of the V2 checkpoint, or None when the exact writer must decide."""
    data = checkpoint.data
    entries: tuple[Any, ...] | None = data.pod_device_entries  # a nil inside raises below
    registered: dict[str, Any] | None = data.registered_devices
    if entries is None or registered is None:
        return None
    try:
        encoded = _base64_all([entry.alloc_resp for entry in entries])
        rows = ",".join(
            [
                f'{{"PodUID":"{entry.pod_uid}","ContainerName":"{entry.container_name}",'
                f'"ResourceName":"{entry.resource_name}","DeviceIDs":{{{_json_ids(entry.device_ids)}}},'
                f'"AllocResp":"{response}"}}'
                for entry, response in zip(entries, encoded, strict=True)
            ]
        )
        devices = ",".join(
            [f'"{name}":[{_json_strings(ids)}]' for name, ids in sorted(registered.items())]
        )
        strings = 4 + 9 * len(entries) + len(registered)
        maps = [entry.device_ids for entry in entries]
        strings += sum(map(len, maps)) + sum(map(len, chain.from_iterable(map(dict.values, maps))))
        strings += sum(map(len, registered.values()))
    except (AttributeError, TypeError):
        return None
    text = (
        f'{{"Data":{{"PodDeviceEntries":[{rows}],"RegisteredDevices":{{{devices}}}}},'
        f'"Checksum":{checkpoint.checksum}}}'
    )
    if not marshal_safe(text) or text.count('"') != 2 * strings:
        return None
    return text.encode("ascii")


def _base64_decoded(texts: Sequence[str]) -> list[bytes] | None:
    """``base64.b64decode(text, validate=True)`` of every text (the C function it calls,
    without its Python wrapper), or None where one fails."""
    try:
        return list(map(_strict_a2b, texts))
    except (binascii.Error, ValueError):
        return None


def _string_lists(values: list[Any]) -> bool:
    """Every value a list of strings."""
    return all_of_type(values, list) and all_of_type(chain.from_iterable(values), str)


def _entries(raw: object) -> tuple[list[PodDevicesEntry], list[str], int, int] | None:
    """The entries, their go-spew texts, their string and dash counts, or None."""
    if type(raw) is not list:
        return None
    rows = fields_only(raw, 5, _ENTRY_VALUES)
    if rows is None:
        return None
    pods, names, resources, maps, allocs = columns(rows, 5)
    if not all_of_type(chain(pods, names, resources, allocs), str):
        return None
    if not all_of_type(maps, dict):
        return None
    keys = ",".join(chain.from_iterable(maps))
    if keys and not _NUMA_KEYS.fullmatch(keys):
        return None
    lists = list(chain.from_iterable(map(dict.values, maps)))
    if not _string_lists(lists):
        return None
    responses = _base64_decoded(allocs)
    if responses is None:
        return None
    if set(map(len, maps)) == {1}:  # the usual entries: their devices on one node each
        nodes = map(int, map(next, map(iter, maps)))
        devices = map(tuple, map(next, map(iter, map(dict.values, maps))))
        ids: list[Any] = list(map(dict, zip(zip(nodes, devices, strict=True), strict=True)))
    else:
        ids = [{int(node): tuple(devices) for node, devices in m.items()} for m in maps]
    made = build_slotted(PodDevicesEntry, [pods, names, resources, ids, responses], len(rows))
    texts = [
        f"{{PodUID:(string){pod} ContainerName:(string){name} ResourceName:(string){resource}"
        f" DeviceIDs:(checkpoint.DevicesPerNUMA)map[{_spew_ids(numa)}]"
        f" AllocResp:([]uint8)[{response}]}}"
        for pod, name, resource, numa, response in zip(
            pods, names, resources, ids, _spew_all_bytes(responses), strict=True
        )
    ]
    strings = 9 * len(rows) + sum(map(len, maps)) + sum(map(len, lists))
    dashes = "".join(chain(pods, names, resources, [keys], chain.from_iterable(lists))).count("-")
    return made, texts, strings, dashes


def decode_device_tree(document: PlainDocument) -> DeviceManagerCheckpoint | None:
    """The verified V2 checkpoint in a :func:`~plainjson.load_plain` document, or None."""
    tree = document.tree
    data = tree.get("Data")
    checksum = tree.get("Checksum", 0)
    if type(data) is not dict or not _TOP.issuperset(tree) or not _DATA.issuperset(data):
        return None
    if not ints_within([checksum], 0, UINT64_MAX):
        return None
    found = _entries(data.get("PodDeviceEntries", []))
    registered = data.get("RegisteredDevices", {})
    if found is None or type(registered) is not dict:
        return None
    lists = list(registered.values())
    if not _string_lists(lists):
        return None
    made, texts, strings, dashes = found
    strings += len(tree) + len(data) + len(registered) + sum(map(len, lists))
    if strings != document.strings:
        return None  # a duplicate key collapsed: Go merges or overrides
    dashes += "".join(chain(registered, chain.from_iterable(lists))).count("-")
    if dashes != document.dashes:
        return None  # a negative number: Go refuses -0 where Python reads 0
    devices: dict[str, tuple[str, ...] | None] = {
        name: tuple(ids) for name, ids in registered.items()
    }
    text = _spew_text(texts, _spew_registered(devices))
    if fnv1a_32(text.encode("ascii")) != checksum:
        return None  # corrupt, or a V1 file: the exact reader decides
    return DeviceManagerCheckpoint(DeviceCheckpointData(tuple(made), devices), checksum)


def decode_device_plain(data: bytes) -> DeviceManagerCheckpoint | None:
    """The checkpoint a released kubelet reads from ``data``, when it is plain V2 and verifies."""
    return without_cycle_collection(_read, data)


def _read(data: bytes) -> DeviceManagerCheckpoint | None:
    document = load_plain(data)
    return None if document is None else decode_device_tree(document)
