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
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Final, Literal

from cpumanager.cli.compute_request import (
    MAX_NUMA_NODE_ID,
    TOPOLOGY_GATES,
    bad,
    check_shape_size,
    read_cpus,
    read_distances,
    read_gates,
    read_int,
    read_node_ids,
    read_options,
    read_providers,
    read_static_options,
    read_text,
    show,
)
from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.hints.cpu_hints import generate_cpu_hints
from cpumanager.core.hints.limits import ENUMERATE_LIMIT
from cpumanager.core.merge.options import build_topology_manager_config
from cpumanager.core.merge.policies import merge_hints
from cpumanager.core.policy.static import StaticPolicy
from cpumanager.core.state import StateSnapshot
from cpumanager.core.topology import CPUTopology
from cpumanager.errors import (
    CpuManagerError,
    InputError,
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
_MACHINE_CACHE_SIZE: Final = 32


@dataclass(frozen=True, slots=True)
class Answer:
    """One answer line and whether it reports a problem with the input itself."""

    body: dict[str, object]
    input_error: bool = False


def _error_body(err: CpuManagerError) -> dict[str, object]:
    return {"error": {"type": err.reason, "message": err.message}}


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
                f"object as 'cpumanager topology -o json' prints, got {show(value)}"
            )
            raise MachineError(msg)
        cached = self._machines.get(key)
        if cached is not None:
            return cached
        if isinstance(value, str):
            check_shape_size(value)
            if not is_preset(value):
                msg = (
                    f"unknown machine {show(value)}; in a request 'machine' is a preset name (see "
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
        available = read_cpus(topology, request["available"], "available")
        count = read_int(request["count"], "count")
        options = read_static_options(request)
        smt_check = request.get("smt_check", True)
        if not isinstance(smt_check, bool):
            msg = f"'smt_check' must be true or false, got {show(smt_check)}"
            raise bad(msg)
        fix = request.get("distributed_combination_fix", False)
        if not isinstance(fix, bool):
            msg = f"'distributed_combination_fix' must be true or false, got {show(fix)}"
            raise bad(msg)
        if fix:
            options = replace(options, distributed_combination_fix=True)
        affinity = request.get("numa_affinity")
        hint = None
        if affinity is not None:
            ids = read_node_ids(affinity, "numa_affinity")
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
        available = read_cpus(topology, request["available"], "available")
        count = read_int(request["count"], "count")
        reusable = read_cpus(topology, request.get("reusable", ""), "reusable")
        options = read_static_options(request)
        if count == 0:
            return {"hints": None}
        nodes = len(topology.cpu_numa_ids())
        if nodes > MAX_HINT_NUMA_NODES:
            msg = (
                f"the machine has {nodes} NUMA nodes with CPUs: listing every hint means "
                f"2^{nodes} masks, out of reach above {MAX_HINT_NUMA_NODES}; 'cpumanager "
                "simulate' searches them without listing"
            )
            raise bad(msg)
        if "assigned" in request:
            assigned = read_cpus(topology, request["assigned"], "assigned")
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
        nodes = read_node_ids(request["numa_nodes"], "numa_nodes")
        policy = read_text(request["policy"], "policy", "restricted")
        gates = read_gates(request.get("feature_gates"), TOPOLOGY_GATES)
        distances = read_distances(request.get("distances"))
        providers = read_providers(request["providers"])
        config = build_topology_manager_config(
            policy=policy,
            options=read_options(request.get("options")),
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
                msg = f"a {kind} request must be a JSON object, got {show(request)}"
                raise bad(msg)
            if "id" in request:
                echo["id"] = request["id"]
            unknown = sorted(str(key) for key in request if key not in _FIELDS[kind])
            if unknown:
                msg = (
                    f"unknown field(s) {', '.join(map(repr, unknown))} in a {kind} request; "
                    f"allowed: {', '.join(sorted(_FIELDS[kind]))}"
                )
                raise bad(msg)
            missing = [field for field in _REQUIRED[kind] if field not in request]
            if missing:
                msg = f"a {kind} request needs {', '.join(map(repr, missing))}"
                raise bad(msg)
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
