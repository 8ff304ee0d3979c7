"""``cpumanager state`` on the memory and device checkpoints (the CPU file has its own path).

The kind is read from the content (:func:`cpumanager.checkpoint.kinds.detect_kind`); bytes
that are no checkpoint at all stay on the CPU path, whose errors say what a file should be.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from cpumanager.adapters.checkpoint_files import write_checked
from cpumanager.checkpoint import kinds
from cpumanager.cli.options import STRUCTURED, emit_as, emit_structured, wrap_line
from cpumanager.errors import CheckpointError, InputError

if TYPE_CHECKING:  # the memory and device codecs load only for those files (cold start)
    from cpumanager.checkpoint.memory.codec import MachineState
    from cpumanager.checkpoint.node_files import OtherKind
    from cpumanager.core.topology import CPUTopology

__all__ = ["other_kind", "show", "verify", "write"]


def other_kind(data: bytes) -> OtherKind | None:
    """``memory`` or ``device`` when the bytes are one of those files, else None."""
    try:
        kind = kinds.detect_kind(data, source="")
    except CheckpointError:
        return None
    return None if kind == "cpu" else kind


def _lines(pairs: list[tuple[str, str]]) -> None:
    width = max(len(key) for key, _ in pairs)
    for key, value in pairs:
        for line in wrap_line(
            value or "-", prefix=f"{key.ljust(width)}  ", indent=" " * (width + 2)
        ):
            click.echo(line)


def show(data: bytes, kind: OtherKind, *, path: Path, output: str) -> None:
    """``inspect``: the state, with a bad checksum shown rather than refused."""
    from cpumanager.checkpoint import node_files

    read = node_files.read_node_file(data, kind, source=str(path))
    found = node_files.summary(read)
    if output in STRUCTURED:
        emit_as(output, {"path": str(path), **found})
        return
    checksum = found["checksum"]
    _lines([
        ("file", str(path)),
        ("kind", "memory manager" if kind == "memory" else "device manager"),
        ("format", read.format.upper()),
        ("checksum", f"{checksum['stored']} {checksum['status']}"),
    ])  # fmt: skip
    if kind == "memory":
        click.echo(f"policy    {found['policyName'] or chr(34) * 2}")
        for node, state in found["machineState"].items():
            if state is None:
                click.echo(f"  NUMA {node}: <nil>")
                continue
            click.echo(f"  NUMA {node}: {state['assignments']} assignments, group {state['cells']}")
            for name, table in state["memory"].items():
                if table is not None:
                    click.echo(
                        f"    {name}: free {table['free']} of {table['allocatable']} allocatable "
                        f"(reserved {table['reserved']}, system {table['systemReserved']})"
                    )
        for entry in found["entries"]:
            blocks = ", ".join(f"{b['type']} {b['size']} on {b['numa']}" for b in entry["blocks"])
            click.echo(f"  {entry['pod']} / {entry['container']}: {blocks or '(no blocks)'}")
        return
    for entry in found["entries"]:
        devices = "; ".join(f"NUMA {n}: {','.join(ids)}" for n, ids in entry["devices"].items())
        click.echo(f"  {entry['pod']} / {entry['container']} {entry['resource']}: {devices}")
    for resource, ids in found["registeredDevices"].items():
        click.echo(f"  registered {resource}: {len(ids)} devices")


def parse_reserved_memory(values: tuple[str, ...]) -> dict[int, dict[str, int]]:
    """``--reserved-memory 0:memory=1Gi,hugepages-1Gi=2Gi`` (repeatable, or ``;``-separated)."""
    out: dict[int, dict[str, int]] = {}
    for value in values:
        for reservation in filter(None, value.split(";")):
            node_text, found, limits = reservation.partition(":")
            if not found or not node_text.strip().isdigit():
                message = (
                    f"--reserved-memory {reservation!r}: expected "
                    "numaNodeID:type=quantity[,type=quantity...], e.g. 0:memory=1Gi"
                )
                raise InputError(message)
            node = out.setdefault(int(node_text), {})
            for limit in limits.split(","):
                name, found, amount = limit.partition("=")
                if not found or not name:
                    message = f"--reserved-memory {reservation!r}: expected type=quantity"
                    raise InputError(message)
                node[name.strip()] = _quantity(amount.strip(), name)
    return out


def _quantity(amount: str, name: str) -> int:
    from cpumanager.core.quantity import parse_quantity, value

    return value(parse_quantity(amount, field=name))


def default_state(topology: CPUTopology, reserved: dict[int, dict[str, int]]) -> MachineState:
    """The memory manager's default machine state for ``topology`` (node memory sizes)."""
    memory: dict[int, int] = {}
    for node in topology.numa_nodes:
        if node.memory_bytes is None:
            message = (
                f"NUMA node {node.id} has no memory size in this machine description; "
                "use --sysfs or a machine file with memory sizes"
            )
            raise InputError(message)
        memory[node.id] = node.memory_bytes
    from cpumanager.checkpoint.memory.restore import default_machine_state

    return default_machine_state(memory, system_reserved=reserved)


def verify(
    data: bytes,
    kind: OtherKind,
    *,
    path: Path,
    policy: str | None,
    output: str,
    machine: MachineState | None = None,
) -> None:
    """``verify``: exit 1 when the kubelet would not use the file as it is."""
    from cpumanager.checkpoint import node_files

    found = node_files.verify_node_file(
        data, kind, source=str(path), policy=policy, machine=machine
    )
    payload: dict[str, Any] = {
        "path": str(path), "kind": kind, "ok": found.ok, "format": found.format,
        "checksum": found.checksum, "reasons": list(found.reasons), "notes": list(found.notes),
    }  # fmt: skip
    if output in STRUCTURED:
        emit_as(output, payload)
    else:
        if kind == "memory":
            verdict = (
                "OK: the kubelet would restore it" if found.ok else "FAIL: the kubelet refuses it"
            )
        else:
            verdict = (
                "OK: the device manager would restore it" if found.ok
                else "FAIL: the device manager would start without (part of) it"
            )  # fmt: skip
        _lines([("file", str(path)), ("verdict", verdict),
                ("format", found.format.upper() or "-"), ("checksum", found.checksum)])  # fmt: skip
        for reason in found.reasons:
            click.echo(f"  reason: {reason}")
        for note in found.notes:
            click.echo(f"  note: {note}")
    if not found.ok:
        raise SystemExit(1)


def write(
    data: bytes, kind: OtherKind, *, path: Path, dest: Path, in_place: bool, to_v2: bool, fmt: str
) -> None:
    """``rewrite``/``migrate``: canonical bytes, fresh checksum, decoded again before writing."""
    from cpumanager.checkpoint import node_files

    new = node_files.rewrite_node_file(data, kind, source=str(path), to_v2=to_v2)
    found_kind, checkpoint = kinds.decode_any(new, source=str(dest))
    assert found_kind == kind  # the bytes we wrote decode as what we meant
    write_checked(new, dest, in_place=in_place)
    checksum = getattr(checkpoint, "checksum", 0)
    if emit_structured({"input": str(path), "output": str(dest), "kind": kind,
                        "checksum": checksum, "bytes": len(new)}, fmt):  # fmt: skip
        return
    _lines([("input", str(path)), ("output", str(dest)), ("kind", kind),
            ("checksum", str(checksum)), ("bytes", str(len(new)))])  # fmt: skip
