"""``encoding/json.Marshal`` of Go types as data (:mod:`gotypes`), as the kubelet writes.

Fields in declaration order, ``omitempty`` drops empty maps/strings, map keys are written as
strings and sorted *as strings* (so ``"10"`` sorts before ``"2"``), nil maps/slices/pointers
are ``null``, ``[]byte`` is standard base64.
"""

from __future__ import annotations

import base64
from typing import Any

from cpumanager.checkpoint.go import gojson
from cpumanager.checkpoint.go.gotypes import (
    GoBytes,
    GoPtr,
    GoScalar,
    GoSlice,
    GoStruct,
    GoType,
    zero,
)

__all__ = ["marshal"]


def _empty(value: Any, go_type: GoType) -> bool:
    if isinstance(go_type, GoScalar):
        return bool(value == zero(go_type))
    if isinstance(go_type, GoStruct):
        return False
    return value is None or len(value) == 0


def _marshal(value: Any, go_type: GoType, out: list[str]) -> None:
    if isinstance(go_type, GoScalar):
        out.append(gojson.encode_string(value) if go_type.kind == "string" else str(value))
    elif isinstance(go_type, GoStruct):
        out.append("{")
        first = True
        for spec, attr in zip(go_type.fields, go_type.attrs(), strict=True):
            item = getattr(value, attr)
            if spec.omitempty and _empty(item, spec.type):
                continue
            if not first:
                out.append(",")
            first = False
            out.append(gojson.encode_string(spec.json_name) + ":")
            _marshal(item, spec.type, out)
        out.append("}")
    elif value is None:
        out.append("null")
    elif isinstance(go_type, GoPtr):
        _marshal(value, go_type.elem, out)
    elif isinstance(go_type, GoBytes):
        out.append('"' + base64.b64encode(value).decode("ascii") + '"')
    elif isinstance(go_type, GoSlice):
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(",")
            _marshal(item, go_type.elem, out)
        out.append("]")
    else:
        out.append("{")
        keyed = sorted(((str(key), key) for key in value), key=lambda pair: pair[0])
        for index, (text, key) in enumerate(keyed):
            if index:
                out.append(",")
            out.append(gojson.encode_string(text) + ":")
            _marshal(value[key], go_type.elem, out)
        out.append("}")


def marshal(value: Any, go_type: GoType) -> bytes:
    """``json.Marshal(value)``: compact, no trailing newline."""
    out: list[str] = []
    _marshal(value, go_type, out)
    return "".join(out).encode("utf-8")
