"""``cpumanager state`` across kubelet releases: the format a file is in, who reads it.

``verify`` names the format and the releases that restore every entry; a file in a format
newer than v1.35 (CPU V3/V4, memory V2/V3) is verified here against ``--kubelet-version``.
``migrate --to-kubelet`` says what a target release does with the file and writes the bytes
it would accept when a conversion keeps every assignment.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from cpumanager.adapters.checkpoint_files import read_checkpoint, write_checked
from cpumanager.checkpoint import compat
from cpumanager.cli.options import STRUCTURED, emit_as, emit_structured, wrap_line
from cpumanager.core import versions
from cpumanager.core.versions import Release

__all__ = [
    "NEWER_FORMATS",
    "describe",
    "echo_readers",
    "kubelet_version_option",
    "migrate_to_release",
    "to_kubelet_options",
    "verify_newer",
]

NEWER_FORMATS = frozenset({"cpu-v3", "cpu-v4", "cpu-data-137820", "memory-v2", "memory-v3"})


def _release(_ctx: click.Context, _param: click.Parameter, value: str | None) -> Release:
    return versions.NEWEST if value is None else versions.parse_release(value)


kubelet_version_option = click.option(
    "--kubelet-version",
    "release",
    default=None,
    callback=_release,
    metavar="1.N",
    help=f"The kubelet release to judge by (1.18 .. {versions.NEWEST[0]}.{versions.NEWEST[1]}; "
    "default the newest).",
)


def describe(data: bytes) -> dict[str, str]:
    """Format and reader ranges of a file, for the verify report."""
    fmt = compat.identify(data)
    plain, gated = compat.readers(data)
    return {
        "writtenAs": compat.FORMAT_NAMES.get(fmt, "unknown"),
        "formatId": fmt,
        "readBy": plain,
        "readByWithPodLevelResourceManagers": gated,
    }


def _outcome_text(outcome: compat.Outcome) -> str:
    if outcome.error:
        return f"refuses it: {outcome.error}"
    text = f"reads it as {compat.FORMAT_NAMES.get(outcome.format, outcome.format)}"
    if outcome.dropped_pod_entries:
        text += f", dropping {outcome.dropped_pod_entries} pod-level entries"
    return text


def verify_newer(data: bytes, *, path: Path, release: Release, output: str) -> bool:
    """Verify a post-1.35 file against one release (its default gates); exit 1 if refused.

    False (nothing printed) when the file is in an older format.
    """
    if compat.identify(data) not in NEWER_FORMATS:
        return False
    outcome = compat.read_as(data, release)
    info = describe(data)
    ok = outcome.ok and outcome.dropped_pod_entries == 0
    name = f"{release[0]}.{release[1]}"
    if output in STRUCTURED:
        payload: dict[str, Any] = {
            "path": str(path),
            "ok": ok,
            "kubelet": name,
            "outcome": _outcome_text(outcome),
            **info,
        }
        emit_as(output, payload)
    else:
        verdict = f"OK: kubelet {name} would restore it" if ok else f"FAIL: kubelet {name} "
        if not ok:
            verdict += _outcome_text(outcome)
        rows = [
            ("file", str(path)),
            ("verdict", verdict),
            ("format", info["writtenAs"]),
            ("read by", info["readBy"]),
            ("with gate", info["readByWithPodLevelResourceManagers"]),
        ]
        width = max(len(key) for key, _ in rows)
        for key, value in rows:
            for line in wrap_line(
                click.unstyle(value), prefix=f"{key.ljust(width)}  ", indent=" " * (width + 2)
            ):
                click.echo(line)
    if not ok:
        raise SystemExit(1)
    return True


def echo_readers(data: bytes) -> None:
    """The two reader lines appended to the table report of V1/V2/memory V1 files."""
    info = describe(data)
    click.echo(f"written as  {info['writtenAs']}")
    click.echo(f"read by     kubelet {info['readBy']}")
    click.echo(f"with gate   kubelet {info['readByWithPodLevelResourceManagers']}")


def to_kubelet_options(command: Any) -> Any:
    """``--to-kubelet 1.N`` and the target's PodLevelResourceManagers gate, for ``migrate``."""
    command = click.option(
        "--pod-level-resource-managers/--no-pod-level-resource-managers",
        "gate",
        default=None,
        help="The target's PodLevelResourceManagers gate (default: the release's default).",
    )(command)
    return click.option(
        "--to-kubelet",
        "to_kubelet",
        default=None,
        metavar="1.N",
        help="Prepare the file for this kubelet release: as is, converted, or what to drain.",
    )(command)


def migrate_to_release(
    path: Path, *, release: str, gate: bool | None, out: Path | None, in_place: bool, fmt: str
) -> None:
    """``state migrate --to-kubelet``: report the plan; write a conversion; exit 1 to drain."""
    target = versions.parse_release(release)
    data = read_checkpoint(path)
    found = compat.plan(data, target, gate=gate)
    name = f"{target[0]}.{target[1]}"
    now = _outcome_text(found.now)
    dest: Path | None = None
    if found.verdict in ("convert", "drain") and (out is not None or in_place):
        if in_place and out is not None:
            message = "give either --output-file or --in-place, not both"
            raise click.UsageError(message)
        dest = path if in_place else out
    if found.verdict == "convert" and dest is not None:
        write_checked(found.data, dest, in_place=in_place)
    payload: dict[str, Any] = {
        "input": str(path),
        "kubelet": name,
        "PodLevelResourceManagers": found.gate,
        "format": compat.FORMAT_NAMES.get(compat.identify(data), "unknown"),
        "now": now,
        "verdict": found.verdict,
        "target_format": found.target_format,
        "drain": list(found.drain),
        "reason": found.reason,
        "output": str(dest) if dest is not None and found.verdict == "convert" else None,
    }
    if not emit_structured(payload, fmt):
        advice = {
            "as-is": f"kubelet {name} keeps every assignment: nothing to do",
            "convert": f"convert to {found.target_format.upper()} before starting kubelet {name}",
            "drain": found.reason,
            "refuse": f"kubelet {name} cannot use this file: {found.reason}",
        }[found.verdict]
        rows = [
            ("input", f"{path} ({payload['format']})"),
            (f"kubelet {name}", now),
            ("verdict", advice),
        ]
        if payload["output"]:
            rows.append(("output", f"{dest} ({found.target_format.upper()})"))
        elif found.verdict == "convert":
            rows.append(("output", "none written: give -o FILE or --in-place"))
        width = max(len(key) for key, _ in rows)
        for key, value in rows:
            for line in wrap_line(value, prefix=f"{key.ljust(width)}  ", indent=" " * (width + 2)):
                click.echo(line)
    if found.verdict in ("drain", "refuse"):
        raise SystemExit(1)
