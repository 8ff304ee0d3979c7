"""The generic Go machinery: go-spew's %#v, json.Marshal and json.Unmarshal rules."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from cpumanager.checkpoint.go import gojson
from cpumanager.checkpoint.go.godecode import GoTypeError, unmarshal
from cpumanager.checkpoint.go.goencode import marshal
from cpumanager.checkpoint.go.gospew import spew
from cpumanager.checkpoint.go.gotypes import (
    GoBytes,
    GoField,
    GoMap,
    GoPtr,
    GoScalar,
    GoSlice,
    GoStruct,
    zero,
)


@dataclass(frozen=True, slots=True)
class Inner:
    n: int = 0


@dataclass(frozen=True, slots=True)
class Outer:
    name: str = ""
    ptrs: dict[int, Inner | None] | None = None
    after: tuple[int, ...] | None = None
    raw: bytes | None = None
    tags: dict[str, str] | None = None


INT = GoScalar("int", "int")
STR = GoScalar("string", "string")
INNER = GoStruct("pkg", "Inner", Inner, (GoField("N", "n", INT),))
OUTER = GoStruct(
    "pkg",
    "Outer",
    Outer,
    (
        GoField("Name", "name", STR),
        GoField("Ptrs", "ptrs", GoMap(INT, GoPtr(INNER), "map[int]*pkg.Inner")),
        GoField("After", "after", GoSlice(INT, "[]int")),
        GoField("Raw", "raw", GoBytes()),
        GoField("Tags", "tags", GoMap(STR, STR, "map[string]string"), omitempty=True),
    ),
)


def _decode(text: str, initial: Outer | None = None) -> Outer:
    result: Outer = unmarshal(gojson.parse(text.encode()), OUTER, initial or zero(OUTER))
    return result


SPEW = [
    ("zero value", Outer(), "(pkg.Outer){Name:(string) Ptrs:(map[int]*pkg.Inner)<nil> "
     "After:([]int)<nil> Raw:([]uint8)<nil> Tags:(map[string]string)<nil>}"),
    ("pointer in map prints <*>, keys numeric", Outer("x", {10: Inner(1), 2: Inner(2)}, ()),
     "(pkg.Outer){Name:(string)x Ptrs:(map[int]*pkg.Inner)map[2:<*>{N:(int)2} 10:<*>{N:(int)1}] "
     "After:([]int)[] Raw:([]uint8)<nil> Tags:(map[string]string)<nil>}"),
    ("nil pointer last in a map hides the next field's type (go-spew quirk)",
     Outer("x", {1: None}, (3,)),
     "(pkg.Outer){Name:(string)x Ptrs:(map[int]*pkg.Inner)map[1:<nil>] After:[3] "
     "Raw:([]uint8)<nil> Tags:(map[string]string)<nil>}"),
    ("bytes in decimal, string keys bytewise", Outer(raw=b"\x00\xff", tags={"b": "1", "B": "2"}),
     "(pkg.Outer){Name:(string) Ptrs:(map[int]*pkg.Inner)<nil> After:([]int)<nil> "
     "Raw:([]uint8)[0 255] Tags:(map[string]string)map[B:2 b:1]}"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "value", "expected"), SPEW, ids=[c[0] for c in SPEW])
def test_spew(name: str, value: Outer, expected: str) -> None:
    assert spew(value, OUTER) == expected


def test_spew_pointer_to_struct() -> None:
    assert spew(Inner(5), INNER, pointer=True) == "(*pkg.Inner){N:(int)5}"


MARSHAL = [
    ("nil everything, omitempty map left out", Outer(),
     '{"name":"","ptrs":null,"after":null,"raw":null}'),
    ("int keys sort as strings", Outer(ptrs={10: None, 2: Inner(1), -1: None}, after=()),
     '{"name":"","ptrs":{"-1":null,"10":null,"2":{"n":1}},"after":[],"raw":null}'),
    ("bytes as base64, html escaped", Outer(name="<&>", raw=b"\x0a\x00", tags={"k": "v"}),
     '{"name":"\\u003c\\u0026\\u003e","ptrs":null,"after":null,"raw":"CgA=","tags":{"k":"v"}}'),
]  # fmt: skip


@pytest.mark.parametrize(("name", "value", "expected"), MARSHAL, ids=[c[0] for c in MARSHAL])
def test_marshal(name: str, value: Outer, expected: str) -> None:
    assert marshal(value, OUTER).decode() == expected


UNMARSHAL = [
    ("keys fold case, unknown ignored", '{"NAME":"a","other":1}', Outer("a")),
    ("null leaves a string, nils a map", '{"name":null,"ptrs":null}', Outer()),
    ("duplicate maps merge", '{"tags":{"a":"1"},"tags":{"b":"2"}}',
     Outer(tags={"a": "1", "b": "2"})),
    ("map keys parse as ParseInt", '{"ptrs":{"+1":{"n":1},"01":null}}', Outer(ptrs={1: None})),
    ("duplicate slice decodes into the old elements", '{"after":[1,2],"after":[3]}',
     Outer(after=(3,))),
    ("bytes from base64 or an array", '{"raw":"CgA="}', Outer(raw=b"\n\x00")),
    ("bytes from a JSON array", '{"raw":[1,2]}', Outer(raw=b"\x01\x02")),
    ("empty array is a non-nil empty slice", '{"after":[]}', Outer(after=())),
]  # fmt: skip


@pytest.mark.parametrize(("name", "text", "expected"), UNMARSHAL, ids=[c[0] for c in UNMARSHAL])
def test_unmarshal(name: str, text: str, expected: Outer) -> None:
    assert _decode(text) == expected


_FIELD = "json: cannot unmarshal {} into Go struct field {} of type {}"
ERRORS = [
    ('{"name":1}', _FIELD.format("number", "Outer.name", "string")),
    ('{"ptrs":{"x":null}}', _FIELD.format("number x", "Outer.ptrs", "int")),
    ('{"ptrs":{"1":{"n":"1"}}}', _FIELD.format("string", "Inner.ptrs.n", "int")),
    ('{"ptrs":{"1":{"n":1.5}}}', _FIELD.format("number 1.5", "Inner.ptrs.n", "int")),
    ('{"after":{}}', _FIELD.format("object", "Outer.after", "[]int")),
    ('{"raw":"***"}', "illegal base64 data at input byte 0"),
    ('{"raw":[256]}', _FIELD.format("number 256", "Outer.raw", "uint8")),
    ("[]", "json: cannot unmarshal array into Go value of type pkg.Outer"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "message"), ERRORS, ids=[c[0] for c in ERRORS])
def test_unmarshal_errors(text: str, message: str) -> None:
    with pytest.raises(GoTypeError) as caught:
        _decode(text)
    assert str(caught.value) == message


def test_struct_type_must_match_its_dataclass() -> None:
    with pytest.raises(ValueError, match="fields"):
        GoStruct("pkg", "Bad", Inner, ())
