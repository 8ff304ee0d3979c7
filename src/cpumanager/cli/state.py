"""``cpumanager state``: inspect, verify, migrate, rewrite and diff kubelet checkpoints.

Thin edge over :mod:`cpumanager.checkpoint` and the file store. Reading never changes a
file; ``migrate`` and ``rewrite`` write atomically to ``--output-file`` (or, with
``--in-place``, over the input after keeping ``<name>.last-good``), and only once the new
bytes have been decoded again and found equal to what was meant. On any error nothing is
written. ``-o`` is the report's format, as everywhere.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from cpumanager.adapters.checkpoint_files import (
    read_checkpoint,
    read_container_map,
    write_conversion,
)
from cpumanager.checkpoint import kinds
from cpumanager.checkpoint.convert import (
    TARGET_FORMATS,
    TargetFormat,
    checksum_status,
    convert,
    diff_states,
    read_for_conversion,
    read_lenient,
)
from cpumanager.checkpoint.cpu import codec
from cpumanager.checkpoint.cpu.restore import Diagnosis, diagnose
from cpumanager.cli import state_nodes, state_versions
from cpumanager.cli.options import (
    STRUCTURED,
    WrappingGroup,
    emit_as,
    emit_structured,
    load_topology,
    machine_options,
    output_option,
)
from cpumanager.cli.state_render import ids as _ids
from cpumanager.cli.state_render import in_place_option as _in_place
from cpumanager.cli.state_render import lines as _lines
from cpumanager.cli.state_render import output_file_option as _out
from cpumanager.cli.state_render import placement as _placement
from cpumanager.cli.state_render import report_format_option as _fmt
from cpumanager.cli.state_render import table as _table
from cpumanager.core.containermap import ContainerMap
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.state import StateSnapshot
from cpumanager.core.topology import CPUTopology
from cpumanager.errors import ContainerMapRequiredError, InputError

__all__ = ["state"]


def _reserved(text: str | None) -> CPUSet | None:
    if text is None:
        return None
    try:
        return codec.parse_cpu_list(text)
    except codec.CPUListError as err:
        message = f"--reserved-cpus {text!r}: {err}; write a CPU list such as '0,1' or '0-3'"
        raise InputError(message) from None


def _topology(sysfs: Path | None, machine: str | None) -> CPUTopology | None:
    if sysfs is None and machine is None:
        return None
    return load_topology(sysfs=sysfs, machine=machine)


@click.group(cls=WrappingGroup)
def state() -> None:
    """Inspect, verify, migrate and rewrite the kubelet's checkpoints (CPU, memory, devices)."""


# --- inspect --------------------------------------------------------------------------------


@state.command()
@click.argument("path", type=click.Path(path_type=Path, dir_okay=True))
@machine_options
@click.option("--containers", type=click.Path(path_type=Path), help="Container map for V1 files.")
@output_option
def inspect(
    path: Path, sysfs: Path | None, machine: str | None, containers: Path | None, output: str
) -> None:
    """Show a checkpoint: CPU (pods, CPUs, shared pool), memory (NUMA tables) or devices."""
    source = str(path)
    data = read_checkpoint(path)
    other = state_nodes.other_kind(data)
    if other is not None:
        state_nodes.show(data, other, path=path, output=output)
        return
    reading = read_lenient(data, source=source, container_map=read_container_map(containers))
    result, snapshot = reading.attempt, reading.snapshot
    topology = _topology(sysfs, machine)
    checksum = checksum_status(result)
    entries = [
        {
            "pod": pod,
            "container": name,
            "cpus": str(cpus),
            "count": len(cpus),
            **_placement(topology, cpus),
        }
        for pod, containers_of in snapshot.assignments.items()
        for name, cpus in containers_of.items()
    ]
    shared = {"cpus": str(snapshot.default_cpuset), "count": len(snapshot.default_cpuset)}
    shared.update(_placement(topology, snapshot.default_cpuset))
    if output in STRUCTURED:
        emit_as(
            output,
            {
                "path": source,
                "format": result.format,
                "checksum": {
                    "stored": result.stored_checksum,
                    "computed": result.computed_checksum,
                    "status": checksum,
                },
                "policyName": snapshot.policy_name,
                "shared": shared,
                "entries": entries,
            },
        )
        return
    _lines(
        [
            ("file", source),
            ("format", result.format.upper()),
            ("checksum", f"{result.stored_checksum} {checksum}"),
            ("policy", snapshot.policy_name or '""'),
            ("shared pool", f"{shared['cpus'] or '(empty)'} ({shared['count']} CPUs)"),
        ]
    )
    columns = ["pod", "container", "CPUs", "#"]
    if topology is not None:
        columns += ["socket", "NUMA", "cores"]
    rows = []
    for entry in entries:
        row = [str(entry["pod"]), str(entry["container"]), str(entry["cpus"]), str(entry["count"])]
        if topology is not None:
            row += [_ids(entry["sockets"]), _ids(entry["numa"]), _ids(entry["cores"])]
        rows.append(row)
    _table("exclusive assignments", columns, rows)


# --- verify ---------------------------------------------------------------------------------


def _verify_json(path: Path, found: Diagnosis) -> dict[str, Any]:
    return {
        "path": str(path),
        "ok": found.ok,
        "format": found.format,
        "checksum": found.checksum_status,
        "reasons": list(found.reasons),
        "notes": list(found.notes),
    }


@state.command()
@click.argument("path", type=click.Path(path_type=Path, dir_okay=True))
@machine_options
@click.option("--policy", default=None, help="The kubelet's configured CPU manager policy.")
@click.option("--reserved-cpus", default=None, metavar="LIST", help="Reserved CPUs, e.g. 0,1.")
@click.option("--strict-reservation", is_flag=True, help="strict-cpu-reservation is on.")
@click.option("--containers", type=click.Path(path_type=Path), help="Containers at start (V1).")
@click.option(
    "--reserved-memory",
    multiple=True,
    metavar="N:TYPE=Q[,...]",
    help="Memory files: the kubelet's reservedMemory, e.g. 0:memory=1Gi (repeatable).",
)
@state_versions.kubelet_version_option
@output_option
def verify(
    *,
    path: Path,
    release: tuple[int, int],
    sysfs: Path | None,
    machine: str | None,
    policy: str | None,
    reserved_cpus: str | None,
    strict_reservation: bool,
    containers: Path | None,
    reserved_memory: tuple[str, ...],
    output: str,
) -> None:
    """Exit 0 when the kubelet would restore PATH (any of its three checkpoints), else 1."""
    data = read_checkpoint(path)
    if state_versions.verify_newer(data, path=path, release=release, output=output):
        return
    other = state_nodes.other_kind(data)
    if other is not None:
        topology = _topology(sysfs, machine) if other == "memory" else None
        machine_state = None
        if topology is not None:
            per_node = state_nodes.parse_reserved_memory(reserved_memory)
            machine_state = state_nodes.default_state(topology, per_node)
        state_nodes.verify(
            data, other, path=path, policy=policy, output=output, machine=machine_state
        )
        if other == "memory" and output not in STRUCTURED:
            state_versions.echo_readers(data)
        return
    reserved = _reserved(reserved_cpus)
    cmap = read_container_map(containers)
    topology = _topology(sysfs, machine)
    found = diagnose(
        data,
        source=str(path),
        configured_policy=policy,
        container_map=cmap,
        all_cpus=topology.all_cpus if topology is not None else None,
        reserved=reserved,
        strict_reservation=strict_reservation,
    )
    if output in STRUCTURED:
        emit_as(output, {**_verify_json(path, found), **state_versions.describe(data)})
    else:
        verdict = "OK: the kubelet would restore it" if found.ok else "FAIL: the kubelet refuses it"
        _lines(
            [
                ("file", str(path)),
                ("verdict", verdict),
                ("format", found.format.upper() or "-"),
                ("checksum", found.checksum_status),
            ]
        )
        for reason in found.reasons:
            click.echo(f"  reason: {reason}")
        for note in found.notes:
            click.echo(f"  note: {note}")
        state_versions.echo_readers(data)
    if not found.ok:
        raise SystemExit(1)


# --- migrate / rewrite ----------------------------------------------------------------------


def _destination(path: Path, out: Path | None, in_place: bool) -> Path:
    if in_place and out is not None:
        message = "give either --output-file or --in-place, not both"
        raise click.UsageError(message)
    if in_place:
        return path
    if out is None:
        message = "give --output-file FILE (or --in-place to replace the input)"
        raise click.UsageError(message)
    if out.exists() and path.exists() and out.resolve() == path.resolve():
        message = "--output-file is the input file; use --in-place to replace it"
        raise click.UsageError(message)
    return out


def _report(fmt: str, rows: list[tuple[str, str]], payload: dict[str, Any]) -> None:
    if not emit_structured(payload, fmt):
        _lines(rows)


def _convert(
    path: Path,
    *,
    out: Path | None,
    in_place: bool,
    target: TargetFormat | None,
    containers: Path | None,
    fmt: str,
    strict_checksum: bool,
) -> None:
    dest = _destination(path, out, in_place)
    source = str(path)
    data = read_checkpoint(path)
    other = state_nodes.other_kind(data)
    if other is not None:
        if strict_checksum:
            kinds.decode_any(data, source=source)  # migrate reads as the kubelet does
        state_nodes.write(
            data, other, path=path, dest=dest, in_place=in_place, to_v2=target == "v2", fmt=fmt
        )
        return
    if strict_checksum and containers is None:
        message = "Missing option '--containers' (a cpu_manager_state migration needs the map)."
        raise click.UsageError(message)
    checkpoint = read_for_conversion(data, source=source, strict_checksum=strict_checksum)
    cmap = read_container_map(containers)
    try:
        conversion = convert(
            checkpoint, target=target, container_map=cmap, source=source, destination=str(dest)
        )
    except ContainerMapRequiredError as err:
        raise click.UsageError(err.message) from None
    write_conversion(conversion, dest, in_place=in_place)
    goal, new, checksum = conversion.target_format, conversion.data, conversion.checksum
    _report(
        fmt,
        [
            ("input", f"{source} ({checkpoint.format.upper()})"),
            ("output", f"{dest} ({goal.upper()})"),
            ("checksum", str(checksum)),
            ("bytes", str(len(new))),
        ],
        {
            "input": source,
            "output": str(dest),
            "from": checkpoint.format,
            "to": goal,
            "checksum": checksum,
            "bytes": len(new),
        },
    )


@state.command()
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--containers",
    type=click.Path(path_type=Path),
    help='CPU files: JSON {"<containerID>": {"podUID": ..., "containerName": ...}} (required).',
)
@_out
@_in_place
@click.option("--to", "target", type=click.Choice(TARGET_FORMATS), default="v2",
              show_default=True, help="The format to write.")  # fmt: skip
@state_versions.to_kubelet_options
@_fmt
def migrate(
    *,
    path: Path,
    containers: Path | None,
    out: Path | None,
    in_place: bool,
    target: TargetFormat,
    to_kubelet: str | None,
    gate: bool | None,
    fmt: str,
) -> None:
    """CPU V1 <-> V2 (container map), devices V1 -> V2; --to-kubelet: for that release."""
    if to_kubelet is not None:
        state_versions.migrate_to_release(
            path, release=to_kubelet, gate=gate, out=out, in_place=in_place, fmt=fmt
        )
        return
    _convert(
        path,
        out=out,
        in_place=in_place,
        target=target,
        containers=containers,
        fmt=fmt,
        strict_checksum=True,
    )


@state.command()
@click.argument("path", type=click.Path(path_type=Path))
@_out
@_in_place
@click.option(
    "--to", "target", type=click.Choice(TARGET_FORMATS), default=None, help="Default: keep."
)
@click.option("--containers", type=click.Path(path_type=Path), help="Needed to change format.")
@_fmt
def rewrite(
    *,
    path: Path,
    out: Path | None,
    in_place: bool,
    target: TargetFormat | None,
    containers: Path | None,
    fmt: str,
) -> None:
    """Re-encode in the kubelet's canonical bytes with a fresh checksum (after a hand edit)."""
    _convert(
        path,
        out=out,
        in_place=in_place,
        target=target,
        containers=containers,
        fmt=fmt,
        strict_checksum=False,
    )


# --- diff -----------------------------------------------------------------------------------


def _load_any(path: Path, cmap: ContainerMap | None) -> StateSnapshot:
    return read_lenient(read_checkpoint(path), source=str(path), container_map=cmap).snapshot


@state.command()
@click.argument("a", type=click.Path(path_type=Path))
@click.argument("b", type=click.Path(path_type=Path))
@click.option("--containers", type=click.Path(path_type=Path), help="Container map for V1 files.")
@output_option
def diff(a: Path, b: Path, containers: Path | None, output: str) -> None:
    """What moved between two checkpoints: policy, shared pool, containers."""
    cmap = read_container_map(containers)
    found = diff_states(_load_any(a, cmap), _load_any(b, cmap))
    before, after = found.before, found.after
    changes = [
        {
            "pod": c.pod,
            "container": c.container,
            "change": c.change,
            "before": "" if c.before is None else str(c.before),
            "after": "" if c.after is None else str(c.after),
        }
        for c in found.changes
    ]
    shared = {
        "before": str(before.default_cpuset),
        "after": str(after.default_cpuset),
        "gained": str(found.shared_gained),
        "lost": str(found.shared_lost),
    }
    policy = {"before": before.policy_name, "after": after.policy_name}
    if output in STRUCTURED:
        emit_as(output, {"policy": policy, "shared": shared, "containers": changes})
        return
    if found.same:
        click.echo("no difference in state")
        return
    rows = []
    if policy["before"] != policy["after"]:
        rows.append(("policy", f"{policy['before']} -> {policy['after']}"))
    if shared["before"] != shared["after"]:
        rows.append(("shared pool", f"{shared['before']} -> {shared['after']}"))
        rows.append(("  gained", shared["gained"] or "-"))
        rows.append(("  lost", shared["lost"] or "-"))
    if rows:
        _lines(rows)
    if changes:
        _table(
            "containers",
            ["pod", "container", "change", "before", "after"],
            [
                [str(c[k]) for k in ("pod", "container", "change", "before", "after")]
                for c in changes
            ],
        )
