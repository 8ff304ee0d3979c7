"""`cpumanager node whatif`: would these pods be admitted on this node now, and why.

The node is restored from its snapshot as a restarting kubelet restores it; each pod then
goes through the resource managers' admit handler and the resource-fit predicate
(``nodeanswers/whatif.py``). The table says each verdict in the kubelet's words;
``--explain`` adds the reasoning, ``-o json`` prints ``simulate -o json``'s shape.
Exit 0 when every pod would be admitted, 1 otherwise.
"""

from __future__ import annotations

from pathlib import Path

import click

from cpumanager.cli.node_common import live_options, load_node, printable
from cpumanager.cli.options import emit_json, output_option

__all__ = ["whatif"]

_WIDTH = 80


def _wrap(text: str, indent: str) -> list[str]:
    import textwrap

    return textwrap.wrap(
        printable(text), width=_WIDTH, initial_indent=indent, subsequent_indent=indent + "  "
    )


@click.command("whatif")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@live_options
@click.option("--explain", is_flag=True, help="Say why: hints, merge, allocation, fit.")
@output_option
@click.pass_context
def whatif(
    ctx: click.Context,
    *,
    paths: tuple[Path, ...],
    live: bool,
    root: Path,
    kubelet_root: Path,
    pods: Path | None,
    explain: bool,
    output: str,
) -> None:
    """SNAPSHOT POD.yaml...: would the kubelet admit these pods on this node, and why?"""
    from cpumanager.adapters.manifests import load_pods
    from cpumanager.nodeanswers.whatif import what_if

    snapshot_path = None if live else paths[0]
    pod_files = paths if live else paths[1:]
    if not pod_files:
        msg = "give at least one POD.yaml after the snapshot"
        raise click.UsageError(msg)
    node = load_node(snapshot_path, live=live, root=root, kubelet_root=kubelet_root, pods=pods)
    answer = what_if(node, load_pods(pod_files), explain=explain)
    if output == "json":
        emit_json(answer.report)
    else:
        lines = [f"node {answer.node_name}: restored as a restarting kubelet would"]
        lines += [ln for note in answer.restore_notes for ln in _wrap(note, "  ")]
        for verdict in answer.verdicts:
            name = verdict.pod.display_name
            if verdict.admitted:
                head = f"{name}: admitted"
            else:
                head = f"{name}: rejected: {verdict.reason}: {verdict.message}"
            lines += _wrap(head, "")
            shown = verdict.why if explain else verdict.why[-3:]
            lines += [ln for why in shown for ln in _wrap(why, "  ")]
        click.echo("\n".join(lines))
    if not all(v.admitted for v in answer.verdicts):
        ctx.exit(1)
