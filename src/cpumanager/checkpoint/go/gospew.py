"""go-spew's ``%#v`` of Go types as data (:mod:`gotypes`): the text a checkpoint checksum hashes.

Under the kubelet's hashing configuration (``SortKeys``, ``DisableMethods``, ``SpewKeys``;
``k8s.io/apimachinery/pkg/util/dump.ForHash`` adds ``DisablePointerAddresses`` and
``DisableCapacities``, which ``%#v`` never prints anyway). Types are printed in parentheses
except for map keys/values and slice elements; a pointer there prints ``<*>``; nil maps,
slices and pointers print ``<nil>``; map keys sort by value (integers numerically, strings
bytewise); a ``[]byte`` prints its bytes in decimal. One spew quirk is kept: a nil pointer
that is the last value of a map leaves the formatter's "ignore next type" flag set, so the
*next* struct field is printed without its type.
"""

from __future__ import annotations

from typing import Any

from cpumanager.checkpoint.go.fnv import clean_text
from cpumanager.checkpoint.go.gotypes import (
    GoBytes,
    GoMap,
    GoPtr,
    GoScalar,
    GoSlice,
    GoStruct,
    GoType,
)

__all__ = ["spew"]


class _Spew:
    """go-spew's ``formatState`` for ``%#v``, reduced to the kinds the checkpoints use."""

    __slots__ = ("ignore_next_type", "out")

    def __init__(self) -> None:
        self.out: list[str] = []
        self.ignore_next_type = False

    def pointer(self, value: Any, go_type: GoPtr) -> None:
        if value is None:
            if self.ignore_next_type:
                self.out.append("<nil>")  # the flag stays set, as in go-spew
                return
            self.out.append(f"({go_type.name})<nil>")
            return
        if self.ignore_next_type:
            self.out.append("<*>")
        else:
            self.out.append(f"({go_type.name})")
        self.ignore_next_type = True
        self.format(value, go_type.elem)

    def format(self, value: Any, go_type: GoType) -> None:
        if isinstance(go_type, GoPtr):
            self.pointer(value, go_type)
            return
        out = self.out
        if not self.ignore_next_type:
            out.append(f"({go_type.name})")
        self.ignore_next_type = False
        if isinstance(go_type, GoScalar):
            out.append(clean_text(value) if go_type.kind == "string" else str(value))
        elif isinstance(go_type, GoStruct):
            out.append("{")
            for index, (spec, attr) in enumerate(zip(go_type.fields, go_type.attrs(), strict=True)):
                if index:
                    out.append(" ")
                out.append(spec.go_name + ":")
                self.format(getattr(value, attr), spec.type)
            out.append("}")
        elif value is None:
            out.append("<nil>")
        elif isinstance(go_type, GoBytes):
            out.append("[" + " ".join(str(byte) for byte in value) + "]")
        elif isinstance(go_type, GoSlice):
            out.append("[")
            for index, item in enumerate(value):
                if index:
                    out.append(" ")
                self.ignore_next_type = True
                self.format(item, go_type.elem)
            out.append("]")
        else:
            self.map(value, go_type)

    def map(self, value: Any, go_type: GoMap) -> None:
        out = self.out
        out.append("map[")
        keys = sorted(value, key=clean_text) if go_type.key.kind == "string" else sorted(value)
        for index, key in enumerate(keys):
            if index:
                out.append(" ")
            self.ignore_next_type = True
            self.format(key, go_type.key)
            out.append(":")
            self.ignore_next_type = True
            self.format(value[key], go_type.elem)
        out.append("]")


def spew(value: Any, go_type: GoType, *, pointer: bool = False) -> str:
    """go-spew ``%#v`` of ``value`` (of ``&value`` when ``pointer``)."""
    state = _Spew()
    if pointer:
        assert isinstance(go_type, GoStruct)
        state.pointer(value, GoPtr(go_type))
    else:
        state.format(value, go_type)
    return "".join(state.out)
