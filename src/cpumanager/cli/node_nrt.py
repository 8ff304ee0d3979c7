"""`cpumanager node nrt`: the node as a NodeResourceTopology, for ``kubectl apply -f -``.

YAML by default, ``-o json`` for scripts (``nodeanswers/nrt.py`` builds the object).
"""

from __future__ import annotations

from pathlib import Path

import click

from cpumanager.cli.node_common import live_options, load_node
from cpumanager.cli.node_versions import check_release, kubelet_version_option, node_release
from cpumanager.cli.options import emit_json, output_option

__all__ = ["nrt"]


@click.command("nrt")
@click.argument("snapshot", required=False, type=click.Path(path_type=Path, dir_okay=False))
@live_options
@kubelet_version_option
@output_option("yaml", "json")
def nrt(
    *, snapshot: Path | None, live: bool, root: Path, kubelet_root: Path, pods: Path | None,
    kubelet_version: str | None, output: str,
) -> None:  # fmt: skip
    """SNAPSHOT: the node's NodeResourceTopology (topology.node.k8s.io/v1alpha2)."""
    from cpumanager.nodeanswers.nrt import node_resource_topology

    node = load_node(snapshot, live=live, root=root, kubelet_root=kubelet_root, pods=pods)
    check_release(node, node_release(node, kubelet_version))
    document = node_resource_topology(node)
    if output == "json":
        emit_json(document)
        return
    import yaml

    click.echo(yaml.safe_dump(document, sort_keys=False, width=100), nl=False)
