"""`cpumanager node show`: who holds what on this node, per socket and NUMA node.

A picture that reads at 80 columns (``nodeanswers/show.py`` computes it; ``-o json`` prints
the same values), ending with the largest Guaranteed pod the node would still admit.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import click

from cpumanager.cli.node_common import live_options, load_node, printable
from cpumanager.cli.node_versions import check_release, kubelet_version_option, node_release
from cpumanager.cli.options import emit_json, output_option

__all__ = ["show"]

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


def _numa(entry: dict[str, Any]) -> list[str]:
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
        for name, t in entry["memory"].items()
    )
    lines += _row("memory", memory)
    for resource, devices in entry["devices"].items():
        held = ", ".join(f"{d['id']} ({d['holder'] or 'free'})" for d in devices)
        lines += _row("devices", f"{resource}: {held}")
    return lines


@click.command("show")
@click.argument("snapshot", required=False, type=click.Path(path_type=Path, dir_okay=False))
@live_options
@kubelet_version_option
@output_option
def show(
    *, snapshot: Path | None, live: bool, root: Path, kubelet_root: Path, pods: Path | None,
    kubelet_version: str | None, output: str,
) -> None:  # fmt: skip
    """SNAPSHOT: reserved, shared and exclusive CPUs per NUMA node and who holds them."""
    from cpumanager.nodeanswers.show import node_picture

    node = load_node(snapshot, live=live, root=root, kubelet_root=kubelet_root, pods=pods)
    check_release(node, node_release(node, kubelet_version))
    picture = node_picture(node)
    if output == "json":
        emit_json(picture)
        return
    options = ",".join(f"{k}={v}" for k, v in picture["cpuManagerPolicyOptions"].items())
    head = (
        f"node {picture['node']}: CPU manager {picture['cpuManagerPolicy']}"
        f"{' (' + options + ')' if options else ''}, topology manager "
        f"{picture['topologyManagerPolicy']}/{picture['topologyManagerScope']}, memory "
        f"manager {picture['memoryManagerPolicy']}"
    )
    lines = textwrap.wrap(printable(head), width=_WIDTH, break_on_hyphens=False)
    for entry in picture["numaNodes"]:
        lines += _numa(entry)
    shared = ", ".join(picture["sharedPoolPods"]) or "none"
    lines += textwrap.wrap(
        printable(f"shared-pool pods: {shared}"),
        width=_WIDTH,
        subsequent_indent="  ",
        break_on_hyphens=False,
    )
    largest = picture["largestGuaranteedPod"]
    lines.append(
        f"largest Guaranteed pod still admitted: {largest['packed']} CPUs; "
        f"on one NUMA node: {largest['single_numa']} CPUs"
    )
    for note in picture["notes"]:
        lines += textwrap.wrap(printable(note), width=_WIDTH, initial_indent="note: ")
    click.echo("\n".join(lines))
