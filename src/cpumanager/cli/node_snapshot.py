"""`cpumanager node snapshot`: one self-contained JSON file describing this node.

Collection is ``adapters/node_collect.py``; this command parses options, writes the file
(atomically with ``--output-file FILE``, else to stdout; ``-o yaml`` for reading) and says on
stderr which sources were missing, in one line each. Missing sources (no pod list, no
socket) do not stop it; a machine or a checkpoint the kubelet has that cannot be read
does (exit 1, nothing written) unless ``--allow-partial``; unusable files named on the
command line always do.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from cpumanager.cli.node_common import node_source_options
from cpumanager.cli.options import FormatChoice, topology_view

if TYPE_CHECKING:
    from cpumanager.nodeview.snapshot import Source

__all__ = ["snapshot"]


def _printable(text: str) -> str:
    """Node-supplied text (paths, kubelet answers) with control characters escaped, so a
    hostile file name cannot drive the terminal."""
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


@click.command()
@node_source_options
@click.option(
    "--configz",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    metavar="FILE",
    help="A running kubelet's /configz answer (wins over --kubelet-config).",
)
@click.option(
    "--kubelet-cmdline",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    metavar="FILE",
    help="The kubelet's command line: a copy of /proc/<pid>/cmdline or a text file.",
)
@click.option(
    "--flags",
    default="",
    metavar="TEXT",
    help='Kubelet flags, e.g. "--cpu-manager-policy=static --reserved-cpus=0" (win last).',
)
@click.option("--node-name", default=None, help="The node's name (default: from the pods).")
@click.option(
    "--kubelet-version",
    "kubelet_version",
    default=None,
    metavar="VERSION",
    help="The node's kubelet release (e.g. v1.33.2), recorded as kubeletVersion.",
)
@click.option(
    "--node-object",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    metavar="FILE",
    help="'kubectl get node NAME -o json': kubeletVersion from status.nodeInfo.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.01, max=300),
    default=10.0,
    show_default=True,
    help="Seconds to wait for each PodResources call.",
)
@click.option(
    "--output-file",
    "output_file",
    type=click.Path(path_type=Path, dir_okay=False, allow_dash=True),
    default=Path("-"),
    show_default=True,
    metavar="FILE",
    help="Where to write the snapshot ('-': stdout).",
)
@click.option(
    "-o",
    "--output",
    type=FormatChoice(["json", "yaml"], case_sensitive=False),
    default="json",
    show_default=True,
    help="Format: json (what the node commands read) or yaml (for reading).",
)
@click.option(
    "--allow-partial",
    is_flag=True,
    help="Write the snapshot and exit 0 even when the machine or a checkpoint the kubelet "
    "has cannot be read (default: exit 1 and write nothing).",
)
def snapshot(
    *,
    root: Path,
    kubelet_root: Path,
    pods: Path | None,
    kubelet_config: Path | None,
    configz: Path | None,
    config_dir: Path | None,
    kubelet_cmdline: Path | None,
    flags: str,
    node_name: str | None,
    socket: Path | None,
    kubelet_version: str | None,
    node_object: Path | None,
    timeout: float,
    output_file: Path,
    output: str,
    allow_partial: bool,
) -> None:
    """Collect the machine, the effective kubelet configuration, the three checkpoints (raw
    and decoded), the PodResources answers and the node's pods into one JSON file."""
    from cpumanager.adapters.node_collect import CollectOptions, collect_snapshot, write_snapshot
    from cpumanager.nodeview.snapshot import snapshot_to_json

    options = CollectOptions(
        topology_view=topology_view(),
        root=root,
        kubelet_root=kubelet_root,
        pods=pods,
        kubelet_config=kubelet_config,
        configz=configz,
        config_dir=config_dir,
        kubelet_cmdline=kubelet_cmdline,
        flags=flags,
        node_name=node_name,
        socket=socket,
        timeout_seconds=timeout,
        kubelet_version=kubelet_version,
        node_object=node_object,
    )
    taken = collect_snapshot(options)
    for source in taken.sources:
        if source.status != "ok":
            reason = f": {source.reason}" if source.reason else ""
            click.echo(
                _printable(f"cpumanager: note: {source.name} {source.status}{reason}"), err=True
            )
    unread = _unread(taken.sources)
    if unread and not allow_partial:
        from cpumanager.errors import SnapshotError

        msg = (
            "cannot read "
            + "; ".join(unread)
            + ": nothing written (--allow-partial writes what could be read)"
        )
        raise SnapshotError(_printable(msg))
    if output == "yaml":
        import json

        import yaml

        text = yaml.safe_dump(json.loads(snapshot_to_json(taken)), sort_keys=False, width=100)
        if str(output_file) == "-":
            click.echo(text, nl=False)
            return
        from cpumanager.adapters.filestore import write_atomic

        write_atomic(output_file, text.encode("utf-8"), mode=0o644)
    elif str(output_file) == "-":
        click.echo(snapshot_to_json(taken).decode("utf-8"), nl=False)
        return
    else:
        write_snapshot(taken, output_file)
    pods_count = "no pod list" if taken.pods is None else f"{len(taken.pods)} pods"
    click.echo(_printable(f"cpumanager: wrote snapshot {output_file} ({pods_count})"), err=True)


# What a snapshot cannot do without: the machine, and every checkpoint file the kubelet has
# (one that exists but cannot be read; a corrupt one is read, kept raw and flagged).
_NEEDED = {
    "machine": ("missing", "unreadable", "invalid"),
    "cpu_manager_state": ("unreadable",),
    "memory_manager_state": ("unreadable",),
    "kubelet_internal_checkpoint": ("unreadable",),
}


def _unread(sources: tuple[Source, ...]) -> list[str]:
    """``name (status: reason)`` of each source a snapshot cannot do without."""
    found = []
    for source in sources:
        if source.status in _NEEDED.get(source.name, ()):
            reason = f": {source.reason}" if source.reason else ""
            found.append(f"{source.name} ({source.status}{reason})")
    return found
