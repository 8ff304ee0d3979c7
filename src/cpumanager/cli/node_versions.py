"""``node preflight --to-kubelet``: the node's checkpoints and configuration under another
kubelet release (``nodeview/version_preflight.py``): as is, convert, drain or refuse."""

from __future__ import annotations

import click

from cpumanager.cli.node_common import printable
from cpumanager.cli.options import emit_json
from cpumanager.core.versions import parse_release
from cpumanager.formats.kubelet_config import KubeletConfig
from cpumanager.nodeview.snapshot import NodeSnapshot
from cpumanager.nodeview.version_preflight import preflight_to_release

__all__ = ["to_release"]

_HEADLINE = {
    "as-is": "safe: kubelet {name} reads every file and keeps every assignment",
    "convert": "convert first: kubelet {name} needs the files rewritten (see below)",
    "drain": "drain first: kubelet {name} cannot keep these pods' assignments",
    "refuse": "refused: kubelet {name} would not start on this node as it is",
}


def to_release(
    node: NodeSnapshot, version: str, *, config: KubeletConfig | None, output: str
) -> int:
    """Print the verdict; the exit code (0 only when nothing needs doing)."""
    release = parse_release(version)
    result = preflight_to_release(node, release, config=config)
    name = f"{release[0]}.{release[1]}"
    if output == "json":
        emit_json(
            {
                "kubelet": name,
                "verdict": result.verdict,
                "drain": list(result.drain),
                "findings": [
                    {"subject": f.subject, "verdict": f.verdict, "text": f.text}
                    for f in result.findings
                ],
            }
        )
    else:
        click.echo(_HEADLINE[result.verdict].format(name=name))
        for finding in result.findings:
            click.echo(f"  - [{finding.verdict}] {printable(finding.text)}")
        if result.drain:
            click.echo("drain these pods: " + ", ".join(printable(p) for p in result.drain))
    return 0 if result.verdict == "as-is" else 1
