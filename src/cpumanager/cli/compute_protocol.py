"""``cpumanager compute``'s protocol: one JSON request in, one JSON answer out, no I/O.

Three building blocks, each a pure function of its request:

* **take** — the CPUs the static policy gives a new exclusive container from a free pool:
  the full-pcpus-only admission check (unless ``"smt_check": false``), then the kubelet's
  allocateCPUs: CPUs of the ``numa_affinity`` nodes first (align-by-socket: of their
  sockets), the rest by take-by-topology from everything left. Without ``numa_affinity`` it
  is take-by-topology alone. → ``{"cpus": "0-3"}``
* **hints** — the CPU manager's topology hints for ``count`` CPUs from ``available`` plus
  ``reusable`` (or, with ``assigned``, regenerated from a container's existing CPUs, or "no
  placement" when their number differs from ``count``), in the kubelet's order.
  → ``{"hints": [{"affinity": [0], "preferred": true}, ...]}``, ``null`` when ``count`` is 0.
* **merge** — the Topology Manager's merge of the providers' hints under a policy.
  → ``{"hint": {"affinity": [0] | null, "preferred": bool}, "admit": bool}``

Errors become answers: ``{"error": {"type": <kubelet-style name>, "message": ...}}``. An
:class:`InputError` (bad JSON, field, machine, CPU list, option) marks the answer as an
*input* error; an :class:`AllocationError` (NotEnoughCPUsError, SMTAlignmentError) is a
legitimate answer about this input. A request's ``"id"`` is echoed in its answer.

Feature gates default to *on* for every option maturity; ``"feature_gates"`` turns them off.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Final, Literal

from cpumanager.core.allocation.options import StaticPolicyOptions
from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.gocompat import parse_go_bool
from cpumanager.core.hints.cpu_hints import generate_cpu_hints
from cpumanager.core.hints.hint import NO_PLACEMENT, NO_PREFERENCE, TopologyHint
from cpumanager.core.hints.limits import ENUMERATE_LIMIT
from cpumanager.core.merge.exact import AnyProviderHints, AnyResourceHints
from cpumanager.core.merge.options import build_topology_manager_config
from cpumanager.core.merge.policies import merge_hints
from cpumanager.core.policy.static import StaticPolicy
from cpumanager.core.state import StateSnapshot
from cpumanager.core.topology import CPUTopology
from cpumanager.errors import (
    CpuManagerError,
    InputError,
    InvalidCPUSetError,
    InvalidNUMAMaskError,
    MachineError,
)
from cpumanager.formats.machine_format import topology_from_dict
from cpumanager.presets import MAX_SHAPE_CPUS, get_preset, is_preset

__all__ = [
    "KINDS",
    "MAX_HINT_NUMA_NODES",
    "MAX_NUMA_NODE_ID",
    "MAX_SHAPE_CPUS",
    "Answer",
    "ComputeSession",
    "Kind",
]

Kind = Literal["take", "hints", "merge"]
KINDS: Final[tuple[Kind, ...]] = ("take", "hints", "merge")

# The kernel's largest NUMA node count is 1024; higher ids would only cost memory.
MAX_NUMA_NODE_ID: Final = 1023
# Listing every hint walks 2^nodes masks: past this many CPU-bearing nodes it takes minutes.
MAX_HINT_NUMA_NODES: Final = ENUMERATE_LIMIT

_FIELDS: Final[Mapping[Kind, frozenset[str]]] = {
    "take": frozenset(
        {
            "id",
            "machine",
            "available",
            "count",
            "options",
            "feature_gates",
            "numa_affinity",
            "smt_check",
            "distributed_combination_fix",
        }
    ),
    "hints": frozenset(
        {"id", "machine", "available", "count", "reusable", "assigned", "options", "feature_gates"}
    ),
    "merge": frozenset(
        {"id", "numa_nodes", "policy", "options", "feature_gates", "distances", "providers"}
    ),
}
_REQUIRED: Final[Mapping[Kind, tuple[str, ...]]] = {
    "take": ("machine", "available", "count"),
    "hints": ("machine", "available", "count"),
    "merge": ("numa_nodes", "policy", "providers"),
}
_CPU_GATES: Final = ("CPUManagerPolicyAlphaOptions", "CPUManagerPolicyBetaOptions")
_TOPOLOGY_GATES: Final = ("TopologyManagerPolicyAlphaOptions", "TopologyManagerPolicyBetaOptions")
_MACHINE_CACHE_SIZE: Final = 32
_NODE_KEY: Final = re.compile(r"[0-9]{1,4}")
# Shape strings (core.presets), read here only to refuse absurd sizes before building them.
_SHAPE: Final = re.compile(r"([0-9]+)s/?([0-9]+)n/?([0-9]+)c/?([0-9]+)t(?:/?[0-9]+l)?")


@dataclass(frozen=True, slots=True)
class Answer:
    """One answer line and whether it reports a problem with the input itself."""

    body: dict[str, object]
    input_error: bool = False


def _bad(message: str) -> InputError:
    return InputError(message)


def _show(value: object) -> str:
    """A value as JSON for a message, cut to a readable length."""
    text = json.dumps(value, default=repr)
    return text if len(text) <= 60 else text[:57] + "..."


def _error_body(err: CpuManagerError) -> dict[str, object]:
    return {"error": {"type": err.reason, "message": err.message}}


# --- field readers ------------------------------------------------------------------------


def _int(value: object, field: str, *, low: int = 0, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        msg = f"{field!r} must be a whole number, got {_show(value)}"
        raise _bad(msg)
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        msg = f"{field!r} must be {bound}, got {value}"
        raise _bad(msg)
    return value


def _text(value: object, field: str, example: str = "0-3,8") -> str:
    if not isinstance(value, str):
        msg = f'{field!r} must be a string such as "{example}", got {_show(value)}'
        raise _bad(msg)
    return value


def _mapping(value: object, field: str) -> Mapping[object, object]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        msg = f"{field!r} must be a JSON object, got {_show(value)}"
        raise _bad(msg)
    return value


def _node_ids(value: object, field: str) -> list[int]:
    if not isinstance(value, list):
        msg = f"{field!r} must be a list of NUMA node ids such as [0, 1], got {_show(value)}"
        raise _bad(msg)
    ids = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int):
            msg = f"{field!r} must hold NUMA node ids (whole numbers), got {_show(item)}"
            raise _bad(msg)
        if not 0 <= item <= MAX_NUMA_NODE_ID:
            msg = f"{field!r}: NUMA node id {item} is outside 0-{MAX_NUMA_NODE_ID}"
            raise InvalidNUMAMaskError(msg)
        ids.append(item)
    return ids


def _options(value: object) -> dict[str, str]:
    """Policy options as the kubelet's string map; JSON booleans and numbers are spelled out."""
    options: dict[str, str] = {}
    for name, raw in _mapping(value, "options").items():
        if not isinstance(name, str):
            msg = f"option names are strings, got {name!r}"
            raise _bad(msg)
        if isinstance(raw, bool):
            options[name] = "true" if raw else "false"
        elif isinstance(raw, int | str):
            options[name] = str(raw)
        else:
            msg = f'option {name!r} must have a string value such as "true", got {_show(raw)}'
            raise _bad(msg)
    return options


def _gates(value: object, known: tuple[str, ...]) -> dict[str, bool]:
    """Feature gates: every known one on unless the request turns it off."""
    gates = dict.fromkeys(known, True)
    for name, raw in _mapping(value, "feature_gates").items():
        if name not in known:
            msg = f"unrecognized feature gate {name!r}; this request knows: {', '.join(known)}"
            raise _bad(msg)
        flag = (
            raw if isinstance(raw, bool) else parse_go_bool(raw) if isinstance(raw, str) else None
        )
        if flag is None:
            msg = f"feature gate {name!r} must be true or false, got {_show(raw)}"
            raise _bad(msg)
        gates[name] = flag
    return gates


def _cpus(topology: CPUTopology, value: object, field: str) -> CPUSet:
    text = _text(value, field)
    cpus = CPUSet.parse(text)
    unknown = cpus - topology.all_cpus
    if unknown:
        detail = f"CPUs {unknown} of {field!r} are not on the machine (it has {topology.all_cpus})"
        raise InvalidCPUSetError(text, detail)
    return cpus


def _static_options(request: Mapping[str, object]) -> StaticPolicyOptions:
    gates = _gates(request.get("feature_gates"), _CPU_GATES)
    return StaticPolicyOptions.parse(
        _options(request.get("options")),
        alpha_enabled=gates["CPUManagerPolicyAlphaOptions"],
        beta_enabled=gates["CPUManagerPolicyBetaOptions"],
    )


def _hint(value: object, where: str) -> TopologyHint:
    if not isinstance(value, Mapping) or set(value) != {"affinity", "preferred"}:
        msg = (
            f'{where} must be {{"affinity": [ids] or null, "preferred": true/false}}, '
            f"got {_show(value)}"
        )
        raise _bad(msg)
    preferred = value["preferred"]
    if not isinstance(preferred, bool):
        msg = f"{where}.preferred must be true or false, got {_show(preferred)}"
        raise _bad(msg)
    affinity = value["affinity"]
    mask = None if affinity is None else NUMAMask(_node_ids(affinity, f"{where}.affinity"))
    return TopologyHint(mask, preferred)


def _providers(value: object) -> list[AnyProviderHints]:
    if not isinstance(value, list):
        msg = f"'providers' must be a list of {{resource: hints}} objects, got {_show(value)}"
        raise _bad(msg)
    providers: list[AnyProviderHints] = []
    for index, raw in enumerate(value):
        if raw is None:
            providers.append(None)
            continue
        answer: dict[str, AnyResourceHints] = {}
        for resource, hints in _mapping(raw, f"providers[{index}]").items():
            where = f"providers[{index}][{resource!r}]"
            if not isinstance(resource, str):
                msg = f"{where}: resource names are strings"
                raise _bad(msg)
            if hints is None:
                answer[resource] = NO_PREFERENCE
            elif isinstance(hints, list):
                answer[resource] = (
                    tuple(_hint(item, f"{where}[{i}]") for i, item in enumerate(hints))
                    or NO_PLACEMENT
                )
            else:
                msg = f"{where} must be a list of hints or null, got {_show(hints)}"
                raise _bad(msg)
        providers.append(answer)
    return providers


def _node_key(key: object, where: str) -> int:
    text = str(key) if isinstance(key, int) and not isinstance(key, bool) else key
    if not isinstance(text, str) or not _NODE_KEY.fullmatch(text):
        msg = f"{where} keys must be NUMA node ids, got {_show(key)}"
        raise _bad(msg)
    return _int(int(text), where, high=MAX_NUMA_NODE_ID)


def _distances(value: object) -> dict[int, list[int] | dict[int, int]]:
    """Distance rows by node id: each a list indexed by node id or a {node: distance} map."""
    rows: dict[int, list[int] | dict[int, int]] = {}
    for key, row in _mapping(value, "distances").items():
        node = _node_key(key, "'distances'")
        where = f"distances[{key!r}]"
        if isinstance(row, list):
            rows[node] = [_int(d, where) for d in row]
        elif isinstance(row, Mapping):
            rows[node] = {_node_key(k, where): _int(d, where) for k, d in row.items()}
        else:
            msg = f"{where} must be a list of distances or a {{node: distance}} object"
            raise _bad(msg)
    return rows


def _check_shape_size(name: str) -> None:
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
            f"shape {_show(name.strip())} describes more than {MAX_SHAPE_CPUS} CPUs, the limit "
            "for shapes: describe bigger machines as machine objects"
        )
        raise MachineError(msg)


# --- the session --------------------------------------------------------------------------


class ComputeSession:
    """Answers compute requests; remembers recent machines so a batch builds each once."""

    __slots__ = ("_machines", "explain", "method")

    def __init__(self, *, method: Literal["fast", "exact"] = "fast", explain: bool = False) -> None:
        self.method: Literal["fast", "exact"] = method
        self.explain = explain
        self._machines: dict[str, CPUTopology] = {}

    def machine(self, value: object) -> CPUTopology:
        """A preset name or shape, or a machine description as ``topology -o json`` prints."""
        if isinstance(value, str):
            key = "name:" + value.strip().lower()
        elif isinstance(value, Mapping):
            key = "json:" + json.dumps(value, sort_keys=True, default=repr)
        else:
            msg = (
                "'machine' must be a preset name, a shape such as '2s4n16c2t' or a machine "
                f"object as 'cpumanager topology -o json' prints, got {_show(value)}"
            )
            raise MachineError(msg)
        cached = self._machines.get(key)
        if cached is not None:
            return cached
        if isinstance(value, str):
            _check_shape_size(value)
            if not is_preset(value):
                msg = (
                    f"unknown machine {_show(value)}; in a request 'machine' is a preset name (see "
                    "'cpumanager topology --list'), a shape such as '2s4n16c2t', or a machine "
                    "object as 'cpumanager topology -o json' prints"
                )
                raise MachineError(msg)
            topology = get_preset(value)
        else:
            topology = topology_from_dict(value)
        if len(self._machines) >= _MACHINE_CACHE_SIZE:
            del self._machines[next(iter(self._machines))]
        self._machines[key] = topology
        return topology

    # --- the three blocks ---

    def take(self, request: Mapping[str, object]) -> dict[str, object]:
        """``{"cpus": ...}``; raises InputError or AllocationError."""
        topology = self.machine(request["machine"])
        available = _cpus(topology, request["available"], "available")
        count = _int(request["count"], "count")
        options = _static_options(request)
        smt_check = request.get("smt_check", True)
        if not isinstance(smt_check, bool):
            msg = f"'smt_check' must be true or false, got {_show(smt_check)}"
            raise _bad(msg)
        fix = request.get("distributed_combination_fix", False)
        if not isinstance(fix, bool):
            msg = f"'distributed_combination_fix' must be true or false, got {_show(fix)}"
            raise _bad(msg)
        if fix:
            options = replace(options, distributed_combination_fix=True)
        affinity = request.get("numa_affinity")
        hint = None
        if affinity is not None:
            ids = _node_ids(affinity, "numa_affinity")
            unknown = sorted(set(ids) - set(topology.numa_ids()))
            if unknown:
                msg = (
                    f"'numa_affinity' names NUMA nodes {unknown} the machine does not have "
                    f"(it has {list(topology.numa_ids())})"
                )
                raise InvalidNUMAMaskError(msg)
            hint = NUMAMask(ids)
        policy = StaticPolicy(topology, options=options)
        snapshot = StateSnapshot("static", available)
        if smt_check and count:
            policy.check_smt_alignment(snapshot, count)
        cpus = policy.allocate_cpus(snapshot, count, hint, CPUSet())
        return {"cpus": str(cpus)}

    def hints(self, request: Mapping[str, object]) -> dict[str, object]:
        """``{"hints": [...]}`` in the kubelet's order, ``null`` for no preference."""
        topology = self.machine(request["machine"])
        available = _cpus(topology, request["available"], "available")
        count = _int(request["count"], "count")
        reusable = _cpus(topology, request.get("reusable", ""), "reusable")
        options = _static_options(request)
        if count == 0:
            return {"hints": None}
        nodes = len(topology.cpu_numa_ids())
        if nodes > MAX_HINT_NUMA_NODES:
            msg = (
                f"the machine has {nodes} NUMA nodes with CPUs: listing every hint means "
                f"2^{nodes} masks, out of reach above {MAX_HINT_NUMA_NODES}; 'cpumanager "
                "simulate' searches them without listing"
            )
            raise _bad(msg)
        if "assigned" in request:
            assigned = _cpus(topology, request["assigned"], "assigned")
            if len(assigned) != count:
                return {"hints": []}
            available, reusable = assigned, CPUSet()
        hints = generate_cpu_hints(
            topology,
            available=available,
            reusable=reusable,
            count=count,
            align_by_socket=options.align_by_socket,
        )
        return {"hints": [hint.to_json() for hint in hints]}

    def merge(self, request: Mapping[str, object]) -> dict[str, object]:
        """``{"hint": ..., "admit": ...}`` (plus ``"explanation"`` when explaining)."""
        nodes = _node_ids(request["numa_nodes"], "numa_nodes")
        policy = _text(request["policy"], "policy", "restricted")
        gates = _gates(request.get("feature_gates"), _TOPOLOGY_GATES)
        distances = _distances(request.get("distances"))
        providers = _providers(request["providers"])
        config = build_topology_manager_config(
            policy=policy,
            options=_options(request.get("options")),
            numa_nodes=nodes,
            distances=distances or None,
            feature_gates=gates,
        )
        result = merge_hints(
            config,
            nodes,
            providers,
            distances=distances or None,
            method=self.method,
            explain=self.explain,
        )
        body = result.to_json()
        if result.explanation is not None:
            body["explanation"] = result.explanation.to_json()
        return body

    # --- protocol ---

    def answer(self, kind: Kind, request: object) -> Answer:
        """Answer one parsed request; every CpuManagerError becomes an error answer."""
        echo: dict[str, object] = {}
        try:
            if not isinstance(request, Mapping):
                msg = f"a {kind} request must be a JSON object, got {_show(request)}"
                raise _bad(msg)
            if "id" in request:
                echo["id"] = request["id"]
            unknown = sorted(str(key) for key in request if key not in _FIELDS[kind])
            if unknown:
                msg = (
                    f"unknown field(s) {', '.join(map(repr, unknown))} in a {kind} request; "
                    f"allowed: {', '.join(sorted(_FIELDS[kind]))}"
                )
                raise _bad(msg)
            missing = [field for field in _REQUIRED[kind] if field not in request]
            if missing:
                msg = f"a {kind} request needs {', '.join(map(repr, missing))}"
                raise _bad(msg)
            body = getattr(self, kind)(request)
        except InputError as err:
            return Answer({**_error_body(err), **echo}, input_error=True)
        except CpuManagerError as err:
            return Answer({**_error_body(err), **echo})
        return Answer({**body, **echo})

    def answer_bytes(self, kind: Kind, raw: bytes) -> Answer:
        """Answer one line of stdin bytes; bytes that are not UTF-8 get an error answer."""
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            msg = (
                f"the line is not UTF-8 text (byte {err.start} is {raw[err.start]:#04x}); "
                "write one JSON object per line in UTF-8"
            )
            return Answer(_error_body(InputError(msg)), input_error=True)
        return self.answer_line(kind, line)

    def answer_line(self, kind: Kind, line: str) -> Answer:
        """Answer one line of text holding a JSON request."""
        try:
            request = json.loads(line)
        except (ValueError, RecursionError) as err:
            if isinstance(err, json.JSONDecodeError):
                reason = f"at column {err.colno}: {err.msg}"
            elif isinstance(err, RecursionError):
                reason = "(nested too deeply)"
            else:  # Python refuses integer literals of more than 4300 digits
                reason = "(a number has too many digits)"
            text = line.strip()
            shown = text if len(text) <= 60 else text[:57] + "..."
            msg = f"not valid JSON {reason}: {shown!r}; write one JSON object per line"
            return Answer(_error_body(InputError(msg)), input_error=True)
        return self.answer(kind, request)
