"""What the kubelet's strict decoder finds wrong in a file it then reads leniently (pure).

The kubelet decodes a file strictly first; when that fails on unknown or repeated fields
only, it decodes leniently and logs ``Using lenient decoding as strict decoding failed:
strict decoding error: ...``. The complaints, in the order the decoder meets them (measured
on 1.32): every unknown field once, with its path (``authentication.bogus``,
``logging.options.json.x``, ``reservedMemory[0].extra``), and, in a JSON file, each known
field given again (``duplicate field "maxPods"``). A YAML file's repeated keys are the YAML
reader's complaint, which comes first (``yaml: unmarshal errors: line N: key "K" already
set in map``), the unknown fields after it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from cpumanager.core.versions import Release
from cpumanager.formats.kubelet_config.go_decode import GO_TYPES, STRUCTS
from cpumanager.formats.kubelet_config.v1beta1 import FIELD_KINDS, FIELD_SINCE

__all__ = ["strict_problems"]


def strict_problems(
    body: Mapping[str, object],
    pairs: Sequence[tuple[str, object]],
    *,
    from_json: bool,
    release: Release | None = None,
) -> list[str]:
    """The strict decoder's complaints about unknown and repeated fields, in its order.

    ``pairs``: a JSON file's top-level fields as written, repeats included (else the
    YAML file's fields, which reach the decoder as JSON with sorted keys). A field newer
    than ``release`` is unknown to it.
    """

    def known_field(name: str) -> bool:
        return name in FIELD_KINDS and (release is None or FIELD_SINCE.get(name, (1, 0)) <= release)

    order = list(pairs) if from_json and pairs else sorted(body.items())
    out: list[str] = []
    unknown: set[str] = set()
    known: set[str] = set()
    repeated: set[str] = set()
    for name, value in order:
        if not known_field(name):
            if name not in unknown:
                unknown.add(name)
                out.append(f'unknown field "{name}"')
            continue
        if name in known:
            if name not in repeated:  # named once, however often it is given again
                repeated.add(name)
                out.append(f'duplicate field "{name}"')
            continue
        known.add(name)
        kind = GO_TYPES.get(name, FIELD_KINDS[name])
        out += [f'unknown field "{path}"' for path in _inner_unknown(name, kind, value, from_json)]
    return out


def _inner_unknown(path: str, kind: str, value: object, from_json: bool) -> list[str]:
    """The unknown fields inside a nested struct (or a list of them), with their paths."""
    if kind.startswith("[]") and isinstance(value, list):
        inner = kind.removeprefix("[]")
        found: list[str] = []
        for index, item in enumerate(value):
            found += _inner_unknown(f"{path}[{index}]", inner, item, from_json)
        return found
    fields = STRUCTS.get(kind)
    if fields is None or not isinstance(value, Mapping):
        return []
    items = list(value.items()) if from_json else sorted(value.items())
    found = []
    for key, item in items:
        field_kind = fields.get(key)
        if field_kind is None:
            found.append(f"{path}.{key}")
        elif item is not None:
            found += _inner_unknown(f"{path}.{key}", field_kind, item, from_json)
    return found
