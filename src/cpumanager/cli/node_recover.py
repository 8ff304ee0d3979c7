"""`cpumanager node recover`: do what ``node preflight`` proposes instead of a drain.

Dry-run by default: prints the refusal, the assignments kept and returned, and the
checkpoint the recovering kubelet would write. ``--apply`` writes it (atomically), after
checking the file on disk still holds the bytes the snapshot saw, and keeps the old bytes
beside it as ``<name>.before-recover``. Exit 0 when there is nothing to do or the plan was
shown or written, 1 when recovery cannot help (the reason is said).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import click

from cpumanager.cli.node_common import live_options, load_node, printable
from cpumanager.cli.options import emit_structured, output_option

__all__ = ["recover"]

_WIDTH = 80


def _wrap(text: str, indent: str = "") -> list[str]:
    return textwrap.wrap(
        printable(text),
        width=_WIDTH,
        initial_indent=indent,
        subsequent_indent=indent + "  ",
        break_on_hyphens=False,
        break_long_words=False,
    )


def _target(path: str, into: Path | None) -> Path:
    return Path(path) if into is None else into / Path(path).name


def _apply(files: list[tuple[Path, bytes | None, bytes]]) -> None:
    from cpumanager.adapters.filestore import write_atomic
    from cpumanager.errors import InputError

    for target, before, _after in files:
        now = target.read_bytes() if target.exists() else None
        if now != before:
            msg = (
                f"{target} changed since the snapshot was taken; take a new snapshot and "
                "run 'node recover' again"
            )
            raise InputError(msg)
    for target, before, after in files:
        if before is not None:
            write_atomic(target.with_name(target.name + ".before-recover"), before)
        write_atomic(target, after)


@click.command("recover")
@click.argument("snapshot", required=False, type=click.Path(path_type=Path, dir_okay=False))
@live_options
@click.option(
    "--apply",
    "apply_",
    is_flag=True,
    help="Write the checkpoint (default: only say what would be written).",
)
@click.option(
    "--into",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    default=None,
    metavar="DIR",
    help="Write into DIR instead of where the snapshot found the checkpoint.",
)
@output_option
@click.pass_context
def recover(
    ctx: click.Context, *, snapshot: Path | None, live: bool, root: Path, kubelet_root: Path,
    pods: Path | None, apply_: bool, into: Path | None, output: str,
) -> None:  # fmt: skip
    """SNAPSHOT: keep the assignments that still fit instead of draining the node.

    Stop the kubelet first; start it after --apply."""
    from cpumanager.nodeanswers.recover import plan_recover

    node = load_node(snapshot, live=live, root=root, kubelet_root=kubelet_root, pods=pods)
    plan = plan_recover(node)
    files = [(_target(f.path, into), f.before, f.after) for f in plan.files]
    applied = apply_ and plan.needed and not plan.blocked
    if applied:
        _apply(files)
    payload = plan.to_json()
    payload["applied"] = applied
    if not emit_structured(payload, output):
        lines: list[str] = []
        if not plan.needed:
            lines.append("nothing to recover: the kubelet starts on this node as it is")
        else:
            lines += _wrap("the kubelet refuses to start: " + plan.refusal)
            lines += _wrap("keeps: " + (", ".join(plan.keeps) or "none"))
            lines += _wrap("returns to the shared pool: " + (", ".join(plan.returns) or "none"))
            for target, before, after in files:
                verb = "wrote" if applied else "would write"
                size = "no file" if before is None else f"{len(before)} bytes"
                lines += _wrap(f"{verb} {target} (was {size}):")
                lines += _wrap(after.decode("utf-8", "replace"), "    ")
                if applied and before is not None:
                    lines += _wrap(f"kept the old bytes in {target.name}.before-recover", "  ")
            if output == "wide":
                lines += [ln for note in plan.notes for ln in _wrap(note, "note: ")]
            if plan.blocked:
                lines += _wrap(plan.blocked)
            elif not applied:
                lines.append("dry run: nothing written; stop the kubelet, then add --apply")
        click.echo("\n".join(lines))
    if plan.blocked:
        ctx.exit(1)
