"""`cpumanager node`: answers for a real node; each subcommand lives in its own module.

Subcommand modules are imported only when used (as the top-level commands are), so
``cpumanager node --help`` stays fast and a subcommand's heavy imports cost nothing elsewhere.
"""

from __future__ import annotations

import importlib

import click

__all__ = ["node"]

# name -> (module, attribute, one-line help)
_SUBCOMMANDS: dict[str, tuple[str, str, str]] = {
    "config": (
        "cpumanager.cli.node_config",
        "config",
        "The kubelet's effective configuration and where each field came from.",
    ),
    "nrt": (
        "cpumanager.cli.node_nrt",
        "nrt",
        "The node as a NodeResourceTopology object (kubectl apply -f -).",
    ),
    "preflight": (
        "cpumanager.cli.node_preflight",
        "preflight",
        "Would the kubelet start with a new configuration on this node?",
    ),
    "whatif": (
        "cpumanager.cli.node_whatif",
        "whatif",
        "Would these pods be admitted on this node now, and why.",
    ),
    "publish": (
        "cpumanager.cli.node_publish",
        "publish",
        "Push this node's snapshot to the extender whenever it changes (the DaemonSet).",
    ),
    "recover": (
        "cpumanager.cli.node_recover",
        "recover",
        "Keep the assignments that still fit instead of a drain (dry-run by default).",
    ),
    "show": (
        "cpumanager.cli.node_show",
        "show",
        "Reserved, shared and exclusive CPUs per NUMA node, who holds them, what fits.",
    ),
    "snapshot": (
        "cpumanager.cli.node_snapshot",
        "snapshot",
        "Collect this node's machine, configuration, checkpoints, pods into one file.",
    ),
}


class _LazyNodeGroup(click.Group):
    """Imports a subcommand's module only when that subcommand runs."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_SUBCOMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = _SUBCOMMANDS.get(cmd_name)
        if entry is None:
            return None
        command = getattr(importlib.import_module(entry[0]), entry[1])
        if not isinstance(command, click.Command):  # pragma: no cover - programming error
            msg = f"{entry[0]}.{entry[1]} is not a click command"
            raise TypeError(msg)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, _SUBCOMMANDS[name][2]) for name in sorted(_SUBCOMMANDS)])


@click.group(cls=_LazyNodeGroup)
def node() -> None:
    """Answers for a real node: snapshot it, then ask about it."""
