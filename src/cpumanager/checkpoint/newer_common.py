"""What the checkpoint formats after v1.35 share: the read record and the ``dataChecksum``.

The CPU formats are in ``cpu/v3_v4``, the memory formats in ``memory/v2_v3``;
:mod:`newer` names them all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from cpumanager.checkpoint.cpu.cpulist import CPUListError, parse_cpu_list
from cpumanager.checkpoint.go import fastjson, gojson
from cpumanager.checkpoint.go.fnv import clean_text, fnv1a_32
from cpumanager.checkpoint.go.godecode import GoTypeError, unmarshal
from cpumanager.checkpoint.go.gotypes import GoScalar, GoStruct

__all__ = [
    "CHECKSUM",
    "STRING",
    "AttemptKind",
    "NewerAttempt",
    "NewerFormat",
    "attempt_wrapped",
    "data_checksum",
    "data_fields_set",
    "parse",
]

STRING = GoScalar("string", "string")
CHECKSUM = GoScalar("uint64", "checksum.Checksum")


def data_checksum(data: str) -> int:
    """``checksum.New(data)`` for a string: FNV-1a 32 of go-spew's ``(string)`` + the raw text."""
    return fnv1a_32(("(string)" + clean_text(data)).encode("utf-8"))


AttemptKind = Literal["ok", "syntax", "type", "corrupt"]
NewerFormat = Literal["cpu-v3", "cpu-v4", "memory-v2", "memory-v3"]


@dataclass(frozen=True, slots=True)
class NewerAttempt:
    """One format's read of the bytes, as the kubelet's ``GetCheckpoint`` does it."""

    format: NewerFormat
    kind: AttemptKind
    checkpoint: Any = None
    data: Any = None
    error: str = ""
    stored_checksum: int = 0
    computed_checksum: int = 0

    @property
    def ok(self) -> bool:
        return self.kind == "ok"


def parse(data: bytes) -> gojson.JSONValue:
    return fastjson.parse(data)


def attempt_wrapped(
    data: bytes,
    fmt: NewerFormat,
    manager: str,
    outer: tuple[GoStruct, Any],
    inner: tuple[GoStruct, Any],
    *,
    check: Callable[[Any], str] | None = None,
) -> NewerAttempt:
    """Read a format whose ``data`` string holds the state and ``dataChecksum`` guards it (CPU
    V4, memory V3): unmarshal the outer object, then ``data``, then verify the checksum, with
    the kubelet's texts (``manager``: "cpu" or "memory"). ``check`` returns an error text for
    decoded state the kubelet's own ``UnmarshalJSON`` methods refuse, or ""."""
    try:
        checkpoint = unmarshal(parse(data), *outer)
    except gojson.GoJSONSyntaxError as err:
        return NewerAttempt(fmt, "syntax", error=err.message)
    except GoTypeError as err:
        message = f"failed to deserialize {manager} manager checkpoint: {err}"
        return NewerAttempt(fmt, "type", error=message)
    try:
        state = unmarshal(parse(checkpoint.data.encode("utf-8")), *inner)
    except gojson.GoJSONSyntaxError as err:
        message = f"failed to deserialize {manager} manager checkpoint data: {err.message}"
        return NewerAttempt(fmt, "type", checkpoint, error=message)
    except GoTypeError as err:
        message = f"failed to deserialize {manager} manager checkpoint data: {err}"
        return NewerAttempt(fmt, "type", checkpoint, error=message)
    bad = check(state) if check is not None else ""
    if bad:
        return NewerAttempt(fmt, "type", checkpoint, error=bad)
    computed = data_checksum(checkpoint.data)
    if checkpoint.data_checksum != computed:
        return NewerAttempt(
            fmt,
            "corrupt",
            checkpoint,
            state,
            "checkpoint is corrupted",
            checkpoint.data_checksum,
            computed,
        )
    return NewerAttempt(fmt, "ok", checkpoint, state, "", computed, computed)


_UINT64_MAX = (1 << 64) - 1


def _uint64(value: gojson.JSONValue) -> int | None:
    """A JSON number Go stores in a ``uint64`` field, or None (a type error: left unchanged)."""
    if not isinstance(value, gojson.JSONNumber):
        return None
    text = value.text
    if not text.isdigit():  # a sign, fraction or exponent: not a uint64 for Go
        return None
    number = int(text)
    return number if number <= _UINT64_MAX else None


def _bad_pod_cpuset(value: gojson.JSONValue) -> bool:
    """A ``podEntries`` object one of whose ``PodEntry.UnmarshalJSON`` calls returns an error.

    Such an error stops Go's decoder on the spot (unlike a type error, which it records and
    carries on after), so later members of the document are never stored.
    """
    if not isinstance(value, gojson.JSONObject):
        return False
    for _, entry in value.members:
        if entry is None:
            continue
        if not isinstance(entry, gojson.JSONObject):
            return True  # json: cannot unmarshal ... into Go value of type state.podEntryJSON
        cpus = ""
        for key, item in entry.members:
            if gojson.fold_key(key) != "cpuset" or item is None:
                continue
            if not isinstance(item, str):
                return True
            cpus = item
        try:
            parse_cpu_list(cpus)
        except CPUListError:
            return True
    return False


def data_fields_set(data: bytes, *, pod_cpusets: bool = False) -> bool:
    """Whether Go's decoder, failing on ``data``, still stored a ``data`` or ``dataChecksum``.

    The 1.37 readers (CPU V4, memory V3) refuse to fall back to older formats once
    ``len(Data) > 0 || DataChecksum != 0`` after a failed read. A syntax error stores nothing
    (Go checks the whole text first); a type error is recorded and decoding goes on, so the
    two fields hold the last well-typed value given to them; an error from an
    ``UnmarshalJSON`` method (the CPU pod entries, ``pod_cpusets``) stops decoding there.
    """
    try:
        tree = fastjson.parse(data)
    except gojson.GoJSONSyntaxError:
        return False
    if not isinstance(tree, gojson.JSONObject):
        return False
    text = ""
    checksum = 0
    for key, value in tree.members:
        name = gojson.fold_key(key)
        if name == "data" and isinstance(value, str):
            text = value
        elif name == "datachecksum":
            number = _uint64(value)
            checksum = checksum if number is None else number
        elif pod_cpusets and name == "podentries" and _bad_pod_cpuset(value):
            break
    return bool(text) or checksum != 0
