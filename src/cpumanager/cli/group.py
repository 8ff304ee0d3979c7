"""The click group behind ``cpumanager``: subcommands load lazily from their modules.

Subcommand modules import rich, yaml and the allocation code; loading them only when their
command runs keeps short commands fast.
"""

from __future__ import annotations

import importlib
import importlib.util

import click

from cpumanager import __version__
from cpumanager.cli.version import VERSION_MESSAGE

__all__ = ["cli"]

# name -> (module, attribute, one-line help shown by `cpumanager --help`)
_COMMANDS: dict[str, tuple[str, str, str]] = {
    "topology": ("cpumanager.cli.topology", "topology", "Show the machine's CPU topology."),
    "state": ("cpumanager.cli.state", "state", "Inspect, verify and migrate checkpoints."),
    "compute": ("cpumanager.cli.compute", "compute", "Run one building block (take/hints/merge)."),
    "simulate": ("cpumanager.cli.simulate", "simulate", "What would the kubelet do?"),
    "agent": ("cpumanager.cli.agent", "agent", "Pin local workloads (daemon)."),
    "run": ("cpumanager.cli.agent", "run", "Start a command pinned to exclusive CPUs."),
    "node": ("cpumanager.cli.node", "node", "Snapshot a real node and answer for it."),
    "fleet": ("cpumanager.cli.fleet", "fleet", "Placement and capacity over many snapshots."),
    "extender": (
        "cpumanager.cli.extender",
        "extender",
        "Serve the kube-scheduler extender (filter/prioritize).",
    ),
}


class LazyGroup(click.Group):
    """A group that imports a subcommand's module only when that subcommand is used."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for name in _COMMANDS if self._available(name))

    @staticmethod
    def _available(name: str) -> bool:
        module = _COMMANDS[name][0]
        return importlib.util.find_spec(module) is not None

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = _COMMANDS.get(cmd_name)
        if entry is None or not self._available(cmd_name):
            return None
        module = importlib.import_module(entry[0])
        command = getattr(module, entry[1])
        if not isinstance(command, click.Command):  # pragma: no cover - programming error
            msg = f"{entry[0]}.{entry[1]} is not a click command"
            raise TypeError(msg)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, _COMMANDS[name][2]) for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cpumanager", message=VERSION_MESSAGE)
def cli() -> None:
    """The kubelet's CPU Manager and Topology Manager: inspect, simulate, pin."""
