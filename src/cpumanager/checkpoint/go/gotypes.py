"""Go types as data: checkpoint structs described once, for three generic walkers.

A checkpoint struct is described once (:class:`GoStruct` with its fields and tags, maps,
slices, pointers, scalars) and three walkers serve every checkpoint kind, byte for byte as
the kubelet: :func:`~cpumanager.checkpoint.go.godecode.unmarshal` (``json.Unmarshal``),
:func:`~cpumanager.checkpoint.go.goencode.marshal` (``json.Marshal``) and
:func:`~cpumanager.checkpoint.go.gospew.spew` (go-spew ``%#v``, the checksum's input).

Values: a struct is an instance of its frozen dataclass, a map a ``dict`` (``None`` = nil),
a slice a ``tuple`` (``None`` = nil), ``[]byte`` ``bytes`` (``None`` = nil), a pointer its
struct or ``None``. Treat them as read-only.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal

from cpumanager.checkpoint.go import gojson

__all__ = [
    "GoBytes",
    "GoField",
    "GoMap",
    "GoPtr",
    "GoScalar",
    "GoSlice",
    "GoStruct",
    "GoType",
    "ScalarKind",
    "zero",
]

ScalarKind = Literal["string", "int", "int64", "uint64", "uint8"]


@dataclass(frozen=True, slots=True)
class GoScalar:
    """A string or integer kind; ``name`` is its Go type as reflect prints it."""

    kind: ScalarKind
    name: str


@dataclass(frozen=True, slots=True)
class GoBytes:
    """``[]byte``: base64 in JSON, decimal bytes in spew."""

    name: str = "[]uint8"


@dataclass(frozen=True, slots=True)
class GoSlice:
    elem: GoType
    name: str


@dataclass(frozen=True, slots=True)
class GoMap:
    key: GoScalar
    elem: GoType
    name: str


@dataclass(frozen=True, slots=True)
class GoPtr:
    """A pointer to a struct (the only pointers the checkpoints hold)."""

    elem: GoStruct

    @property
    def name(self) -> str:
        return "*" + self.elem.name


@dataclass(frozen=True, slots=True)
class GoField:
    go_name: str
    json_name: str
    type: GoType
    omitempty: bool = False


@dataclass(frozen=True, slots=True)
class GoStruct:
    """A struct type; ``cls`` is a frozen dataclass whose fields follow ``fields`` in order."""

    package: str
    short_name: str
    cls: type
    fields: tuple[GoField, ...]
    attr_names: tuple[str, ...] = field(default=(), init=False, compare=False)
    folded: dict[str, int] = field(default_factory=dict, init=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        names = tuple(f.name for f in fields(self.cls))
        if len(names) != len(self.fields):
            message = (
                f"{self.cls.__name__} has {len(names)} fields, "
                f"{self.short_name} has {len(self.fields)}"
            )
            raise ValueError(message)
        object.__setattr__(self, "attr_names", names)
        folded = {gojson.fold_key(f.json_name): i for i, f in enumerate(self.fields)}
        object.__setattr__(self, "folded", folded)

    @property
    def name(self) -> str:
        return f"{self.package}.{self.short_name}"

    def attrs(self) -> tuple[str, ...]:
        return self.attr_names


GoType = GoScalar | GoBytes | GoSlice | GoMap | GoPtr | GoStruct


def zero(go_type: GoType) -> Any:
    """Go's zero value of ``go_type``."""
    if isinstance(go_type, GoScalar):
        return "" if go_type.kind == "string" else 0
    if isinstance(go_type, GoStruct):
        return go_type.cls(*(zero(f.type) for f in go_type.fields))
    return None
