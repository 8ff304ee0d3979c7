"""`cpumanager node publish`: the DaemonSet's node agent, pushing snapshots to the extender.

Collection is ``node snapshot``'s (``adapters/node_collect.py``); the loop, change detection
and sending are ``agent/publish.py``. One line per round on stderr.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from cpumanager.cli.logs import configure, log, log_format_option
from cpumanager.cli.node_common import node_source_options
from cpumanager.cli.options import kubeconfig_option, topology_view

if TYPE_CHECKING:
    from cpumanager.nodeview.snapshot import NodeSnapshot

__all__ = ["nrt_writer", "parse_period", "publish"]


def nrt_writer(path: Path) -> Callable[[NodeSnapshot], None]:
    """Write the snapshot's NodeResourceTopology to ``path`` atomically (``-``: stdout)."""

    def write(snapshot: NodeSnapshot) -> None:
        import json

        from cpumanager.adapters.filestore import write_atomic
        from cpumanager.nodeanswers.nrt import node_resource_topology

        document = node_resource_topology(snapshot)
        if str(path) == "-":
            click.echo(json.dumps(document, sort_keys=False))
            return
        text = json.dumps(document, indent=2, sort_keys=False) + "\n"
        write_atomic(path, text.encode(), mode=0o644)

    return write


def parse_period(text: str) -> float:
    """``10s``, ``2m``, ``500ms`` or plain seconds, as seconds (at least 0.1)."""
    from cpumanager.errors import InputError

    units = (("ms", 0.001), ("s", 1.0), ("m", 60.0), ("h", 3600.0))
    for suffix, scale in units:
        if text.endswith(suffix) and text[: -len(suffix)].replace(".", "", 1).isdigit():
            value = float(text[: -len(suffix)]) * scale
            break
    else:
        if not text.replace(".", "", 1).isdigit():
            msg = f"--every {text!r} is not a duration; write e.g. 10s, 2m or 500ms"
            raise InputError(msg)
        value = float(text)
    if value < 0.1:
        msg = f"--every {text!r} is under 100ms; poll less often"
        raise InputError(msg)
    return value


@click.command()
@click.option("--to", "url", required=True, help="The extender's base URL (http or https).")
@click.option(
    "--token-file",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="The bearer token: the pod's projected ServiceAccount token (read again at every "
    "push: the kubelet rotates it) or the extender's shared token.",
)
@click.option(
    "--ca-file",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="CA bundle that signed the extender's certificate (https; default: the system's).",
)
@click.option("--every", default="10s", show_default=True, help="Snapshot at least this often.")
@click.option(
    "--poll",
    type=click.FloatRange(min=0.1, max=60),
    default=1.0,
    show_default=True,
    help="Seconds between checks of the node's files for changes.",
)
@click.option("--once", is_flag=True, help="One round (snapshot and send), then exit.")
@node_source_options
@click.option(
    "--pods-from-apiserver",
    is_flag=True,
    help="Keep the node's pods from the API server: one list, then a watch on "
    "spec.nodeName (RBAC list and watch pods; kubeconfig or in-cluster access).",
)
@kubeconfig_option(
    "API server access for --pods-from-apiserver [default: $KUBECONFIG, in-cluster]."
)
@click.option(
    "--to-every-endpoint",
    is_flag=True,
    help="Push to every address --to's host name resolves to (each extender replica "
    "behind a headless Service), checking each certificate against that name.",
)
@click.option("--flags", default="", metavar="TEXT", help="Kubelet flags (win last).")
@click.option("--node-name", envvar="NODE_NAME", default=None, help="Default: $NODE_NAME.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.01, max=300),
    default=10.0,
    show_default=True,
    help="Seconds to wait for each PodResources call and each push.",
)
@click.option(
    "--nrt",
    "nrt_path",
    type=click.Path(path_type=Path, dir_okay=False, allow_dash=True),
    default=None,
    help="Also keep the node's exact NodeResourceTopology (as 'node nrt' builds it) in this "
    "file, rewritten atomically whenever the node changes, for 'kubectl apply -f'; '-' "
    "prints it to stdout as one JSON line per change.",
)
@log_format_option
def publish(
    *,
    url: str,
    token_file: Path | None,
    ca_file: Path | None,
    every: str,
    poll: float,
    once: bool,
    root: Path,
    kubelet_root: Path,
    pods: Path | None,
    pods_from_apiserver: bool,
    kubelet_config: Path | None,
    config_dir: Path | None,
    flags: str,
    node_name: str | None,
    socket: Path | None,
    timeout: float,
    nrt_path: Path | None,
    log_format: str,
    kubeconfig: Path | None,
    to_every_endpoint: bool,
) -> None:
    """Snapshot this node whenever its checkpoints, pods or configuration change (and at
    least every --every), and push changed snapshots to the extender.

    With --once the exit code says whether the round was delivered: 0 pushed (or
    heartbeat), 1 refused by the extender (401/403: the token), 3 no answer (DNS, refused
    connection, timeout; the cause is in the message)."""
    import tempfile

    from cpumanager.adapters.node_collect import CollectOptions, collect_snapshot
    from cpumanager.agent.publish import (
        EveryEndpoint,
        HttpSender,
        NodePods,
        Publisher,
        token_reader,
        watched_paths,
    )
    from cpumanager.cli.extender import read_token
    from cpumanager.core.gocompat import one_line
    from cpumanager.errors import InputError

    period = parse_period(every)
    if pods_from_apiserver and (pods is not None or not node_name):
        msg = "--pods-from-apiserver needs --node-name (or $NODE_NAME) and no --pods"
        raise InputError(msg)
    fetched = Path(tempfile.mkdtemp(prefix="cpumanager-publish-")) / "pods.json"
    # A usable token file now; read again at each push (the kubelet rotates projected tokens).
    token = read_token(token_file) if token_file is not None else None
    sender: HttpSender | EveryEndpoint
    if to_every_endpoint:
        sender = EveryEndpoint(url, token_reader(token_file), timeout=timeout, ca_file=ca_file)
    else:
        sender = HttpSender(url, None, timeout=timeout, ca_file=ca_file, token_file=token_file)
    before = None
    if pods_from_apiserver:
        from cpumanager.adapters.kube_api import api_client

        watcher = NodePods(api_client(kubeconfig, timeout=timeout), str(node_name), fetched)
        watcher.start()
        watcher.listed.wait(timeout)
        before = watcher.ready
    options = CollectOptions(
        topology_view=topology_view(),
        root=root,
        kubelet_root=kubelet_root,
        pods=fetched if pods_from_apiserver else pods,
        kubelet_config=kubelet_config,
        config_dir=config_dir,
        flags=flags,
        node_name=node_name,
        socket=socket,
        timeout_seconds=timeout,
    )
    publisher = Publisher(
        collect=lambda: collect_snapshot(options),
        before=before,
        post=sender.post,
        paths=watched_paths(
            kubelet_root,
            [pods, kubelet_config, config_dir, fetched if pods_from_apiserver else None],
        ),
        every=period,
        poll=poll,
        on_change=None if nrt_path is None else nrt_writer(nrt_path),
    )

    configure(log_format)
    log(
        "publish",
        "starting",
        to=url,
        node=node_name or "(from the pods)",
        every=period,
        poll=poll,
        once=once,
        root=str(root),
        kubeletRoot=str(kubelet_root),
        token="set" if token is not None else "none",
        pods="apiserver" if pods_from_apiserver else str(pods) if pods else "none",
    )
    outcomes: list[str] = []

    def report(outcome: str) -> None:
        if outcome.startswith("failed") and sender.last_error:
            outcome += f" ({sender.last_error})"
        outcomes.append(outcome)
        failed = outcome.startswith("failed")
        log("publish", one_line(outcome), level=logging.WARNING if failed else logging.INFO)

    publisher.run(report, rounds=1 if once else None)
    if once and outcomes and outcomes[-1].startswith("failed"):
        _fail(outcomes[-1], url)


def _fail(outcome: str, url: str) -> None:
    """--once delivered nothing: a one-line error with the cause, and its exit code."""
    from cpumanager.errors import HostError, InputError

    refused = any(f"answered {code}" in outcome for code in (401, 403))
    msg = f"nothing delivered to {url}: {outcome.removeprefix('failed: ')}"
    if refused:
        raise InputError(msg + "; check --token-file against the extender's")
    raise HostError(msg)
