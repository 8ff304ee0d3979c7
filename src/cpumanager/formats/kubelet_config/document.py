"""A KubeletConfiguration file's text, decoded as the kubelet's loader decodes it (pure).

The kubelet (``kubeletconfig/configfiles`` and ``kubeletconfig/util/codec``) refuses an
empty file, then hands the bytes to its scheme's universal decoder:

* bytes whose first non-blank character is ``{`` are taken for JSON, so flow-style YAML
  such as ``{kind: KubeletConfiguration}`` is a JSON syntax error;
* anything else is YAML, converted to JSON; a document that is only a comment is ``null``;
* ``apiVersion`` and ``kind`` must be present (``Object 'Kind' is missing in '...'``, quoting
  the file) and name a registered type (``kubelet.config.k8s.io/v1beta1``,
  ``KubeletConfiguration``);
* strict decoding (duplicate or unknown fields) failing falls back to lenient decoding of
  v1beta1, with a warning; a field of the wrong type is an error.

Every refusal here is stage ``loads``, wrapped as the kubelet wraps it
(``failed to load kubelet config file, path: P, error: ...``). ``decode_drop_in`` does the
same for a ``--config-dir`` drop-in as 1.32 loads it. YAML parsing itself is the adapter's
(``ParseYaml``): this module stays pure.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from cpumanager.core.versions import Release
from cpumanager.errors import KubeletConfigInvalidError
from cpumanager.formats.kubelet_config.go_decode import JsonFloat, JsonInt, json_kind
from cpumanager.formats.kubelet_config.go_json_syntax import (
    ConstantError,
    constant_problem,
    go_json_syntax,
    no_constant,
)
from cpumanager.formats.kubelet_config.strict import strict_problems

__all__ = [
    "GROUP",
    "KIND",
    "LoadedDocument",
    "ParseYaml",
    "YamlSyntaxError",
    "decode_drop_in",
    "decode_file",
    "drop_in_refusal",
    "load_refusal",
]

GROUP = "kubelet.config.k8s.io"
KIND = "KubeletConfiguration"
_VERSIONS = ("v1beta1",)  # the only external version the kubelet's scheme registers
_SCHEME = "k8s.io/kubernetes/pkg/kubelet/apis/config/scheme/scheme.go:33"  # 1.32's text


@dataclass(frozen=True, slots=True)
class LoadedDocument:
    """The decoded mapping, and the kubelet's warnings (lenient decoding) about it."""

    body: Mapping[str, object]
    warnings: tuple[str, ...] = field(default_factory=tuple)
    from_json: bool = False  # read as JSON: Go decodes its fields in the file's order
    pairs: tuple[tuple[str, object], ...] = ()  # a JSON file's fields, repeats included


def load_refusal(path: str, detail: str) -> KubeletConfigInvalidError:
    """The kubelet's refusal of a configuration file it cannot load (stage ``loads``)."""
    text = (
        f"failed to load kubelet config file, path: {path}, error: failed to load Kubelet "
        f"config file {path}, error {detail}"
    )
    return KubeletConfigInvalidError((text,), stage="loads")


class YamlSyntaxError(Exception):
    """The YAML parser's refusal: the line (as the kubelet's parser counts it) and problem."""

    def __init__(self, line: int | None, problem: str, *, bare: bool = False) -> None:
        super().__init__(problem)
        self.line = line
        self.problem = problem
        self.bare = bare  # the text whole (a YAML-to-JSON conversion error), no "yaml: "

    def detail(self) -> str:
        """The text the kubelet prints: ``yaml: line N: problem``."""
        if self.bare:
            return self.problem
        where = f"line {self.line}: " if self.line is not None else ""
        return f"yaml: {where}{self.problem}"


# Parses YAML text: (the first document, each key found again in its mapping with the
# 1-based line of that repeat); raises YamlSyntaxError. The adapters provide it (parsing
# YAML is theirs).
ParseYaml = Callable[[str], tuple[object, list[tuple[str, int]]]]


def _json_object(pairs: list[tuple[str, object]]) -> tuple[dict[str, object], list[str]]:
    """A JSON object's pairs as Go decodes them, and the keys given again."""
    out: dict[str, object] = {}
    dups: list[str] = []
    for key, value in pairs:
        if key in out:
            dups.append(key)
        out[key] = _decoded_again(out[key], value) if key in out else value
    return out, dups


def _decoded_again(earlier: object, value: object) -> object:
    """A JSON key given twice: Go decodes the second value into the first, so objects (maps
    and structs) keep the entries the second leaves out; anything else is replaced."""
    if isinstance(earlier, dict) and isinstance(value, dict):
        merged = dict(earlier)
        for key, item in value.items():
            merged[key] = _decoded_again(merged[key], item) if key in merged else item
        return merged
    return value


def decode_file(
    text: str, *, path: str, parse_yaml: ParseYaml, release: Release | None = None
) -> LoadedDocument:
    """The file's mapping as the kubelet decodes it; KubeletConfigInvalidError (``loads``).

    ``parse_yaml`` reads YAML (the adapter's parser, keeping duplicate keys). ``release``:
    the kubelet release whose fields are known (a newer field is an unknown one to it; by
    default every v1beta1 field is known).
    """
    if text == "":
        raise load_refusal(path, f'kubelet config file "{path}" was empty')
    yaml_duplicates: list[tuple[str, int]] = []
    json_duplicates: list[str] = []
    from_json = text.lstrip(" \t\r\n").startswith("{")
    pairs: list[tuple[str, object]] = []
    if from_json:
        body, json_duplicates = _decode_json(text, path, pairs)
    else:
        body, yaml_duplicates = _decode_yaml(text, path, parse_yaml)
    if body is None:
        raise load_refusal(path, f"failed to decode: Object 'Kind' is missing in '{text}'")
    if not isinstance(body, Mapping):
        raise load_refusal(path, "failed to decode: " + _not_an_object(body))
    _check_type_meta(body, text, path, pairs)
    warnings: list[str] = []
    strict = strict_problems(body, pairs, from_json=from_json, release=release)
    strict = strict[:_MAX_REPORTED]
    lenient = "Using lenient decoding as strict decoding failed: "
    if yaml_duplicates:
        # the strict YAML reader complains first, the unknown fields after it
        warnings.append(lenient + ", ".join([_yaml_strict(yaml_duplicates), *strict]))
    elif strict:
        warnings.append(lenient + "strict decoding error: " + ", ".join(strict))
    kept = tuple(pairs) if json_duplicates else ()
    return LoadedDocument(body=body, warnings=tuple(warnings), from_json=from_json, pairs=kept)


def _not_an_object(body: object) -> str:
    """The type meta's refusal of a document that is not an object."""
    return (
        "couldn't get version/kind; json parse error: json: cannot unmarshal "
        f"{json_kind(body)} into Go value of type struct {{ APIVersion string "
        f'"json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }}'
    )


def _float64_overflow(value: object) -> str | None:
    """A JSON file's number literal beyond float64 (``1e400``), as written, or None."""
    if isinstance(value, JsonFloat) and math.isinf(value):
        return value.literal
    items: list[object] = []
    if isinstance(value, Mapping):
        items = list(value.values())
    elif isinstance(value, list):
        items = value
    for item in items:
        found = _float64_overflow(item)
        if found is not None:
            return found
    return None


def _decode_json(
    text: str, path: str, pairs_out: list[tuple[str, object]] | None = None
) -> tuple[object, list[str]]:
    repeated: list[list[str]] = []  # per object, inner objects first: the file's is last

    def hook(pairs: list[tuple[str, object]]) -> dict[str, object]:
        out, dups = _json_object(pairs)
        repeated.append(dups)
        if pairs_out is not None:
            pairs_out[:] = pairs  # the last object closed is the file's
        return out

    try:
        body = json.loads(
            text,
            object_pairs_hook=hook,
            parse_float=JsonFloat,
            parse_int=JsonInt,
            parse_constant=no_constant,
        )
    except ConstantError as err:  # NaN, Infinity: not JSON to Go
        detail = constant_problem(text, err.name)
        msg = f"failed to decode: couldn't get version/kind; json parse error: {detail}"
        raise load_refusal(path, msg) from err
    except ValueError as err:
        detail = go_json_syntax(text, err)
        msg = f"failed to decode: couldn't get version/kind; json parse error: {detail}"
        raise load_refusal(path, msg) from err
    duplicates = repeated[-1] if isinstance(body, dict) and repeated else []
    return body, duplicates


def _decode_yaml(
    text: str, path: str, parse_yaml: ParseYaml
) -> tuple[object, list[tuple[str, int]]]:
    try:
        return parse_yaml(text)
    except YamlSyntaxError as err:
        raise load_refusal(path, f"failed to decode: {err.detail()}") from err


def _type_meta(
    pairs: list[tuple[str, object]], text: str, path: str
) -> tuple[object | None, object | None]:
    """apiVersion and kind as Go's JSON decoder finds them for the type meta: a key matching
    a field's name, exactly or else case-insensitively (``KIND``), in decoding order, the
    last one winning; a value of the wrong type is refused (the first, once all are read)."""
    found: dict[str, object] = {}
    refused: str | None = None
    for key, value in pairs:
        name = key if key in ("apiVersion", "kind") else _FOLDED.get(key.lower())
        if name is None or value is None:
            continue
        if not isinstance(value, str):
            if refused is None:
                refused = (
                    "failed to decode: couldn't get version/kind; json parse error: json: cannot "
                    f"unmarshal {json_kind(value)} into Go struct field .{name} of type string"
                )
            continue
        found[name] = value
    if refused is not None:
        raise load_refusal(path, refused)
    return found.get("apiVersion"), found.get("kind")


_FOLDED = {"apiversion": "apiVersion", "kind": "kind"}


def _check_type_meta(
    body: Mapping[str, object], text: str, path: str, pairs: list[tuple[str, object]]
) -> None:
    order = pairs or sorted(body.items())  # YAML reaches Go as JSON with sorted keys
    api_version, kind = _type_meta(order, text, path)
    if not kind:
        raise load_refusal(path, f"failed to decode: Object 'Kind' is missing in '{text}'")
    if not api_version:
        raise load_refusal(path, f"failed to decode: Object 'apiVersion' is missing in '{text}'")
    assert isinstance(api_version, str)
    assert isinstance(kind, str)
    group, _, version = api_version.rpartition("/")
    if not version:  # "group/" parses to an empty version: as if none were given
        raise load_refusal(path, f"failed to decode: Object 'apiVersion' is missing in '{text}'")
    if group != GROUP or version not in _VERSIONS or kind != KIND:
        msg = (
            f'failed to decode: no kind "{kind}" is registered for version "{api_version}" in '
            f'scheme "{_SCHEME}"'
        )
        raise load_refusal(path, msg)


def drop_in_refusal(directory: str, detail: str) -> KubeletConfigInvalidError:
    """The kubelet's refusal of a drop-in it cannot load (stage ``loads``, 1.32's text)."""
    text = (
        f'failed to merge kubelet configs: failed to walk through kubelet dropin directory "'
        f'{directory}": {detail}'
    )
    return KubeletConfigInvalidError((text,), stage="loads")


def decode_drop_in(
    text: str, *, path: str, directory: str, parse_yaml: ParseYaml
) -> LoadedDocument:
    """A ``--config-dir`` drop-in as 1.32's ``mergeKubeletConfigurations`` loads it.

    Decoded into an unstructured object: it must name ``kind`` (``Object 'Kind' is missing
    in '...'``) and be a v1beta1 KubeletConfiguration (``unknown apiVersion/kind: GVK``);
    unlike the main file, a key given twice is refused (the strict YAML reader's error).
    Field types are checked only after merging.
    """
    where = f"failed to load kubelet dropin file, path: {path}"
    if text == "":
        raise drop_in_refusal(directory, f'{where}, error: kubelet config file "{path}" was empty')
    pairs: list[tuple[str, object]] = []
    duplicates: list[tuple[str, int]] = []
    json_duplicates: list[str] = []
    if text.lstrip(" \t\r\n").startswith("{"):
        try:
            body, json_duplicates = _decode_json(text, path, pairs)
        except KubeletConfigInvalidError as err:
            detail = err.errors[0].split("error failed to decode: ", 1)[-1]
            raise drop_in_refusal(directory, f"{where}, error: {detail}") from err
    else:
        try:
            body, names = parse_yaml(text)
        except YamlSyntaxError as err:
            raise drop_in_refusal(directory, f"{where}, error: {err.detail()}") from err
        duplicates = names[:_MAX_REPORTED]
    if not isinstance(body, Mapping):
        detail = f"Object 'Kind' is missing in '{text}'"
        if body is not None:
            detail = _not_an_object(body)
        raise drop_in_refusal(directory, f"{where}, error: {detail}")
    huge = _float64_overflow(body)
    if huge is not None:  # measured: the unstructured decoder cannot hold it
        detail = f"json: cannot unmarshal number {huge} into Go value of type float64"
        raise drop_in_refusal(directory, f"{where}, error: {detail}")
    try:
        api_version, kind = _type_meta(pairs or sorted(body.items()), text, path)
    except KubeletConfigInvalidError as err:
        detail = err.errors[0].split("error failed to decode: ", 1)[-1]
        raise drop_in_refusal(directory, f"{where}, error: {detail}") from err
    if not kind:
        detail = f"Object 'Kind' is missing in '{text}'"
        raise drop_in_refusal(directory, f"{where}, error: {detail}")
    if duplicates:
        raise drop_in_refusal(directory, f"{where}, error: {_yaml_strict(duplicates)}")
    if json_duplicates:  # measured: the strict decoder refuses a drop-in's repeated field
        once = dict.fromkeys(json_duplicates)  # measured: each field named once
        repeated = ", ".join(f'duplicate field "{name}"' for name in once)
        raise drop_in_refusal(directory, f"{where}, error: strict decoding error: {repeated}")
    group, _, version = str(api_version or "").rpartition("/")
    if group != GROUP or version not in _VERSIONS or kind != KIND:
        gvk = f"{group}/{version}, Kind={kind}"
        raise drop_in_refusal(directory, f"{where}, unknown apiVersion/kind: {gvk}")
    return LoadedDocument(body=body)


_MAX_REPORTED = 20  # duplicate keys named in one message (a hostile file may hold many)


def _yaml_strict(duplicates: list[tuple[str, int]]) -> str:
    """The strict YAML reader's error for keys given twice (go-yaml's "unmarshal errors")."""
    lines = "".join(
        f'\n  line {line}: key "{name}" already set in map'
        for name, line in duplicates[:_MAX_REPORTED]
    )
    return f"strict decoding error: yaml: unmarshal errors:{lines}"
