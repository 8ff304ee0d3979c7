"""`cpumanager node whatif`: would these pods be admitted on this node now, and why.

The node is restored from its snapshot as a restarting kubelet restores it; each pod then
goes through the resource managers' admit handler and the resource-fit predicate
(``nodeanswers/whatif.py``). The table says each verdict in the kubelet's words;
``--explain`` adds the reasoning, ``-o json`` prints ``simulate -o json``'s shape.
``--resize POD CONTAINER cpu=N[,memory=M]`` first resizes a running pod in place with the
simulator's release-dependent rules. Exit 0 when every pod would be admitted and every
resize applied, 1 otherwise, 4 when the kubelet would not start on the node (every pod
is then rejected as ``NodeNotReady`` under a banner with the kubelet's refusal).
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click

from cpumanager.cli.node_common import degraded_banner, live_options, load_node, printable
from cpumanager.cli.node_show import answer_or_degraded
from cpumanager.cli.node_versions import kubelet_version_option, node_release
from cpumanager.cli.options import DEGRADED_EXIT, emit_structured, output_option

if TYPE_CHECKING:
    from cpumanager.core.workload import Pod

__all__ = ["whatif"]

_WIDTH = 80


def _resources(text: str) -> dict[str, Fraction]:
    from cpumanager.core.quantity import parse_quantity

    found: dict[str, Fraction] = {}
    for item in text.split(","):
        name, sep, amount = item.partition("=")
        if not sep or name.strip() not in ("cpu", "memory"):
            msg = f"--resize wants cpu=N and/or memory=Q (comma-separated), not {item!r}"
            raise click.UsageError(msg)
        found[name.strip()] = parse_quantity(amount.strip(), field=f"--resize {name.strip()}")
    return found


def _wrap(text: str, indent: str) -> list[str]:
    import textwrap

    return textwrap.wrap(
        printable(text), width=_WIDTH, initial_indent=indent, subsequent_indent=indent + "  "
    )


def _degraded(picture: dict[str, Any], new_pods: list[Pod], output: str) -> None:
    """Every pod rejected as on a node whose kubelet is down (simulate's ``NodeNotReady``),
    under the banner; ``-o json`` has simulate's shape with the ``degraded`` object."""
    refusal = picture["degraded"]["refusal"]
    error = {"type": "NodeNotReady", "message": "the kubelet would not start on this node"}
    events: list[dict[str, Any]] = [
        {
            "event": "start",
            "admitted": False,
            "error": {"type": "NodeNotReady", "message": refusal},
            "notes": list(picture["notes"]),
        }
    ]
    events += [
        {
            "event": "admit",
            "pod": pod.name or str(pod.uid),
            "uid": str(pod.uid),
            "admitted": False,
            "error": dict(error),
            "containers": {},
        }
        for pod in new_pods
    ]
    if emit_structured(
        {
            "scenario": f"node {picture['node']}",
            "events": events,
            "degraded": picture["degraded"],
            "metrics": {},
        },
        output,
    ):
        click.echo(printable(f"cpumanager: degraded: {refusal}"), err=True)
        return
    lines = degraded_banner(picture["degraded"])
    for pod in new_pods:
        lines += _wrap(f"{pod.display_name}: rejected: NodeNotReady: {error['message']}", "")
    click.echo("\n".join(lines))


@click.command("whatif")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@live_options
@click.option("--explain", is_flag=True, help="Say why: hints, merge, allocation, fit.")
@click.option(
    "--resize",
    "resizes",
    nargs=3,
    multiple=True,
    metavar="POD CONTAINER cpu=N[,memory=Q]",
    help="Resize a running pod's container in place first (repeatable).",
)
@kubelet_version_option
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
    resizes: tuple[tuple[str, str, str], ...],
    kubelet_version: str | None,
    output: str,
) -> None:
    """SNAPSHOT POD.yaml...: would the kubelet admit these pods on this node, and why?"""
    from cpumanager.adapters.manifests import load_pods
    from cpumanager.nodeanswers.whatif import ResizeRequest, what_if

    snapshot_path = None if live else paths[0]
    pod_files = paths if live else paths[1:]
    if not pod_files and not resizes:
        msg = "give at least one POD.yaml after the snapshot, or --resize"
        raise click.UsageError(msg)
    requests = [ResizeRequest(p, c, _resources(r)) for p, c, r in resizes]
    node = load_node(snapshot_path, live=live, root=root, kubelet_root=kubelet_root, pods=pods)
    release = node_release(node, kubelet_version)
    new_pods = load_pods(pod_files) if pod_files else []
    found, degraded = answer_or_degraded(
        node,
        kubelet_version,
        lambda: what_if(node, new_pods, explain=explain, resizes=requests, release=release),
    )
    if found is None:
        _degraded(cast(dict[str, Any], degraded), new_pods, output)
        ctx.exit(DEGRADED_EXIT)
    answer = found
    if not emit_structured(answer.report, output):
        lines = [f"node {answer.node_name}: restored as a restarting kubelet would"]
        lines += [ln for note in answer.restore_notes for ln in _wrap(note, "  ")]
        for resized in answer.resizes:
            name = resized.pod.display_name
            if resized.admitted:
                head = f"{name}: resize applied"
            else:
                head = f"{name}: resize {resized.reason}: {resized.message}"
            lines += _wrap(head, "")
            lines += [ln for why in resized.why for ln in _wrap(why, "  ")]
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
    if not all(v.admitted for v in [*answer.resizes, *answer.verdicts]):
        ctx.exit(1)
