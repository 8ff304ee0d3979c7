"""YAML read as the kubelet reads it (go-yaml v2 through sigs.k8s.io/yaml), on PyYAML.

Each reading here was found apart from PyYAML's by the differential run against 1.32
(bench/diff_kubelet_config.py) and measured there; the whole files' texts are in
tests/formats/kubelet_config/test_document.py.
"""

from __future__ import annotations

import math

import pytest

from cpumanager.adapters.go_yaml import YamlShapeError, go_resolve, parse_yaml_keeping_duplicates
from cpumanager.formats.kubelet_config.document import YamlSyntaxError

SCALARS = [
    ("y", "bool", True),
    ("Off", "bool", False),
    ("NO", "bool", False),
    ("~", "null", None),
    ("", "null", None),
    ("0x10", "int", 16),
    ("017", "int", 15),
    ("0o17", "int", 15),
    ("0b101", "int", 5),
    ("1_000", "int", 1000),
    ("-0x10", "int", -16),
    ("9223372036854775808", "int", 2**63),  # a uint64
    ("1e3", "float", 1000.0),
    (".5", "float", 0.5),
    ("5.", "float", 5.0),
    ("1e400", "str", "1e400"),  # out of float64's range: a string
    ("0x", "str", "0x"),
    ("08", "float", 8.0),  # not octal: read as a float
    ("2001-12-14", "str", "2001-12-14"),
    ("+", "str", "+"),
]


@pytest.mark.parametrize(("text", "tag", "value"), SCALARS)
def test_plain_scalars_resolve_as_go_yaml_resolves_them(text: str, tag: str, value: object) -> None:
    assert go_resolve(text) == (tag, value)
    assert go_resolve(".inf")[0] == "float"
    assert math.isinf(float(str(go_resolve(".inf")[1])))


def test_keys_become_json_strings_and_repeats_name_the_value_line() -> None:
    body, repeats = parse_yaml_keeping_duplicates("1: a\ntrue: b\nk:\n  x: 1\nk:\n  x: 2\n")
    assert body == {"1": "a", "true": "b", "k": {"x": 2}}
    assert repeats == [("k", 6)]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("null: x\n", 'unsupported map key of type: %!s(<nil>), key: <nil>, value: "x"'),
        ("[1, 2]: x\n", "yaml: invalid map key: []interface {}{1, 2}"),
        ("a: .inf\n", "json: unsupported value: +Inf"),
    ],
)
def test_what_json_cannot_hold_is_refused_with_go_text(text: str, problem: str) -> None:
    with pytest.raises(YamlSyntaxError) as caught:
        parse_yaml_keeping_duplicates(text)
    assert caught.value.detail() == problem


def test_a_merge_key_merges_as_go_yaml_does() -> None:
    body, _ = parse_yaml_keeping_duplicates("m: &m {a: 1}\no:\n  <<: *m\n")
    assert body == {"m": {"a": 1}, "o": {"a": 1}}  # measured on the drop-in loader


def _aliased(levels: int, width: int) -> str:
    """``a0`` holds ``width`` scalars, each next key ``width`` aliases of the one before."""
    lines = ["a0: &a0 [" + ",".join(["x"] * width) + "]"]
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * width) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("levels", "width", "refused"),
    # the kubelet 1.32's answers on these files (bench/diff_kubelet_config.py's helper)
    [(3, 9, False), (5, 3, False), (2, 20, False), (4, 9, True), (3, 20, True), (8, 9, True)],
)
def test_alias_bombs_are_refused_where_go_yaml_refuses_them(
    levels: int, width: int, refused: bool
) -> None:
    text = _aliased(levels, width)
    if not refused:
        body, _ = parse_yaml_keeping_duplicates(text)
        assert isinstance(body, dict)
        assert len(body) == levels
        return
    with pytest.raises(YamlSyntaxError) as caught:
        parse_yaml_keeping_duplicates(text)
    assert caught.value.detail() == "yaml: document contains excessive aliasing"


def test_a_file_nested_past_the_limit_is_refused_before_it_is_composed() -> None:
    text = "a: " + "[" * 5000 + "]" * 5000 + "\n"
    with pytest.raises(YamlShapeError, match="nested more than"):
        parse_yaml_keeping_duplicates(text)


def test_only_the_first_document_is_read() -> None:
    # the kubelet 1.32 loads this file (its reader stops after the first document)
    body, _ = parse_yaml_keeping_duplicates("maxPods: 5\n---\n: : [\n")
    assert body == {"maxPods": 5}
