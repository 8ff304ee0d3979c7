"""``cpumanager state``: inspect, verify, migrate, rewrite and diff kubelet checkpoints.

Thin edge over :mod:`cpumanager.checkpoint` and the file store. Reading never changes a
file; ``migrate`` and ``rewrite`` write atomically to ``-o/--out`` (or, with ``--in-place``,
over the input after keeping ``<name>.last-good``), and only once the new bytes have been
decoded again and found equal to what was meant. On any error nothing is written.

``-o`` names the output *file* of ``migrate`` and ``rewrite`` (as the kubelet docs spell
``-o OUT``); their report format is ``--format table|json``. Elsewhere ``-o`` is the report
format.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from cpumanager.adapters import filestore
from cpumanager.checkpoint import codec
from cpumanager.checkpoint.codec import Attempt
from cpumanager.checkpoint.gojson import go_quote
from cpumanager.checkpoint.loader import Diagnosis, diagnose
from cpumanager.checkpoint.migrate import parse_container_map, v1_to_v2, v2_to_v1
from cpumanager.checkpoint.model import CheckpointV1, CheckpointV2
from cpumanager.cli.options import emit_json, load_topology, machine_options, output_option
from cpumanager.core.containermap import ContainerMap
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.ids import ContainerID, ContainerName, PodUID
from cpumanager.core.state import StateSnapshot
from cpumanager.core.topology import CPUTopology
from cpumanager.errors import CheckpointError, CheckpointFormatError, InputError

__all__ = ["state"]

FORMATS = ("v1", "v2")


# --- reading --------------------------------------------------------------------------------


def _read(path: Path) -> bytes:
    data = filestore.read_bytes(path)
    if data is None:
        message = f"{str(path)!r} does not exist; give the path of a cpu_manager_state file"
        raise CheckpointError(message)
    return data


def _container_map(path: Path | None) -> ContainerMap | None:
    if path is None:
        return None
    return parse_container_map(_read_map(path), source=str(path))


def _read_map(path: Path) -> bytes:
    data = filestore.read_bytes(path)
    if data is None:
        message = f"container map {str(path)!r} does not exist"
        raise InputError(message)
    return data


def _lenient(data: bytes, source: str) -> Attempt:
    """The first format (V2 first) that decodes, checksum good or not; error if none does."""
    attempts = codec.attempts(data, order="v2-first")
    for result in attempts:
        if result.ok:
            return result
    for result in attempts:
        if result.checkpoint is not None:
            return result
    reasons = "; ".join(dict.fromkeys(f"as {r.format.upper()}: {r.error}" for r in attempts))
    message = f"{source!r} is not a kubelet checkpoint ({reasons}); nothing was written"
    raise CheckpointFormatError(message)


def _to_v2(
    checkpoint: CheckpointV1 | CheckpointV2, cmap: ContainerMap | None, source: str
) -> CheckpointV2:
    """V2 content of any checkpoint; a V1 file without a map shows container IDs as pods."""
    if isinstance(checkpoint, CheckpointV2):
        return checkpoint
    if cmap is None:
        cmap = ContainerMap(
            (ContainerID(cid), PodUID("(container IDs)"), ContainerName(cid))
            for cid in checkpoint.entries or {}
        )
    return v1_to_v2(checkpoint, cmap, source=source)


def _snapshot(checkpoint: CheckpointV2, source: str) -> StateSnapshot:
    return codec.snapshot_from_v2(checkpoint, source=source)


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


def _placement(topology: CPUTopology | None, cpus: CPUSet) -> dict[str, Any]:
    if topology is None:
        return {}
    unknown = cpus - topology.all_cpus
    return {
        "sockets": list(topology.sockets_of(cpus)),
        "numa": list(topology.numa_of(cpus)),
        "cores": list(topology.cores_of(cpus)),
        "unknownCpus": str(unknown),
    }


def _ids(values: list[int]) -> str:
    return ",".join(str(v) for v in values)


def _table(title: str, columns: list[str], rows: list[list[str]]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*row)
    Console(soft_wrap=False).print(table)


def _lines(pairs: list[tuple[str, str]]) -> None:
    width = max(len(key) for key, _ in pairs)
    for key, value in pairs:
        click.echo(f"{key + ':':<{width + 1}} {value}")


@click.group()
def state() -> None:
    """Inspect, verify, migrate and rewrite the kubelet's cpu_manager_state."""


# --- inspect --------------------------------------------------------------------------------


@state.command()
@click.argument("path", type=click.Path(path_type=Path, dir_okay=True))
@machine_options
@click.option("--containers", type=click.Path(path_type=Path), help="Container map for V1 files.")
@output_option
def inspect(
    path: Path, sysfs: Path | None, machine: str | None, containers: Path | None, output: str
) -> None:
    """Show pods, containers, their CPUs (socket/NUMA/core) and the shared pool."""
    source = str(path)
    result = _lenient(_read(path), source)
    assert result.checkpoint is not None
    cmap = _container_map(containers)
    snapshot = _snapshot(_to_v2(result.checkpoint, cmap, source), source)
    topology = _topology(sysfs, machine)
    checksum = (
        "unchecked (stored 0)"
        if result.stored_checksum == 0
        else ("ok" if result.ok else f"MISMATCH (computed {result.computed_checksum})")
    )
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
    if output == "json":
        emit_json(
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
            }
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
@output_option
def verify(
    *,
    path: Path,
    sysfs: Path | None,
    machine: str | None,
    policy: str | None,
    reserved_cpus: str | None,
    strict_reservation: bool,
    containers: Path | None,
    output: str,
) -> None:
    """Exit 0 when the kubelet would restore PATH; else exit 1 and print every reason."""
    reserved = _reserved(reserved_cpus)
    cmap = _container_map(containers)
    topology = _topology(sysfs, machine)
    found = diagnose(
        _read(path),
        source=str(path),
        configured_policy=policy,
        container_map=cmap,
        all_cpus=topology.all_cpus if topology is not None else None,
        reserved=reserved,
        strict_reservation=strict_reservation,
    )
    if output == "json":
        emit_json(_verify_json(path, found))
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
    if not found.ok:
        raise SystemExit(1)


# --- migrate / rewrite ----------------------------------------------------------------------


def _destination(path: Path, out: Path | None, in_place: bool) -> Path:
    if in_place and out is not None:
        message = "give either -o/--out or --in-place, not both"
        raise click.UsageError(message)
    if in_place:
        return path
    if out is None:
        message = "give -o/--out FILE (or --in-place to replace the input)"
        raise click.UsageError(message)
    if out.exists() and path.exists() and out.resolve() == path.resolve():
        message = "-o/--out is the input file; use --in-place to replace it"
        raise click.UsageError(message)
    return out


def _canonical_v1(checkpoint: CheckpointV1, source: str) -> CheckpointV1:
    default = codec.parse_cpu_list(checkpoint.default_cpu_set)
    entries = {}
    for cid, text in (checkpoint.entries or {}).items():
        try:
            entries[cid] = str(codec.parse_cpu_list(text))
        except codec.CPUListError as err:
            message = (
                f"{source!r}: could not parse cpuset {go_quote(text)} of container "
                f"{go_quote(cid)}: {err}"
            )
            raise CheckpointFormatError(message) from None
    return CheckpointV1(checkpoint.policy_name, str(default), entries)


def _encode_as(
    checkpoint: CheckpointV1 | CheckpointV2, target: str, cmap: ContainerMap | None, source: str
) -> bytes:
    """Kubelet-canonical bytes of ``checkpoint`` in ``target`` format (CPU lists normalised)."""
    if isinstance(checkpoint, CheckpointV1) and target == "v1":
        try:
            return codec.encode_v1(_canonical_v1(checkpoint, source))
        except codec.CPUListError as err:
            message = f"{source!r}: could not parse the default cpu set: {err}"
            raise CheckpointFormatError(message) from None
    if isinstance(checkpoint, CheckpointV1):
        if cmap is None:
            message = "a V1 file needs --containers MAP.json to become V2 (it is keyed by ID)"
            raise click.UsageError(message)
        checkpoint = v1_to_v2(checkpoint, cmap, source=source)
    snapshot = _snapshot(checkpoint, source)
    if target == "v2":
        return codec.encode_v2(snapshot)
    if cmap is None:
        message = "a V1 file is keyed by container ID: give --containers MAP.json"
        raise click.UsageError(message)
    return codec.encode_v1(v2_to_v1(codec.checkpoint_v2_from_snapshot(snapshot), cmap))


def _write_checked(data: bytes, target: str, dest: Path, *, in_place: bool) -> int:
    """Decode the new bytes again before writing them; return their checksum."""
    again = codec.decode_as(data, target, source=str(dest))  # type: ignore[arg-type]
    if codec.encode_checkpoint(again) != data:  # pragma: no cover - codec invariant
        message = "internal check failed: the re-encoded file does not decode to itself"
        raise CheckpointFormatError(message)
    if in_place:
        filestore.preserve_copy(dest, dest.with_name(dest.name + ".last-good"))
    filestore.write_atomic(dest, data)
    return again.checksum


def _report(fmt: str, rows: list[tuple[str, str]], payload: dict[str, Any]) -> None:
    if fmt == "json":
        emit_json(payload)
    else:
        _lines(rows)


def _convert(
    path: Path,
    *,
    out: Path | None,
    in_place: bool,
    target: str | None,
    containers: Path | None,
    fmt: str,
    strict_checksum: bool,
) -> None:
    dest = _destination(path, out, in_place)
    source = str(path)
    data = _read(path)
    if strict_checksum:
        checkpoint: CheckpointV1 | CheckpointV2 = codec.decode(
            data, source=source, order="v2-first"
        )
    else:
        result = _lenient(data, source)
        assert result.checkpoint is not None
        checkpoint = result.checkpoint
    extra = codec.unknown_keys(data)
    if extra:
        keys = ", ".join(go_quote(key) for key in extra)
        message = (
            f"{source!r} has keys the kubelet's V1/V2 formats do not know ({keys}); "
            "it may be a newer format: refusing to drop them, nothing was written"
        )
        raise CheckpointFormatError(message)
    goal = target or checkpoint.format
    new = _encode_as(checkpoint, goal, _container_map(containers), source)
    checksum = _write_checked(new, goal, dest, in_place=in_place)
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


_out = click.option("-o", "--out", type=click.Path(path_type=Path), help="File to write.")
_in_place = click.option("--in-place", is_flag=True, help="Replace the input (keeps .last-good).")
_fmt = click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)


@state.command()
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--containers",
    type=click.Path(path_type=Path),
    required=True,
    help='JSON {"<containerID>": {"podUID": ..., "containerName": ...}}.',
)
@_out
@_in_place
@click.option("--to", "target", type=click.Choice(FORMATS), default="v2", show_default=True)
@_fmt
def migrate(
    *, path: Path, containers: Path, out: Path | None, in_place: bool, target: str, fmt: str
) -> None:
    """Convert V1 -> V2 through a container map (or V2 -> V1 for a downgrade)."""
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
@click.option("--to", "target", type=click.Choice(FORMATS), default=None, help="Default: keep.")
@click.option("--containers", type=click.Path(path_type=Path), help="Needed to change format.")
@_fmt
def rewrite(
    *,
    path: Path,
    out: Path | None,
    in_place: bool,
    target: str | None,
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
    source = str(path)
    result = _lenient(_read(path), source)
    assert result.checkpoint is not None
    return _snapshot(_to_v2(result.checkpoint, cmap, source), source)


def _flat(snapshot: StateSnapshot) -> dict[tuple[str, str], CPUSet]:
    return {
        (pod, name): cpus
        for pod, containers in snapshot.assignments.items()
        for name, cpus in containers.items()
    }


@state.command()
@click.argument("a", type=click.Path(path_type=Path))
@click.argument("b", type=click.Path(path_type=Path))
@click.option("--containers", type=click.Path(path_type=Path), help="Container map for V1 files.")
@output_option
def diff(a: Path, b: Path, containers: Path | None, output: str) -> None:
    """What moved between two checkpoints: policy, shared pool, containers."""
    cmap = _container_map(containers)
    before, after = _load_any(a, cmap), _load_any(b, cmap)
    old, new = _flat(before), _flat(after)
    changes = []
    for key in sorted(old.keys() | new.keys()):
        was, now = old.get(key), new.get(key)
        if was == now:
            continue
        kind = "added" if was is None else "removed" if now is None else "changed"
        changes.append(
            {
                "pod": key[0],
                "container": key[1],
                "change": kind,
                "before": "" if was is None else str(was),
                "after": "" if now is None else str(now),
            }
        )
    shared = {
        "before": str(before.default_cpuset),
        "after": str(after.default_cpuset),
        "gained": str(after.default_cpuset - before.default_cpuset),
        "lost": str(before.default_cpuset - after.default_cpuset),
    }
    policy = {"before": before.policy_name, "after": after.policy_name}
    if output == "json":
        emit_json({"policy": policy, "shared": shared, "containers": changes})
        return
    if before == after:
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
