"""A ``cpumanager compute`` request's fields read into the library's types, or refused.

Every reader names the field and what to write instead, so a bad request gets a one-line
answer the caller can act on; sizes (NUMA node ids, shapes) are bounded before anything is
built from them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Final

from cpumanager.core.allocation.options import StaticPolicyOptions
from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.gocompat import parse_go_bool
from cpumanager.core.hints.hint import NO_PLACEMENT, NO_PREFERENCE, TopologyHint
from cpumanager.core.merge.exact import AnyProviderHints, AnyResourceHints
from cpumanager.core.topology import CPUTopology
from cpumanager.errors import InputError, InvalidCPUSetError, InvalidNUMAMaskError, MachineError
from cpumanager.presets import MAX_SHAPE_CPUS

__all__ = [
    "CPU_GATES",
    "MAX_NUMA_NODE_ID",
    "TOPOLOGY_GATES",
    "bad",
    "check_shape_size",
    "read_cpus",
    "read_distances",
    "read_gates",
    "read_int",
    "read_node_ids",
    "read_options",
    "read_providers",
    "read_static_options",
    "read_text",
    "show",
]

# The kernel's largest NUMA node count is 1024; higher ids would only cost memory.
MAX_NUMA_NODE_ID: Final = 1023
CPU_GATES: Final = ("CPUManagerPolicyAlphaOptions", "CPUManagerPolicyBetaOptions")
TOPOLOGY_GATES: Final = ("TopologyManagerPolicyAlphaOptions", "TopologyManagerPolicyBetaOptions")
_NODE_KEY: Final = re.compile(r"[0-9]{1,4}")
# Shape strings (core.presets), read here only to refuse absurd sizes before building them.
_SHAPE: Final = re.compile(r"([0-9]+)s/?([0-9]+)n/?([0-9]+)c/?([0-9]+)t(?:/?[0-9]+l)?")


def bad(message: str) -> InputError:
    """The input error every reader raises (a typed, one-line message)."""
    return InputError(message)


def show(value: object) -> str:
    """A value as JSON for a message, cut to a readable length."""
    text = json.dumps(value, default=repr)
    return text if len(text) <= 60 else text[:57] + "..."


def read_int(value: object, field: str, *, low: int = 0, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        msg = f"{field!r} must be a whole number, got {show(value)}"
        raise bad(msg)
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        msg = f"{field!r} must be {bound}, got {value}"
        raise bad(msg)
    return value


def read_text(value: object, field: str, example: str = "0-3,8") -> str:
    if not isinstance(value, str):
        msg = f'{field!r} must be a string such as "{example}", got {show(value)}'
        raise bad(msg)
    return value


def read_mapping(value: object, field: str) -> Mapping[object, object]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        msg = f"{field!r} must be a JSON object, got {show(value)}"
        raise bad(msg)
    return value


def read_node_ids(value: object, field: str) -> list[int]:
    if not isinstance(value, list):
        msg = f"{field!r} must be a list of NUMA node ids such as [0, 1], got {show(value)}"
        raise bad(msg)
    ids = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int):
            msg = f"{field!r} must hold NUMA node ids (whole numbers), got {show(item)}"
            raise bad(msg)
        if not 0 <= item <= MAX_NUMA_NODE_ID:
            msg = f"{field!r}: NUMA node id {item} is outside 0-{MAX_NUMA_NODE_ID}"
            raise InvalidNUMAMaskError(msg)
        ids.append(item)
    return ids


def read_options(value: object) -> dict[str, str]:
    """Policy options as the kubelet's string map; JSON booleans and numbers are spelled out."""
    options: dict[str, str] = {}
    for name, raw in read_mapping(value, "options").items():
        if not isinstance(name, str):
            msg = f"option names are strings, got {name!r}"
            raise bad(msg)
        if isinstance(raw, bool):
            options[name] = "true" if raw else "false"
        elif isinstance(raw, int | str):
            options[name] = str(raw)
        else:
            msg = f'option {name!r} must have a string value such as "true", got {show(raw)}'
            raise bad(msg)
    return options


def read_gates(value: object, known: tuple[str, ...]) -> dict[str, bool]:
    """Feature gates: every known one on unless the request turns it off."""
    gates = dict.fromkeys(known, True)
    for name, raw in read_mapping(value, "feature_gates").items():
        if name not in known:
            msg = f"unrecognized feature gate {name!r}; this request knows: {', '.join(known)}"
            raise bad(msg)
        flag = (
            raw if isinstance(raw, bool) else parse_go_bool(raw) if isinstance(raw, str) else None
        )
        if flag is None:
            msg = f"feature gate {name!r} must be true or false, got {show(raw)}"
            raise bad(msg)
        gates[name] = flag
    return gates


def read_cpus(topology: CPUTopology, value: object, field: str) -> CPUSet:
    text = read_text(value, field)
    cpus = CPUSet.parse(text)
    unknown = cpus - topology.all_cpus
    if unknown:
        detail = f"CPUs {unknown} of {field!r} are not on the machine (it has {topology.all_cpus})"
        raise InvalidCPUSetError(text, detail)
    return cpus


def read_static_options(request: Mapping[str, object]) -> StaticPolicyOptions:
    gates = read_gates(request.get("feature_gates"), CPU_GATES)
    return StaticPolicyOptions.parse(
        read_options(request.get("options")),
        alpha_enabled=gates["CPUManagerPolicyAlphaOptions"],
        beta_enabled=gates["CPUManagerPolicyBetaOptions"],
    )


def read_hint(value: object, where: str) -> TopologyHint:
    if not isinstance(value, Mapping) or set(value) != {"affinity", "preferred"}:
        msg = (
            f'{where} must be {{"affinity": [ids] or null, "preferred": true/false}}, '
            f"got {show(value)}"
        )
        raise bad(msg)
    preferred = value["preferred"]
    if not isinstance(preferred, bool):
        msg = f"{where}.preferred must be true or false, got {show(preferred)}"
        raise bad(msg)
    affinity = value["affinity"]
    mask = None if affinity is None else NUMAMask(read_node_ids(affinity, f"{where}.affinity"))
    return TopologyHint(mask, preferred)


def read_providers(value: object) -> list[AnyProviderHints]:
    if not isinstance(value, list):
        msg = f"'providers' must be a list of {{resource: hints}} objects, got {show(value)}"
        raise bad(msg)
    providers: list[AnyProviderHints] = []
    for index, raw in enumerate(value):
        if raw is None:
            providers.append(None)
            continue
        answer: dict[str, AnyResourceHints] = {}
        for resource, hints in read_mapping(raw, f"providers[{index}]").items():
            where = f"providers[{index}][{resource!r}]"
            if not isinstance(resource, str):
                msg = f"{where}: resource names are strings"
                raise bad(msg)
            if hints is None:
                answer[resource] = NO_PREFERENCE
            elif isinstance(hints, list):
                answer[resource] = (
                    tuple(read_hint(item, f"{where}[{i}]") for i, item in enumerate(hints))
                    or NO_PLACEMENT
                )
            else:
                msg = f"{where} must be a list of hints or null, got {show(hints)}"
                raise bad(msg)
        providers.append(answer)
    return providers


def _node_key(key: object, where: str) -> int:
    text = str(key) if isinstance(key, int) and not isinstance(key, bool) else key
    if not isinstance(text, str) or not _NODE_KEY.fullmatch(text):
        msg = f"{where} keys must be NUMA node ids, got {show(key)}"
        raise bad(msg)
    return read_int(int(text), where, high=MAX_NUMA_NODE_ID)


def read_distances(value: object) -> dict[int, list[int] | dict[int, int]]:
    """Distance rows by node id: each a list indexed by node id or a {node: distance} map."""
    rows: dict[int, list[int] | dict[int, int]] = {}
    for key, row in read_mapping(value, "distances").items():
        node = _node_key(key, "'distances'")
        where = f"distances[{key!r}]"
        if isinstance(row, list):
            rows[node] = [read_int(d, where) for d in row]
        elif isinstance(row, Mapping):
            rows[node] = {_node_key(k, where): read_int(d, where) for k, d in row.items()}
        else:
            msg = f"{where} must be a list of distances or a {{node: distance}} object"
            raise bad(msg)
    return rows


def check_shape_size(name: str) -> None:
    """Refuse shape strings that would build an absurd machine before building it."""
    match = _SHAPE.fullmatch(name.strip().lower())
    if match is None:
        return
    parts = match.groups()[:4]
    total = 1
    for part in parts:
        total *= int(part) if len(part) <= 6 else MAX_SHAPE_CPUS + 1
    if total > MAX_SHAPE_CPUS:
        msg = (
            f"shape {show(name.strip())} describes more than {MAX_SHAPE_CPUS} CPUs, the limit "
            "for shapes: describe bigger machines as machine objects"
        )
        raise MachineError(msg)
