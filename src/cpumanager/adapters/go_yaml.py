"""YAML read as the kubelet reads it: go-yaml v2 through sigs.k8s.io/yaml, on PyYAML.

The kubelet converts a YAML file to JSON before decoding it. Where go-yaml and PyYAML
differ, go-yaml's reading is taken (measured against 1.32, bench/diff_kubelet_config.py):

* plain scalars resolve as go-yaml v2 resolves them: ``y``/``n``/``on``/``off`` are booleans,
  ``0x10``, ``0o17``, ``017`` and ``1_000`` integers, ``1e3`` a float; an integer beyond
  int64 is a uint64, then a float; a float out of float64's range stays a string;
* map keys become JSON's strings (``1`` -> ``"1"``, ``true`` -> ``"true"``); a null key, a
  list key or an infinite number cannot be converted, and is refused with go's text;
* a syntax error names the line go-yaml names (its scanner counts from 1 and ends the last
  line; its parser counts from 0) and uses its words.

:func:`parse_yaml_keeping_duplicates` is the ``ParseYaml`` the kubelet's document loader
(``formats/kubelet_config/document.py``) takes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

import yaml

from cpumanager.adapters._text import MAX_YAML_DEPTH, yaml_shape_problem
from cpumanager.formats.kubelet_config.document import YamlSyntaxError

__all__ = ["YamlShapeError", "parse_yaml_keeping_duplicates"]


class YamlShapeError(Exception):
    """Nested deeper than the project reads, or an alias inside its own anchor: refused
    before PyYAML's composer and constructor recurse over it."""


_MAX_DUPLICATES = 20  # enough to name; a hostile file may repeat a key 100,000 times

_TRUE = ("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON")
_FALSE = ("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF")
_BOOLS = {**dict.fromkeys(_TRUE, True), **dict.fromkeys(_FALSE, False)}
_NULLS = frozenset(("", "~", "null", "Null", "NULL"))
_SPECIAL_FLOATS = {
    **dict.fromkeys((".nan", ".NaN", ".NAN"), math.nan),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), math.inf),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), -math.inf),
}
_YAML_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_GO_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+\.?[0-9]*)([eE][-+]?[0-9]+)?")
_TIMESTAMP = re.compile(r"\d{4}-\d{1,2}-\d{1,2}([Tt ]|$)")
_TAG = "tag:yaml.org,2002:"
_DIGITS = {2: "01", 8: "01234567", 10: "0123456789", 16: "0123456789abcdefABCDEF"}


def _go_int(text: str) -> int | None:
    """``strconv.ParseInt(text, 0, 64)``, then ``ParseUint``: base prefixes, a leading 0
    for octal; None when neither reads it."""
    sign, digits = (text[0], text[1:]) if text[:1] in "+-" else ("", text)
    base = 10
    lower = digits[:2].lower()
    if lower in ("0x", "0o", "0b"):
        base, digits = {"0x": 16, "0o": 8, "0b": 2}[lower], digits[2:]
    elif len(digits) > 1 and digits.startswith("0"):
        base, digits = 8, digits[1:]
    allowed = _DIGITS[base]
    if not digits or any(ch not in allowed for ch in digits):
        return None
    value = int(digits, base) * (-1 if sign == "-" else 1)
    if -(2**63) <= value < 2**63 or (sign != "-" and value < 2**64):
        return value
    return None


def go_resolve(text: str) -> tuple[str, object]:
    """go-yaml v2's reading of a plain scalar: (tag, value)."""
    if text in _BOOLS:
        return "bool", _BOOLS[text]
    if text in _NULLS:
        return "null", None
    if text in _SPECIAL_FLOATS:
        return "float", _SPECIAL_FLOATS[text]
    if text == "<<":
        return "merge", text  # a merge key: the mapping it names is merged in
    first = text[:1]
    if first == ".":
        if _GO_FLOAT.fullmatch(text):
            number = float(text)
            if math.isfinite(number):
                return "float", number
        return "str", text
    if not (first.isdigit() or first in "+-"):
        return "str", text
    if _TIMESTAMP.match(text):
        return "str", text  # a timestamp: Go re-encodes it as a string too
    plain = text.replace("_", "")
    number_int = _go_int(plain)
    if number_int is not None:
        return "int", number_int
    if _YAML_FLOAT.fullmatch(plain):
        number = float(plain)
        if math.isfinite(number):
            return "float", number
    return "str", text


class _GoLoader(yaml.SafeLoader):
    """SafeLoader reading scalars and keys as go-yaml and sigs.k8s.io/yaml do, and recording
    keys given twice in a mapping with the line of the repeat (the kubelet's strict YAML
    reader refuses them)."""

    duplicates: list[tuple[str, int]]

    def resolve(self, kind: type, value: object, implicit: tuple[bool, bool]) -> str:
        if kind is yaml.ScalarNode and implicit[0] and isinstance(value, str):
            return _TAG + go_resolve(value)[0]
        return str(super().resolve(kind, value, implicit))  # type: ignore[no-untyped-call]


def _scalar(loader: _GoLoader, node: yaml.ScalarNode) -> object:
    text = str(loader.construct_scalar(node))
    tag, value = go_resolve(text)
    wanted = node.tag.removeprefix(_TAG)
    if tag == wanted:
        return value
    return yaml.SafeLoader.yaml_constructors[node.tag](loader, node)  # an explicit tag


for _name in ("bool", "null", "int", "float"):
    _GoLoader.add_constructor(_TAG + _name, _scalar)


class ConversionError(Exception):
    """What sigs.k8s.io/yaml cannot turn into JSON (the text has no ``yaml:`` prefix)."""


def _go_syntax(value: object) -> str:
    """Go's ``%#v`` of a decoded YAML value, for the scalars and lists a key may be."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[]interface {}{" + ", ".join(_go_syntax(v) for v in value) + "}"
    if isinstance(value, dict):
        inner = ", ".join(f"{_go_syntax(k)}:{_go_syntax(v)}" for k, v in value.items())
        return "map[interface {}]interface {}{" + inner + "}"
    return str(value)


def _json_key(key: object, value: object) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int):
        return str(key)
    if isinstance(key, float):
        if math.isnan(key):
            return ".nan"
        if math.isinf(key):
            return ".inf" if key > 0 else "-.inf"
        return repr(key).removesuffix(".0")
    if key is None:
        msg = f"unsupported map key of type: %!s(<nil>), key: <nil>, value: {_go_syntax(value)}"
        raise ConversionError(msg)
    msg = f"yaml: invalid map key: {_go_syntax(key)}"
    raise ConversionError(msg)


def _mapping(loader: _GoLoader, node: yaml.MappingNode) -> dict[str, object]:
    loader.flatten_mapping(node)
    out: dict[str, object] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        value = loader.construct_object(value_node, deep=True)
        if isinstance(key, list | dict):
            msg = f"yaml: invalid map key: {_go_syntax(key)}"
            raise ConversionError(msg)
        name = _json_key(key, value)
        if name in out and len(loader.duplicates) < _MAX_DUPLICATES:
            # go-yaml names the line of the value given again
            loader.duplicates.append((name, value_node.start_mark.line + 1))
        out[name] = value
    return out


_GoLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def _not_finite(value: object) -> str | None:
    """Go's JSON encoder refuses an infinite or NaN float (sorted keys, as it walks)."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "-Inf")
    items: list[object] = []
    if isinstance(value, Mapping):
        items = [value[k] for k in sorted(value)]
    elif isinstance(value, list):
        items = value
    for item in items:
        found = _not_finite(item)
        if found:
            return found
    return None


def parse_yaml_keeping_duplicates(text: str) -> tuple[object, list[tuple[str, int]]]:
    """The first YAML document (the kubelet's YAML reader takes the first), and each key
    found again in its mapping with the line of the repeat; YamlSyntaxError with go-yaml's
    line and problem."""
    try:
        body, duplicates = _first_document(text)
    except ConversionError as err:
        raise YamlSyntaxError(None, str(err), bare=True) from err
    except yaml.YAMLError as err:
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        untabbed = _TRAILING_BLANKS.sub("", _TAB_VALUE.sub(r"\1 ", text))
        if "'\\t'" in problem and untabbed != text:
            # go-yaml takes a tab after "key:" as the separating blank, and a tab ending a
            # line as trailing blanks; PyYAML does neither
            return parse_yaml_keeping_duplicates(untabbed)  # its error is go-yaml's too
        if _tab_in_plain_indent(err, text):
            problem = "found a tab character that violates indentation"
        alias = _ALIAS.fullmatch(problem)
        if alias:  # go-yaml finds it while decoding: no line
            raise YamlSyntaxError(None, f"unknown anchor '{alias.group(1)}' referenced") from err
        raise YamlSyntaxError(_go_line(err, text), _go_problem(err, problem)) from err
    bad = _not_finite(body)
    if bad:
        raise YamlSyntaxError(None, f"json: unsupported value: {bad}", bare=True)
    return body, duplicates


_TAB_VALUE = re.compile(r"^(\s*[^\s#'\"\[{-][^:\n]*:)\t+", re.MULTILINE)
_TRAILING_BLANKS = re.compile(r"[ \t]*\t[ \t]*$", re.MULTILINE)


def _go_line(err: yaml.YAMLError, text: str) -> int | None:
    """The line go-yaml prints: a scanner's problem line counted from 1 (reaching the end of
    the stream closes the last line), a parser's counted from 0; the context's line (from 0)
    when the problem is on the first line; none when that is 0 too."""
    problem = getattr(err, "problem_mark", None)
    context = getattr(err, "context_mark", None)
    line = 0
    if problem is not None:
        line = problem.line
        what = str(getattr(err, "problem", ""))
        at_end = "could not find expected ':'" in what or "<stream end>" in what
        if at_end and problem.index >= len(text) and problem.column != 0:
            line += 1  # go-yaml ends the last line when it reaches the end of the stream
    if line != 0:
        return line + 1 if isinstance(err, yaml.scanner.ScannerError) else line
    if context is not None and context.line != 0:
        return int(context.line)
    return None


_PLAIN_VALUE = re.compile(
    r"^[ ]*(?:- +)*[^\s#'\"\[{|>&*!%@`-][^:#]*:[ ]+[^\s#'\"\[{|>&*!%@`]"  # key: plain
    r"|^[ ]*(?:- +)+[^\s#'\"\[{|>&*!%@`-](?:[^:]|:(?! ))*$"  # - plain
)


def _tab_in_plain_indent(err: yaml.YAMLError, text: str) -> bool:
    """A tab leading a line after a plain scalar: go-yaml's plain scalar scanner reads on
    into the next line and refuses the tab in its indentation (PyYAML ends the scalar and
    finds a tab that starts no token)."""
    mark = getattr(err, "problem_mark", None)
    if mark is None or mark.index >= len(text) or text[mark.index] != "\t":
        return False
    lines = text.splitlines()
    if mark.line >= len(lines) or lines[mark.line][: mark.column].strip(" \t"):
        return False
    earlier = [line for line in lines[: mark.line] if line.strip()]
    return bool(earlier) and _PLAIN_VALUE.match(earlier[-1]) is not None


_PROBLEMS = {
    "mapping values are not allowed here": "mapping values are not allowed in this context",
}


_EXPECTED = re.compile(r"expected (.*?),? but (?:found|got) .*")
_ALIAS = re.compile(r"found undefined alias '(.*)'")


def _go_problem(err: yaml.YAMLError, problem: str) -> str:
    """go-yaml's words for PyYAML's problem (the two parsers descend from the same one)."""
    if "that cannot start any token" in problem:
        return "found character that cannot start any token"
    if problem.startswith("found unknown escape character"):
        return "found unknown escape character"
    if problem.startswith("expected <block end>"):
        context = str(getattr(err, "context", "") or "")
        if "block collection" in context:
            return "did not find expected '-' indicator"
        return "did not find expected key"
    expected = _EXPECTED.fullmatch(problem)
    if expected:
        wanted = expected.group(1).replace("the node content", "node content")
        return f"did not find expected {wanted}"
    return _PROBLEMS.get(problem, problem)


def _first_document(text: str) -> tuple[object, list[tuple[str, int]]]:
    problem = yaml_shape_problem(text, max_depth=MAX_YAML_DEPTH, loader=_GoLoader, first_only=True)
    if problem is not None:
        raise YamlShapeError(problem)
    loader = _GoLoader(text)
    loader.duplicates = []
    try:
        body = None
        node = loader.get_node() if loader.check_node() else None
        if node is not None:
            _refuse_excessive_aliasing(node)
            body = loader.construct_document(node)
    finally:
        loader.dispose()
    return body, loader.duplicates


# go-yaml v2's guard against alias bombs: past 100 decodes made through aliases and 1,000
# in all, the share made through aliases may be 99% up to 400,000 decodes, falling to 10%
# at 4,000,000
_RATIO_LOW, _RATIO_HIGH = 400_000, 4_000_000


def _allowed_alias_ratio(decodes: int) -> float:
    if decodes <= _RATIO_LOW:
        return 0.99
    if decodes >= _RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decodes - _RATIO_LOW) / (_RATIO_HIGH - _RATIO_LOW)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _refuse_excessive_aliasing(root: yaml.Node) -> None:
    """go-yaml's ``document contains excessive aliasing``, counted as its decoder counts.

    PyYAML gives an alias the anchored node itself, so a walk of the expanded tree (what
    go-yaml decodes) grows with the aliases' product: nine aliases nested eight deep are 43
    million nodes. The positions that are aliases are found first (an anchor comes before
    its aliases in document order, so a node met again in a pre-order walk is an alias
    there); the expanded walk then counts as go-yaml does (the document, every node, an
    alias node and then its target, the ones reached through an alias apart) and stops at
    go-yaml's limit, which bounds it by the size of the text.
    """
    aliases: set[tuple[int, int]] = set()
    seen: set[int] = set()
    stack: list[tuple[int, int, yaml.Node]] = [(0, 0, root)]
    while stack:
        parent, index, node = stack.pop()
        if id(node) in seen:
            aliases.add((parent, index))
            continue
        seen.add(id(node))
        children = _children(node)
        stack.extend((id(node), i, child) for i, child in reversed(list(enumerate(children))))
    if not aliases:
        return
    decodes, through_alias = 1, 0  # the document node
    walk: list[tuple[yaml.Node, bool, bool]] = [(root, False, (0, 0) in aliases)]
    while walk:
        node, inside, is_alias = walk.pop()
        decodes += 1
        through_alias += inside
        if (
            through_alias > 100
            and decodes > 1000
            and through_alias / decodes > _allowed_alias_ratio(decodes)
        ):
            raise YamlSyntaxError(None, "document contains excessive aliasing")
        if is_alias:  # the alias node counted; now its target, through the alias
            walk.append((node, True, False))
            continue
        key = id(node)
        children = _children(node)
        walk.extend(
            (child, inside, (key, i) in aliases) for i, child in reversed(list(enumerate(children)))
        )
