"""`cpumanager node nrt`: the node as a NodeResourceTopology; with ``--apply``, on the API server.

Printing (the default): YAML, ``-o json`` for scripts, ready for ``kubectl apply -f -``
(``nodeanswers/nrt.py`` builds the object).

Maintaining (``--apply``): the object is created or updated through the kubernetes client
(``adapters/nrt_apply.py``), named after the Node (``--node-name``, by default ``$NODE_NAME``
from the Downward API), and written only when its content changed. With ``--every`` the
command keeps doing so until stopped (the NRT-only agent of ``deploy/nrt-daemonset.yaml``);
``--pods-from-apiserver`` reads the node's pods from the API server each round (what the
scheduler plugin's fingerprint is computed over). Each round reports one line on stderr.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from cpumanager.cli.node_common import degraded_banner, live_options, load_node
from cpumanager.cli.node_versions import check_release, kubelet_version_option, node_release
from cpumanager.cli.options import DEGRADED_EXIT, emit_json, kubeconfig_option, output_option

if TYPE_CHECKING:
    from cpumanager.nodeview.snapshot import NodeSnapshot

__all__ = ["nrt"]


@click.command("nrt")
@click.argument("snapshot", required=False, type=click.Path(path_type=Path, dir_okay=False))
@live_options
@kubelet_version_option
@output_option("yaml", "json")
@click.option(
    "--apply",
    "apply_",
    is_flag=True,
    help="Create or update the object on the API server (only when its content changed) "
    "instead of printing it.",
)
@click.option(
    "--every",
    default=None,
    metavar="DURATION",
    help="With --apply and --live: keep the object up to date, recomputing every DURATION "
    "(10s, 2m, ...).",
)
@click.option(
    "--node-name",
    envvar="NODE_NAME",
    default=None,
    help="The Node's name, which names the object (default: $NODE_NAME, else the snapshot's).",
)
@click.option(
    "--pods-from-apiserver",
    is_flag=True,
    help="With --live: list the node's pods from the API server each round (needs "
    "--node-name and no --pods).",
)
@kubeconfig_option(
    "With --apply: a kubeconfig file (default: the pod's service account)."
)
@click.option(
    "--fingerprint-method",
    type=click.Choice(["all", "with-exclusive-resources"]),
    default="all",
    show_default=True,
    help="Which pods the nodeTopologyPodsFingerprint attribute covers (the plugin's "
    "Autodetect resync method follows it).",
)
@click.option(
    "--informer",
    type=click.Choice(["dedicated", "shared"]),
    default="dedicated",
    show_default=True,
    help="The plugin's pod informer mode: dedicated counts every non-Pending pod, shared "
    "only Running ones.",
)
@click.pass_context
def nrt(
    ctx: click.Context, *, snapshot: Path | None, live: bool, root: Path, kubelet_root: Path,
    pods: Path | None, kubelet_version: str | None, output: str, apply_: bool, every: str | None,
    node_name: str | None, pods_from_apiserver: bool, kubeconfig: Path | None,
    fingerprint_method: str, informer: str,
) -> None:  # fmt: skip
    """SNAPSHOT: the node's NodeResourceTopology (topology.node.k8s.io/v1alpha2).

    On a node the kubelet would not start on, the printed object comes from the raw files
    with the refusal in the cpumanager.io/degraded attribute and on stderr, and the exit
    code is 4."""
    from cpumanager.errors import InputError

    if every is not None and not (apply_ and live):
        msg = "--every needs --apply and --live (a snapshot file does not change)"
        raise InputError(msg)
    if pods_from_apiserver and (not live or pods is not None or not node_name):
        msg = "--pods-from-apiserver needs --live, --node-name (or $NODE_NAME) and no --pods"
        raise InputError(msg)
    options: dict[str, Any] = {"method": fingerprint_method, "informer": informer}
    if not apply_:
        from cpumanager.cli.node_show import answer_or_degraded
        from cpumanager.nodeanswers.degraded import degraded_nrt

        node = load_node(snapshot, live=live, root=root, kubelet_root=kubelet_root, pods=pods)
        found, picture = answer_or_degraded(
            node,
            kubelet_version,
            lambda: _document(node, kubelet_version, node_name, options, root if live else None),
        )
        if picture is not None:
            click.echo("\n".join(degraded_banner(picture["degraded"])), err=True)
        document = degraded_nrt(node, picture) if picture is not None else found
        if output == "json":
            emit_json(document)
        else:
            import yaml

            click.echo(yaml.safe_dump(document, sort_keys=False, width=100), nl=False)
        if picture is not None:
            ctx.exit(DEGRADED_EXIT)
        return
    _maintain(
        snapshot=snapshot, live=live, root=root, kubelet_root=kubelet_root, pods=pods,
        kubelet_version=kubelet_version, every=every, node_name=node_name,
        pods_from_apiserver=pods_from_apiserver, kubeconfig=kubeconfig, options=options,
    )  # fmt: skip


def _document(
    node: NodeSnapshot,
    kubelet_version: str | None,
    node_name: str | None,
    options: dict[str, Any],
    sysfs_root: Path | None,
) -> dict[str, Any]:
    from dataclasses import replace

    from cpumanager.nodeanswers.nrt import node_resource_topology

    check_release(node, node_release(node, kubelet_version))
    if node_name:
        node = replace(node, node_name=node_name)
    device_numa = None
    if sysfs_root is not None:
        from cpumanager.adapters.nrt_apply import pci_numa_nodes

        device_numa = pci_numa_nodes(sysfs_root)
    return node_resource_topology(node, device_numa=device_numa, **options)


def _maintain(
    *, snapshot: Path | None, live: bool, root: Path, kubelet_root: Path, pods: Path | None,
    kubelet_version: str | None, every: str | None, node_name: str | None,
    pods_from_apiserver: bool, kubeconfig: Path | None, options: dict[str, Any],
) -> None:  # fmt: skip
    import tempfile

    from cpumanager.adapters.nrt_apply import NRTWriter, api_clients, list_node_pods
    from cpumanager.cli.node_publish import parse_period
    from cpumanager.core.gocompat import one_line
    from cpumanager.errors import CpuManagerError

    period = parse_period(every) if every is not None else None
    objects, core = api_clients(kubeconfig)
    writer = NRTWriter(objects)
    fetched = Path(tempfile.mkdtemp(prefix="cpumanager-nrt-")) / "pods.json"

    def round_once() -> str:
        if pods_from_apiserver:
            list_node_pods(core, str(node_name), fetched)
        node = load_node(
            snapshot, live=live, root=root, kubelet_root=kubelet_root,
            pods=fetched if pods_from_apiserver else pods,
        )  # fmt: skip
        document = _document(node, kubelet_version, node_name, options, root if live else None)
        return f"{writer.write(document)} {document['metadata']['name']}"

    if period is None:
        click.echo(one_line(f"cpumanager: nrt: {round_once()}"), err=True)
        return
    last = ""
    while True:
        started = time.monotonic()
        try:
            outcome = round_once()
        except CpuManagerError as exc:  # reported, retried next round
            outcome = f"failed: {exc}"
        if outcome != last or not outcome.startswith("unchanged"):
            click.echo(one_line(f"cpumanager: nrt: {outcome}"), err=True)
        last = outcome
        time.sleep(max(0.0, period - (time.monotonic() - started)))
