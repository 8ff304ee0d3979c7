"""``node preflight --to-kubelet``: the node's checkpoints and configuration under another
kubelet release (``nodeview/version_preflight.py``): as is, convert, drain or refuse.

``--kubelet-version`` on the node commands that decide (whatif, preflight, show, nrt) picks
the release whose rules apply, as ``simulate --kubelet-version`` does: given, else the
snapshot's recorded ``kubeletVersion``, else the newest release. A release that would not
start on the node (an option, gate or checkpoint it refuses) is a one-line error."""

from __future__ import annotations

import click

from cpumanager.cli.node_common import printable
from cpumanager.cli.options import STRUCTURED, emit_as
from cpumanager.core import versions
from cpumanager.core.versions import parse_release
from cpumanager.formats.kubelet_config import KubeletConfig
from cpumanager.nodeview.snapshot import NodeSnapshot
from cpumanager.nodeview.version_preflight import (
    preflight_to_release,
    recorded_release,
    startup_refusal,
)

__all__ = ["check_release", "kubelet_version_option", "node_release", "to_release"]

kubelet_version_option = click.option(
    "--kubelet-version",
    "kubelet_version",
    default=None,
    metavar="1.N",
    help="The kubelet release whose rules apply (default: the snapshot's, else the newest).",
)


def node_release(node: NodeSnapshot, version: str | None) -> versions.Release:
    """The release asked for, else the one the snapshot recorded, else the newest."""
    return parse_release(version) if version is not None else recorded_release(node)


def check_release(
    node: NodeSnapshot, release: versions.Release, *, config: KubeletConfig | None = None
) -> None:
    """Raise a one-line ConfigError when kubelet ``release`` would not start on the node."""
    refusal = startup_refusal(node, release, config)
    if refusal is not None:
        raise refusal


_HEADLINE = {
    "as-is": "safe: kubelet {name} reads every file and keeps every assignment",
    "convert": "convert first: kubelet {name} needs the files rewritten (see below)",
    "drain": "drain first: kubelet {name} cannot keep these pods' assignments",
    "refuse": "refused: kubelet {name} would not start on this node as it is",
}


def to_release(
    node: NodeSnapshot,
    version: str,
    *,
    config: KubeletConfig | None,
    output: str,
    from_release: versions.Release | None = None,
) -> int:
    """Print the verdict; the exit code (0 only when nothing needs doing)."""
    release = parse_release(version)
    result = preflight_to_release(node, release, config=config, from_release=from_release)
    name = f"{release[0]}.{release[1]}"
    if output in STRUCTURED:
        emit_as(
            output,
            {
                "kubelet": name,
                "verdict": result.verdict,
                "drain": list(result.drain),
                "findings": [
                    {"subject": f.subject, "verdict": f.verdict, "text": f.text}
                    for f in result.findings
                ],
            },
        )
    else:
        click.echo(_HEADLINE[result.verdict].format(name=name))
        for finding in result.findings:
            click.echo(f"  - [{finding.verdict}] {printable(finding.text)}")
        if result.drain:
            click.echo("drain these pods: " + ", ".join(printable(p) for p in result.drain))
    return 0 if result.verdict == "as-is" else 1
