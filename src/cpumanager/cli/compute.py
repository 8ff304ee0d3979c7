"""`cpumanager compute take|hints|merge`: one building block at a time, JSON lines in and out.

With ``--batch`` every non-blank stdin line is one JSON request and gets one compact JSON
answer line, in order (blank lines are skipped). Without it the flags make one request,
answered the same way. The protocol and the answers live in :mod:`cpumanager.cli.compute_protocol`;
this module only reads lines, builds requests from flags and prints.

Exit code: 0 when every request was answered, even when the answer is an allocation error
(NotEnoughCPUsError, SMTAlignmentError: answers about the input, not faults in it); 1 when
at least one request was bad input (JSON, field, machine, CPU list, option). Processing
always continues past a bad line.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from cpumanager.cli.options import WrappingGroup, emit_json, load_topology, machine_options

if TYPE_CHECKING:  # the protocol imports the allocation and merge code: only when needed
    from cpumanager.cli.compute_protocol import Answer, ComputeSession, Kind

__all__ = ["compute"]

F = TypeVar("F", bound=Callable[..., Any])


@click.group(cls=WrappingGroup, context_settings={"help_option_names": ["-h", "--help"]})
def compute() -> None:
    """Run one building block (take, hints, merge) on JSON requests.

    Each reads one JSON object per line on stdin with --batch (or flags for one case) and
    writes one JSON object per line. Exit 1 if any request was bad input.
    """


def _batch_option(func: F) -> F:
    return click.option(
        "--batch",
        is_flag=True,
        help="Read one JSON request per line on stdin; write one JSON answer per line.",
    )(func)


def _session(**settings: Any) -> ComputeSession:
    from cpumanager.cli.compute_protocol import ComputeSession

    return ComputeSession(**settings)


def _run(kind: Kind, settings: Mapping[str, Any], lines: Iterable[bytes]) -> None:
    """Answer every non-blank line; exit 1 at the end if any line was bad input.

    The session (and the code it imports) is created at the first request: empty input
    costs only the interpreter and click.
    """
    bad = False
    session: ComputeSession | None = None
    for line in lines:
        if not line.strip():
            continue
        if session is None:
            session = _session(**settings)
        answer = session.answer_bytes(kind, line)
        bad = bad or answer.input_error
        emit_json(answer.body)
    if bad:
        raise SystemExit(1)


def _finish(answer: Answer) -> None:
    emit_json(answer.body)
    if answer.input_error:
        raise SystemExit(1)


def _stdin() -> Iterable[bytes]:
    """Raw lines: each is decoded on its own, so one bad byte costs only its line."""
    return click.get_binary_stream("stdin")


def _require(values: Mapping[str, object]) -> None:
    missing = [flag for flag, value in values.items() if value is None]
    if missing:
        msg = f"give {', '.join(missing)} (or --batch with JSON requests on stdin)"
        raise click.UsageError(msg)


def _forbid(batch_flags: Mapping[str, object]) -> None:
    given = [flag for flag, value in batch_flags.items() if value not in (None, (), False)]
    if given:
        msg = f"--batch reads every request from stdin; drop {', '.join(given)}"
        raise click.UsageError(msg)


def _pairs(values: tuple[str, ...], flag: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for item in values:
        name, sep, value = item.partition("=")
        if not sep or not name:
            msg = f"{flag} takes NAME=VALUE, got {item!r}"
            raise click.UsageError(msg)
        pairs[name.strip()] = value.strip()
    return pairs


def _ids(text: str, flag: str) -> list[int]:
    ids = []
    for part in text.split(","):
        if not part.strip().isdigit():
            msg = f"{flag} takes NUMA node ids separated by commas, e.g. 0,1; got {text!r}"
            raise click.UsageError(msg)
        ids.append(int(part))
    return ids


def _json(text: str, flag: str, example: str) -> object:
    try:
        return json.loads(text)
    except ValueError as err:
        msg = f"{flag} must be JSON such as '{example}': {err}"
        raise click.UsageError(msg) from err


def _machine_value(sysfs: Path | None, machine: str | None) -> object:
    """A preset name as is; anything else (file, sysfs, this host) as a machine object."""
    from cpumanager.formats.machine_format import topology_to_dict
    from cpumanager.presets import is_preset

    if machine is not None and is_preset(machine):
        return machine
    return topology_to_dict(load_topology(sysfs=sysfs, machine=machine))


def _cpu_flags(func: F) -> F:
    """The flags shared by take and hints."""
    decorators = [
        click.option("--available", metavar="LIST", help="Free CPUs, e.g. 0-7,16-23."),
        click.option("--count", type=int, metavar="N", help="CPUs requested."),
        click.option(
            "--option",
            "options",
            multiple=True,
            metavar="NAME=VALUE",
            help="A static policy option, e.g. full-pcpus-only=true (repeatable).",
        ),
        click.option(
            "--feature-gate",
            "gates",
            multiple=True,
            metavar="NAME=BOOL",
            help="Turn an option maturity gate off, e.g. CPUManagerPolicyAlphaOptions=false.",
        ),
    ]
    for decorate in reversed(decorators):
        func = decorate(func)
    return machine_options(func)


@dataclass(frozen=True)
class _CPUFlags:
    """The flags of :func:`_cpu_flags` and --batch; click passes them under these names."""

    batch: bool
    sysfs: Path | None
    machine: str | None
    available: str | None
    count: int | None
    options: tuple[str, ...]
    gates: tuple[str, ...]


def _answer_cpu_request(
    kind: Kind,
    flags: _CPUFlags,
    *,
    extra_flags: Mapping[str, object],
    extras: Callable[[], Mapping[str, object]],
) -> None:
    """Answer take or hints: stdin in batch mode, else one request built from the flags.

    ``extras`` is called only after the shared fields are built, so a bad machine or
    option is reported before a bad command-specific flag.
    """
    if flags.batch:
        _forbid(
            {
                "--machine": flags.machine,
                "--sysfs": flags.sysfs,
                "--available": flags.available,
                "--count": flags.count,
                "--option": flags.options,
                "--feature-gate": flags.gates,
                **extra_flags,
            }
        )
        _run(kind, {}, _stdin())
        return
    _require({"--available": flags.available, "--count": flags.count})
    request: dict[str, object] = {
        "machine": _machine_value(flags.sysfs, flags.machine),
        "available": flags.available,
        "count": flags.count,
        "options": _pairs(flags.options, "--option"),
        "feature_gates": _pairs(flags.gates, "--feature-gate"),
    }
    request.update(extras())
    _finish(_session().answer(kind, request))


@compute.command()
@_batch_option
@_cpu_flags
@click.option("--numa-affinity", metavar="IDS", help="Take from these NUMA nodes first: 0,1.")
@click.option("--no-smt-check", is_flag=True, help="Skip the full-pcpus-only admission check.")
@click.option(
    "--distributed-combination-fix",
    is_flag=True,
    help="Allocate from the best NUMA combination (k/k#141238), not as released kubelets do.",
)
def take(
    *,
    numa_affinity: str | None,
    no_smt_check: bool,
    distributed_combination_fix: bool,
    **shared: Any,
) -> None:
    """The CPUs the static policy picks: {"machine", "available", "count", ...} -> {"cpus"}."""

    def extras() -> dict[str, object]:
        request: dict[str, object] = {}
        if numa_affinity is not None:
            request["numa_affinity"] = _ids(numa_affinity, "--numa-affinity")
        if no_smt_check:
            request["smt_check"] = False
        if distributed_combination_fix:
            request["distributed_combination_fix"] = True
        return request

    _answer_cpu_request(
        "take",
        _CPUFlags(**shared),
        extra_flags={
            "--numa-affinity": numa_affinity,
            "--no-smt-check": no_smt_check,
            "--distributed-combination-fix": distributed_combination_fix,
        },
        extras=extras,
    )


@compute.command()
@_batch_option
@_cpu_flags
@click.option("--reusable", metavar="LIST", help="CPUs of finished init containers.")
@click.option("--assigned", metavar="LIST", help="CPUs the container already holds.")
def hints(
    *,
    reusable: str | None,
    assigned: str | None,
    **shared: Any,
) -> None:
    """The CPU manager's NUMA hints: {"machine", "available", "count", ...} -> {"hints"}."""

    def extras() -> dict[str, object]:
        request: dict[str, object] = {}
        if reusable is not None:
            request["reusable"] = reusable
        if assigned is not None:
            request["assigned"] = assigned
        return request

    _answer_cpu_request(
        "hints",
        _CPUFlags(**shared),
        extra_flags={"--reusable": reusable, "--assigned": assigned},
        extras=extras,
    )


@compute.command()
@_batch_option
@click.option("--exact", is_flag=True, help="Walk the kubelet's cross product (slow, exact).")
@click.option("--explain", is_flag=True, help="Add why the merge came out as it did.")
@click.option("--numa-nodes", metavar="IDS", help="The machine's NUMA node ids: 0,1,2,3.")
@click.option("--policy", help="none, best-effort, restricted or single-numa-node.")
@click.option(
    "--option",
    "options",
    multiple=True,
    metavar="NAME=VALUE",
    help="A topology manager policy option, e.g. prefer-closest-numa-nodes=true.",
)
@click.option(
    "--providers",
    metavar="JSON",
    help='The providers\' hints as JSON: [{"cpu": [{"affinity": [0], "preferred": true}]}].',
)
@click.option("--distances", metavar="JSON", help='Distance rows: {"0": [10, 21], "1": [21, 10]}.')
def merge(
    *,
    batch: bool,
    exact: bool,
    explain: bool,
    numa_nodes: str | None,
    policy: str | None,
    options: tuple[str, ...],
    providers: str | None,
    distances: str | None,
) -> None:
    """The Topology Manager's merge: {"numa_nodes", "policy", "providers", ...} -> {"hint"}."""
    settings = {"method": "exact" if exact else "fast", "explain": explain}
    if batch:
        _forbid(
            {
                "--numa-nodes": numa_nodes,
                "--policy": policy,
                "--option": options,
                "--providers": providers,
                "--distances": distances,
            }
        )
        _run("merge", settings, _stdin())
        return
    _require({"--numa-nodes": numa_nodes, "--policy": policy, "--providers": providers})
    request: dict[str, object] = {
        "numa_nodes": _ids(numa_nodes or "", "--numa-nodes"),
        "policy": policy,
        "options": _pairs(options, "--option"),
        "providers": _json(providers or "", "--providers", '[{"cpu": null}]'),
    }
    if distances is not None:
        request["distances"] = _json(distances, "--distances", '{"0": [10, 21], "1": [21, 10]}')
    _finish(_session(**settings).answer("merge", request))
