"""fastjson.parse gives gojson.parse's tree or error, on golden files and mutations of them."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from cpumanager.checkpoint.go import fastjson, gojson

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
SEEDS = [p.read_bytes() for p in sorted(GOLDEN.rglob("*.json"))]
EDGES = [
    b"", b" ", b"[]", b"[[1,[2]],{}]", b'{"a":1,"a":[{"b":[]}]}', b"NaN", b'{"a":Infinity}',
    b'"\\ud800"', b'"\\ud83d\\ude00"', b'"\xff"', b"\xef\xbb\xbf{}", b"1e999", b"-0", b"01",
    b'{"a":"\x01"}', b"[" * 100 + b"]" * 100, b'{"k":1} x', b"1.", b'"\\/"', b"true ",
]  # fmt: skip


def _outcome(parse: object, data: bytes) -> object:
    try:
        return parse(data)  # type: ignore[operator]
    except gojson.GoJSONSyntaxError as err:
        return ("error", err.message, err.offset)


def _mutations(count: int) -> list[bytes]:
    rng = random.Random(13)
    out = []
    for _ in range(count):
        data = bytearray(rng.choice(SEEDS))
        for _ in range(rng.randint(1, 3)):
            pos = rng.randrange(len(data) + 1)
            choice = rng.random()
            if choice < 0.4 and data:
                data[min(pos, len(data) - 1)] = rng.randrange(256)
            elif choice < 0.7:
                data[pos:pos] = rng.choice([b"{", b"]", b'"', b"\\u", b",", b"null", b"\xc3"])
            else:
                del data[pos : pos + rng.randint(1, 8)]
        out.append(bytes(data))
    return out


@pytest.mark.parametrize("data", SEEDS + EDGES + _mutations(300), ids=lambda d: repr(d[:24]))
def test_same_tree_or_same_error(data: bytes) -> None:
    assert _outcome(fastjson.parse, data) == _outcome(gojson.parse, data)


def test_nesting_beyond_pythons_recursion_falls_back() -> None:
    deep = b"[" * 5000 + b"]" * 5000
    tree = fastjson.parse(deep)
    depth = 0
    while isinstance(tree, gojson.JSONArray) and tree.items:
        tree, depth = tree.items[0], depth + 1
    assert depth == 4999
