"""Bytes <-> checkpoint models <-> StateSnapshot, exactly as the kubelet reads and writes them.

Reading one format is Go's ``json.Unmarshal`` into the format's struct (pre-initialised with
an empty, non-nil ``entries`` map) followed by the checksum check; see :mod:`gojson` for the
syntax rules and the spec §3.1 for the typed rules mirrored here: keys match fields
case-insensitively, the last duplicate scalar wins, duplicate ``entries`` objects merge,
``null`` leaves scalars unchanged but makes maps nil, ``checksum`` must be an unsigned
integer literal. Syntax errors are reported before type errors, type errors before the
checksum.

:func:`decode` tries the formats in the order of the released kubelets (v1.18 .. v1.3x): V1
first, then V2, and reports the V2 error when both fail. ``order="v2-first"`` gives the
newest development line's order. Writing produces Go's ``json.Marshal`` bytes: fields in
struct order, ``entries`` omitted when empty, map keys sorted bytewise.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, NoReturn, cast

from cpumanager.checkpoint.cpu import codec_fast as fast
from cpumanager.checkpoint.cpu.checksum import checksum_of
from cpumanager.checkpoint.cpu.cpulist import CPUListError, parse_cpu_list
from cpumanager.checkpoint.cpu.model import CheckpointV1, CheckpointV2, FormatName
from cpumanager.checkpoint.go import gojson
from cpumanager.checkpoint.go.gojson import JSONNumber, JSONObject, JSONValue, encode_string
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.gocompat import go_quote
from cpumanager.core.ids import ContainerName, PodUID
from cpumanager.core.state import StateSnapshot
from cpumanager.errors import CheckpointCorruptError, CheckpointFormatError

__all__ = [
    "Attempt",
    "DecodeOrder",
    "attempt",
    "attempts",
    "CPUListError",
    "checkpoint_v2_from_snapshot",
    "decode",
    "decode_as",
    "encode_checkpoint",
    "encode_v1",
    "encode_v2",
    "parse_cpu_list",
    "snapshot_from_plain",
    "snapshot_from_v2",
    "unknown_keys",
]

DecodeOrder = Literal["v1-first", "v2-first"]


_STRUCT_NAME: dict[FormatName, str] = {"v1": "CPUManagerCheckpointV1", "v2": "CPUManagerCheckpoint"}
_ENTRY_TYPE: dict[FormatName, str] = {
    "v1": "map[string]string",
    "v2": "map[string]map[string]string",
}
_UINT64_MAX = (1 << 64) - 1
_DIGITS = re.compile(r"[0-9]+")
_UINT64_DIGITS = 20
_MAX_SHOWN_DIGITS = 40

AttemptKind = Literal["ok", "syntax", "type", "corrupt"]


@dataclass(frozen=True, slots=True)
class Attempt:
    """The outcome of reading the bytes as one format, without raising.

    ``error`` is the kubelet's own error text for the failure (``checkpoint is corrupted``,
    ``unexpected end of JSON input``, ``json: cannot unmarshal ...``).
    """

    format: FormatName
    kind: AttemptKind
    checkpoint: CheckpointV1 | CheckpointV2 | None
    error: str = ""
    stored_checksum: int = 0
    computed_checksum: int = 0

    @property
    def ok(self) -> bool:
        return self.kind == "ok"


class _TypeError(Exception):
    """Go's UnmarshalTypeError, as text."""


def _type_error(fmt: FormatName, field: str, value: JSONValue, go_type: str) -> NoReturn:
    what = gojson.kind_of(value)
    if isinstance(value, JSONNumber) and go_type == "checksum.Checksum":
        text = value.text
        if len(text) > _MAX_SHOWN_DIGITS:  # Go quotes the whole number; keep it one short line
            text = f"{text[:_MAX_SHOWN_DIGITS]}... ({len(value.text)} characters)"
        what = f"number {text}"
    message = (
        f"json: cannot unmarshal {what} into Go struct field "
        f"{_STRUCT_NAME[fmt]}.{field} of type {go_type}"
    )
    raise _TypeError(message)


def _string_field(fmt: FormatName, name: str, value: JSONValue, current: str) -> str:
    if value is None:
        return current
    if isinstance(value, str):
        return value
    _type_error(fmt, name, value, "string")


def _checksum_field(fmt: FormatName, value: JSONValue, current: int) -> int:
    if value is None:
        return current
    # At most 20 digits fit a uint64; checking the length first keeps int() from refusing
    # (Python limits int() to 4,300 digits) or spending time on a 100,000-digit number.
    text = value.text if isinstance(value, JSONNumber) else ""
    if len(text) <= _UINT64_DIGITS and _DIGITS.fullmatch(text):
        number = int(text)
        if number <= _UINT64_MAX:
            return number
    _type_error(fmt, "checksum", value, "checksum.Checksum")


def _map_value_string(fmt: FormatName, field: str, value: JSONValue) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    _type_error(fmt, field, value, "string")


def _entries_v1(value: JSONObject, into: dict[str, str]) -> None:
    for key, item in value.members:
        into[key] = _map_value_string("v1", "entries", item)


def _entries_v2(value: JSONObject, into: dict[str, dict[str, str] | None]) -> None:
    for pod, item in value.members:
        if item is None:
            into[pod] = None
        elif isinstance(item, JSONObject):
            inner: dict[str, str] = {}
            for name, cpus in item.members:
                inner[name] = _map_value_string("v2", "entries", cpus)
            into[pod] = inner
        else:
            _type_error("v2", "entries", item, "map[string]string")


def _unmarshal(tree: JSONValue, fmt: FormatName) -> CheckpointV1 | CheckpointV2:
    policy = ""
    default = ""
    checksum = 0
    entries: dict[str, object] | None = {}
    if tree is None:  # a top-level null is a no-op in Go
        pass
    elif not isinstance(tree, JSONObject):
        kind = gojson.kind_of(tree)
        message = f"json: cannot unmarshal {kind} into Go value of type state.{_STRUCT_NAME[fmt]}"
        raise _TypeError(message)
    else:
        for key, value in tree.members:
            folded = gojson.fold_key(key)
            if folded == "policyname":
                policy = _string_field(fmt, "policyName", value, policy)
            elif folded == "defaultcpuset":
                default = _string_field(fmt, "defaultCpuSet", value, default)
            elif folded == "checksum":
                checksum = _checksum_field(fmt, value, checksum)
            elif folded == "entries":
                if value is None:
                    entries = None
                    continue
                if not isinstance(value, JSONObject):
                    _type_error(fmt, "entries", value, _ENTRY_TYPE[fmt])
                if entries is None:
                    entries = {}
                if fmt == "v1":
                    _entries_v1(value, entries)  # type: ignore[arg-type]
                else:
                    _entries_v2(value, entries)  # type: ignore[arg-type]
    if fmt == "v1":
        return CheckpointV1(policy, default, entries, checksum)  # type: ignore[arg-type]
    return CheckpointV2(policy, default, entries, checksum)  # type: ignore[arg-type]


def _attempt_tree(tree: JSONValue, fmt: FormatName) -> Attempt:
    try:
        checkpoint = _unmarshal(tree, fmt)
    except _TypeError as err:
        return Attempt(fmt, "type", None, str(err))
    computed = checksum_of(checkpoint)  # once per attempt: it walks the whole content
    if checkpoint.checksum not in (0, computed):
        return Attempt(
            fmt, "corrupt", checkpoint, "checkpoint is corrupted", checkpoint.checksum, computed
        )
    return Attempt(fmt, "ok", checkpoint, "", checkpoint.checksum, computed)


def attempt(data: bytes, fmt: FormatName) -> Attempt:
    """Read ``data`` as one format the way the kubelet's ``GetCheckpoint`` does; never raises."""
    try:
        tree = gojson.parse(data)
    except gojson.GoJSONSyntaxError as err:
        return Attempt(fmt, "syntax", None, err.message)
    return _attempt_tree(tree, fmt)


def _attempts(data: bytes, order: DecodeOrder) -> tuple[Attempt, Attempt]:
    try:
        tree = gojson.parse(data)
    except gojson.GoJSONSyntaxError as err:
        return Attempt("v1", "syntax", None, err.message), Attempt(
            "v2", "syntax", None, err.message
        )
    first: FormatName = "v1" if order == "v1-first" else "v2"
    second: FormatName = "v2" if order == "v1-first" else "v1"
    return _attempt_tree(tree, first), _attempt_tree(tree, second)


def _decode_tree(tree: JSONValue, order: DecodeOrder) -> tuple[Attempt, Attempt | None]:
    """The first attempt, and the second only when the first fails (one checksum pass)."""
    first: FormatName = "v1" if order == "v1-first" else "v2"
    second: FormatName = "v2" if order == "v1-first" else "v1"
    result = _attempt_tree(tree, first)
    if result.ok:
        return result, None
    return result, _attempt_tree(tree, second)


def _raise_for(result: Attempt, source: str, other: Attempt | None = None) -> None:
    if result.kind == "corrupt":
        raise CheckpointCorruptError(source, result.stored_checksum, result.computed_checksum)
    also = ""
    if other is not None and other.error and other.error != result.error:
        also = f" (as {other.format.upper()}: {other.error})"
    message = (
        f"checkpoint {source!r} cannot be decoded as {result.format.upper()}: {result.error}"
        f"{also}; the kubelet would refuse to start: fix the file and run "
        f"'cpumanager state rewrite', or drain the node and delete it"
    )
    raise CheckpointFormatError(message)


def decode_as(data: bytes, fmt: FormatName, *, source: str) -> CheckpointV1 | CheckpointV2:
    """Read ``data`` as exactly one format; typed error on syntax, type or checksum failure."""
    result = attempt(data, fmt)
    if not result.ok:
        _raise_for(result, source)
    assert result.checkpoint is not None
    return result.checkpoint


def decode(
    data: bytes, *, source: str, order: DecodeOrder = "v1-first"
) -> CheckpointV2 | CheckpointV1:
    """Read a ``cpu_manager_state`` file trying the formats in the kubelet's order.

    ``v1-first`` (released kubelets): V1, then V2; when both fail the V2 error is raised.
    ``v2-first`` (newest kubelets, and the choice for re-encoding): V2, then V1; when both
    fail the V1 error is raised. Files without entries verify as both only when their
    checksum is 0; the order then decides the format.
    """
    try:
        tree = gojson.parse(data)
    except gojson.GoJSONSyntaxError as err:
        first = Attempt("v1", "syntax", None, err.message)
        second: Attempt | None = Attempt("v2", "syntax", None, err.message)
    else:
        first, second = _decode_tree(tree, order)
    if first.ok:
        assert first.checkpoint is not None
        return first.checkpoint
    assert second is not None
    if second.ok:
        assert second.checkpoint is not None
        return second.checkpoint
    _raise_for(second, source, first)
    raise AssertionError  # pragma: no cover - _raise_for always raises


def attempts(data: bytes, *, order: DecodeOrder = "v1-first") -> tuple[Attempt, Attempt]:
    """Both format attempts in ``order`` (for diagnostics that show every reason)."""
    return _attempts(data, order)


_KNOWN_KEYS = frozenset({"policyname", "defaultcpuset", "entries", "checksum"})


def unknown_keys(data: bytes) -> tuple[str, ...]:
    """Top-level keys the kubelet's V1/V2 structs ignore (e.g. a newer format's ``data``)."""
    try:
        tree = gojson.parse(data)
    except gojson.GoJSONSyntaxError:
        return ()
    if not isinstance(tree, JSONObject):
        return ()
    found = (key for key, _ in tree.members if gojson.fold_key(key) not in _KNOWN_KEYS)
    return tuple(dict.fromkeys(found))


def _format_error(what: str, err: CPUListError, source: str) -> NoReturn:
    message = (
        f"checkpoint {source!r}: could not parse {what}: {err}; "
        "write CPU lists like '0-3,8' and run 'cpumanager state rewrite' to fix the checksum"
    )
    raise CheckpointFormatError(message) from None


def _one_list(text: str) -> CPUSet:
    return fast.parse_plain_range(text) or _cpu_list(text)


def _cpu_list(text: str) -> CPUSet:
    """:func:`parse_cpu_list`, remembering what parsed (the kubelet rereads the same lists)."""
    found = fast.cached_cpu_set(text)
    if found is None:
        found = parse_cpu_list(text)
        fast.remember_cpu_set(text, found)
    return found


# --- model <-> snapshot -------------------------------------------------------------------


def snapshot_from_v2(checkpoint: CheckpointV2, *, source: str) -> StateSnapshot:
    """Parse the CPU lists as the kubelet's restore does (default set first, then entries).

    A pod with an empty or nil container map keeps an empty entry, as in the kubelet. With
    several bad lists the error names the first in (pod, container) order.
    """
    return snapshot_from_plain(
        checkpoint.policy_name,
        checkpoint.default_cpu_set,
        checkpoint.entries,
        source=source,
    )


def snapshot_from_plain(
    policy: str,
    default_text: str,
    entries: Mapping[str, Mapping[str, str] | None] | None,
    *,
    source: str,
) -> StateSnapshot:
    """:func:`snapshot_from_v2` on the checkpoint's fields."""
    try:
        default = _cpu_list(default_text)
        # the usual file (one range per container) in one pass; else list by list
        parsed = (fast.plain_assignments(entries) if entries else None) or {
            pod: {name: _one_list(cpus) for name, cpus in (containers or {}).items()}
            for pod, containers in (entries or {}).items()
        }
    except CPUListError:
        _raise_first_bad(CheckpointV2(policy, default_text, entries), source)
    # PodUID and ContainerName are NewTypes of str: the keys are already what they name
    return StateSnapshot(policy, default, cast("dict[PodUID, dict[ContainerName, CPUSet]]", parsed))


def _raise_first_bad(checkpoint: CheckpointV2, source: str) -> NoReturn:
    text = checkpoint.default_cpu_set
    try:
        parse_cpu_list(text)
    except CPUListError as err:
        _format_error(f"default cpu set {go_quote(text)}", err, source)
    for pod, containers in sorted((checkpoint.entries or {}).items()):
        for name, cpus in sorted((containers or {}).items()):
            try:
                parse_cpu_list(cpus)
            except CPUListError as err:
                what = (
                    f"cpuset {go_quote(cpus)} for container {go_quote(name)} in pod {go_quote(pod)}"
                )
                _format_error(what, err, source)
    raise AssertionError  # pragma: no cover - called only after a list failed to parse


def checkpoint_v2_from_snapshot(snapshot: StateSnapshot) -> CheckpointV2:
    """What the kubelet's state store writes for this state, checksum included."""
    entries = {
        str(pod): {str(name): str(cpus) for name, cpus in containers.items()}
        for pod, containers in snapshot.assignments.items()
    }
    bare = CheckpointV2(snapshot.policy_name, str(snapshot.default_cpuset), entries, 0)
    return bare.with_checksum(checksum_of(bare))


def _encode_map(entries: Mapping[str, object]) -> str:
    parts = []
    for key in sorted(entries):
        value = entries[key]
        if value is None:
            rendered = "null"
        elif isinstance(value, str):
            rendered = encode_string(value)
        else:
            rendered = _encode_map(value)  # type: ignore[arg-type]
        parts.append(f"{encode_string(key)}:{rendered}")
    return "{" + ",".join(parts) + "}"


def encode_checkpoint(checkpoint: CheckpointV2 | CheckpointV1) -> bytes:
    """Go's ``json.Marshal`` of the struct, with the checksum exactly as stored."""
    text = (
        f'{{"policyName":{encode_string(checkpoint.policy_name)}'
        f',"defaultCpuSet":{encode_string(checkpoint.default_cpu_set)}'
    )
    if checkpoint.entries:  # omitempty: nil and empty maps are both left out
        text += f',"entries":{_encode_map(checkpoint.entries)}'
    text += f',"checksum":{checkpoint.checksum}}}'
    return text.encode("utf-8")


def encode_v2(snapshot: StateSnapshot) -> bytes:
    """The exact bytes a v1.18+ kubelet writes for this state."""
    # str() uncached: a cache keyed by wide bitmasks cost more to fill than it saved
    entries: dict[str, dict[str, str]] = {
        pod: {name: str(cpus) for name, cpus in containers.items()}
        for pod, containers in snapshot.assignments.items()
    }
    default = str(snapshot.default_cpuset)
    data = fast.encode_v2(snapshot.policy_name, default, entries)
    if data is None:
        bare = CheckpointV2(snapshot.policy_name, default, entries, 0)
        data = encode_checkpoint(bare.with_checksum(checksum_of(bare)))
    return data


def encode_v1(checkpoint: CheckpointV1) -> bytes:
    """A V1 file as a pre-1.18 kubelet wrote it, with a checksum every kubelet verifies."""
    bare = checkpoint.with_checksum(0)
    return encode_checkpoint(bare.with_checksum(checksum_of(bare)))
