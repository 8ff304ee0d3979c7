"""What the checkpoint formats after v1.35 share: the read record and the ``dataChecksum``.

The CPU formats are in ``cpu/v3_v4``, the memory formats in ``memory/v2_v3``;
:mod:`newer` names them all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from cpumanager.checkpoint.go import fastjson, gojson
from cpumanager.checkpoint.go.fnv import clean_text, fnv1a_32
from cpumanager.checkpoint.go.gotypes import GoScalar

__all__ = [
    "CHECKSUM",
    "STRING",
    "AttemptKind",
    "NewerAttempt",
    "NewerFormat",
    "data_checksum",
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
