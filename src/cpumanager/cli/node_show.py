"""`cpumanager node show`: who holds what on this node, per socket and NUMA node.

A picture that reads at 80 columns (``nodeanswers/show.py`` computes it; ``-o json`` prints
the same values), ending with the largest Guaranteed pod the node would still admit.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click

from cpumanager.cli.node_common import degraded_banner, live_options, load_node, printable
from cpumanager.cli.node_versions import check_release, kubelet_version_option, node_release
from cpumanager.cli.options import DEGRADED_EXIT, emit_structured, output_option

if TYPE_CHECKING:
    from cpumanager.nodeview.snapshot import NodeSnapshot

__all__ = ["answer_or_degraded", "node_answer", "picture_lines", "show"]

T = TypeVar("T")

_WIDTH = 80
_LABEL = 12


def _size(amount: int) -> str:
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if amount >= scale:
            return f"{amount / scale:.1f} {unit}"
    return f"{amount} B"


def _row(label: str, text: str) -> list[str]:
    indent = " " * (4 + _LABEL)
    first = "    " + label.ljust(_LABEL)
    return textwrap.wrap(
        printable(text) or "-",
        width=_WIDTH,
        initial_indent=first,
        subsequent_indent=indent,
        break_on_hyphens=False,
    )


def _numa(entry: dict[str, Any], *, wide: bool) -> list[str]:
    sockets = ",".join(str(s) for s in entry["sockets"]) or "-"
    lines = [f"  NUMA node {entry['id']} (socket {sockets}): CPUs {entry['cpus'] or '-'}"]
    lines += _row("reserved", entry["reserved"] or "-")
    lines += _row("shared", entry["shared"] or "-")
    if entry["exclusive"]:
        for item in entry["exclusive"]:
            lines += _row("exclusive", f"{item['cpus']}  {item['holder']}")
    else:
        lines += _row("exclusive", "-")
    memory = "; ".join(
        f"{name} {_size(t['free'])} free of {_size(t['allocatable'])}"
        + (f" ({_size(t['total'])} total)" if wide else "")
        for name, t in entry["memory"].items()
    )
    lines += _row("memory", memory)
    for resource, devices in entry["devices"].items():
        held = ", ".join(f"{d['id']} ({d['holder'] or 'free'})" for d in devices)
        lines += _row("devices", f"{resource}: {held}")
    return lines


def answer_or_degraded(
    node: NodeSnapshot, kubelet_version: str | None, answer: Callable[[], T]
) -> tuple[T | None, dict[str, Any] | None]:
    """``(answer(), None)`` on a node the kubelet starts on; else ``(None, picture)`` with
    what the raw files say (``nodeanswers/degraded.py``) under the kubelet's refusal. A
    release named by ``--kubelet-version`` that would not start stays a one-line error: the
    question, not the node, is what fails."""
    from cpumanager.errors import CheckpointError, ConfigError
    from cpumanager.nodeanswers.degraded import degraded_picture, kubelet_refusal

    if kubelet_version is not None:  # a release asked for that refuses: a one-line error
        check_release(node, node_release(node, kubelet_version))
    try:
        check_release(node, node_release(node, kubelet_version))
        return answer(), None
    except (CheckpointError, ConfigError) as err:
        return None, degraded_picture(node, kubelet_refusal(node, err.message))


def node_answer(node: NodeSnapshot, kubelet_version: str | None) -> dict[str, Any]:
    """``node show``'s values; from the raw files (with ``degraded``) when the kubelet would
    not start on the node."""
    from cpumanager.nodeanswers.show import node_picture

    picture, degraded = answer_or_degraded(node, kubelet_version, lambda: node_picture(node))
    return picture if picture is not None else cast(dict[str, Any], degraded)


def picture_lines(picture: dict[str, Any], *, wide: bool = False) -> list[str]:
    """The picture at 80 columns (``wide``: also the memory of each NUMA node)."""
    lines: list[str] = []
    if picture.get("degraded"):
        lines += degraded_banner(picture["degraded"])
    options = ",".join(f"{k}={v}" for k, v in picture["cpuManagerPolicyOptions"].items())
    head = (
        f"node {picture['node']}: CPU manager {picture['cpuManagerPolicy']}"
        f"{' (' + options + ')' if options else ''}, topology manager "
        f"{picture['topologyManagerPolicy']}/{picture['topologyManagerScope']}, memory "
        f"manager {picture['memoryManagerPolicy']}"
    )
    lines += textwrap.wrap(printable(head), width=_WIDTH, break_on_hyphens=False)
    for entry in picture["numaNodes"]:
        lines += _numa(entry, wide=wide)
    shared = ", ".join(picture["sharedPoolPods"]) or "none"
    lines += textwrap.wrap(
        printable(f"shared-pool pods: {shared}"),
        width=_WIDTH,
        subsequent_indent="  ",
        break_on_hyphens=False,
    )
    largest = picture["largestGuaranteedPod"]
    if largest is None:
        lines.append("largest Guaranteed pod still admitted: none (the kubelet is not running)")
    else:
        lines.append(
            f"largest Guaranteed pod still admitted: {largest['packed']} CPUs; "
            f"on one NUMA node: {largest['singleNuma']} CPUs"
        )
    for note in picture["notes"]:
        lines += textwrap.wrap(
            printable(note), width=_WIDTH, initial_indent="note: ", subsequent_indent="  "
        )
    return lines


@click.command("show")
@click.argument("snapshot", required=False, type=click.Path(path_type=Path, dir_okay=False))
@live_options
@kubelet_version_option
@output_option("table", "wide", "json", "yaml", "html")
@click.pass_context
def show(
    ctx: click.Context, *, snapshot: Path | None, live: bool, root: Path, kubelet_root: Path,
    pods: Path | None, kubelet_version: str | None, output: str,
) -> None:  # fmt: skip
    """SNAPSHOT: reserved, shared and exclusive CPUs per NUMA node and who holds them.

    On a node the kubelet would not start on (a corrupt checkpoint, a switched policy) the
    answer comes from the raw files under a banner with the kubelet's refusal, and the exit
    code is 4. -o html writes one self-contained page (sockets, NUMA nodes, cores, CPUs
    coloured by holder) to stdout."""
    node = load_node(snapshot, live=live, root=root, kubelet_root=kubelet_root, pods=pods)
    picture = node_answer(node, kubelet_version)
    if output == "html":
        from cpumanager.cli.html.node_page import node_page

        click.echo(node_page(picture, node.topology()), nl=False)
    elif not emit_structured(picture, output):
        click.echo("\n".join(picture_lines(picture, wide=output == "wide")))
    if picture.get("degraded"):
        if output not in ("table", "wide"):
            click.echo(
                printable(
                    "cpumanager: degraded: the kubelet would not start on this node: "
                    + picture["degraded"]["refusal"]
                ),
                err=True,
            )
        ctx.exit(DEGRADED_EXIT)
