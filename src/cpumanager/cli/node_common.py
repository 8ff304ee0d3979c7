"""What the node answer commands share: where the snapshot comes from, printable text.

Every answer runs on a snapshot file, or with ``--live`` on a snapshot collected in memory
by the same collector as ``node snapshot`` (``--root``, ``--kubelet-root``, ``--pods`` say
where to read, as there).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click

from cpumanager.cli.options import topology_view, topology_view_option

if TYPE_CHECKING:
    from cpumanager.nodeview.snapshot import NodeSnapshot

__all__ = ["degraded_banner", "live_options", "load_node", "node_source_options", "printable"]

F = TypeVar("F", bound=Callable[..., Any])


def printable(text: str) -> str:
    """Control characters from hostile input escaped, so they cannot drive the terminal."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _where_options(*, root: str, kubelet_root: str, pods: str) -> list[Callable[[F], F]]:
    """``--root``, ``--kubelet-root`` and ``--pods``: where a node is read, each command
    saying in its own words when they apply."""
    return [
        click.option(
            "--root",
            type=click.Path(path_type=Path, file_okay=False),
            default=Path("/"),
            show_default=True,
            help=root,
        ),
        click.option(
            "--kubelet-root",
            type=click.Path(path_type=Path, file_okay=False),
            default=Path("/var/lib/kubelet"),
            show_default=True,
            help=kubelet_root,
        ),
        click.option(
            "--pods",
            type=click.Path(path_type=Path, dir_okay=False),
            default=None,
            metavar="FILE",
            help=pods,
        ),
        topology_view_option,
    ]


def node_source_options(func: F) -> F:
    """Where a collection reads the node (``node snapshot`` and ``node publish`` alike):
    ``--root``, ``--kubelet-root``, ``--pods``, ``--kubelet-config``, ``--config-dir``,
    ``--socket``."""
    decorators = [
        *_where_options(
            root="Where sys/devices/system/{cpu,node} is read, as topology --sysfs.",
            kubelet_root="The kubelet's --root-dir: checkpoints, config.yaml, the PodResources "
            "socket.",
            pods="The node's pods ('kubectl get pods -A --field-selector spec.nodeName=NODE "
            "-o json' or the kubelet's /pods JSON); re-read each round when publishing.",
        ),
        click.option(
            "--kubelet-config",
            type=click.Path(path_type=Path, dir_okay=False),
            default=None,
            metavar="FILE",
            help="The kubelet's --config file (default: <kubelet-root>/config.yaml when present).",
        ),
        click.option(
            "--config-dir",
            type=click.Path(path_type=Path, file_okay=False),
            default=None,
            metavar="DIR",
            help="The kubelet's --config-dir drop-in directory (*.conf, merged in name order).",
        ),
        click.option(
            "--socket",
            type=click.Path(path_type=Path, dir_okay=False),
            default=None,
            metavar="PATH",
            help="The PodResources socket (default: <kubelet-root>/pod-resources/kubelet.sock).",
        ),
    ]
    for decorate in reversed(decorators):
        func = decorate(func)
    return func


def live_options(func: F) -> F:
    """``--live`` and where a live collection reads (``--root``, ``--kubelet-root``,
    ``--pods``)."""
    decorators = [
        click.option(
            "--live",
            is_flag=True,
            help="Collect this node's snapshot in memory (as 'node snapshot') and answer.",
        ),
        *_where_options(
            root="With --live: where sys/devices/system is read.",
            kubelet_root="With --live: the kubelet's --root-dir.",
            pods="With --live: the node's pods ('kubectl get pods -A --field-selector "
            "spec.nodeName=NODE -o json' output).",
        ),
    ]
    wrapped: Any = func
    for decorator in reversed(decorators):
        wrapped = decorator(wrapped)
    return cast(F, functools.wraps(func)(wrapped))


def load_node(
    snapshot: Path | None, *, live: bool, root: Path, kubelet_root: Path, pods: Path | None
) -> NodeSnapshot:
    """The snapshot file, or a live collection; a one-line SnapshotError otherwise."""
    from cpumanager.errors import SnapshotError

    if live:
        from cpumanager.adapters.node_collect import CollectOptions, collect_snapshot

        options = CollectOptions(
            root=root, kubelet_root=kubelet_root, pods=pods, topology_view=topology_view()
        )
        return collect_snapshot(options)
    if snapshot is None:
        msg = "give a snapshot file (from 'cpumanager node snapshot') or --live"
        raise SnapshotError(msg)
    from cpumanager.adapters.node_collect import load_snapshot

    return load_snapshot(snapshot)


def degraded_banner(degraded: Mapping[str, Any]) -> list[str]:
    """The refusal banner of a degraded answer: what the kubelet says, then each file's
    problem (the checksum detail), then where the values below come from."""
    import textwrap

    rule = "!" * 80
    lines = [rule]
    lines += textwrap.wrap(
        printable("DEGRADED: the kubelet would not start on this node: " + degraded["refusal"]),
        width=80,
        subsequent_indent="  ",
        break_on_hyphens=False,
        break_long_words=False,
    )
    for problem in degraded["problems"]:
        lines += textwrap.wrap(
            printable(problem),
            width=80,
            initial_indent="  - ",
            subsequent_indent="    ",
            break_on_hyphens=False,
            break_long_words=False,
        )
    lines += textwrap.wrap(
        f"Shown from {degraded['source']}; see 'cpumanager node preflight' and "
        "'cpumanager node recover'.",
        width=80,
        subsequent_indent="  ",
    )
    lines.append(rule)
    return lines
