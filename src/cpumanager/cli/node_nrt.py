"""`cpumanager node nrt`: the node as a NodeResourceTopology, for ``kubectl apply -f -``.

YAML by default, ``-o json`` for scripts (``nodeanswers/nrt.py`` builds the object).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import click

from cpumanager.cli.node_common import degraded_banner, live_options, load_node
from cpumanager.cli.node_versions import kubelet_version_option
from cpumanager.cli.options import DEGRADED_EXIT, emit_json, output_option

__all__ = ["nrt"]


@click.command("nrt")
@click.argument("snapshot", required=False, type=click.Path(path_type=Path, dir_okay=False))
@live_options
@kubelet_version_option
@output_option("yaml", "json")
@click.pass_context
def nrt(
    ctx: click.Context, *, snapshot: Path | None, live: bool, root: Path, kubelet_root: Path,
    pods: Path | None, kubelet_version: str | None, output: str,
) -> None:  # fmt: skip
    """SNAPSHOT: the node's NodeResourceTopology (topology.node.k8s.io/v1alpha2).

    On a node the kubelet would not start on, the object comes from the raw files with the
    refusal in the cpumanager.io/degraded attribute and on stderr, and the exit code is 4."""
    from cpumanager.cli.node_show import answer_or_degraded
    from cpumanager.nodeanswers.degraded import degraded_nrt
    from cpumanager.nodeanswers.nrt import node_resource_topology

    node = load_node(snapshot, live=live, root=root, kubelet_root=kubelet_root, pods=pods)
    found, picture = answer_or_degraded(node, kubelet_version, lambda: node_resource_topology(node))
    degraded = picture["degraded"] if picture is not None else None
    if picture is not None:
        document = degraded_nrt(node, picture)
        click.echo("\n".join(degraded_banner(picture["degraded"])), err=True)
    else:
        document = cast(dict[str, Any], found)
    if output == "json":
        emit_json(document)
    else:
        import yaml

        click.echo(yaml.safe_dump(document, sort_keys=False, width=100), nl=False)
    if degraded:
        ctx.exit(DEGRADED_EXIT)
