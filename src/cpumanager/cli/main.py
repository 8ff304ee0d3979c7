"""`cpumanager` entry point: a click group whose subcommands load lazily.

Subcommand modules import rich, yaml and the allocation code; loading them only when their
command runs keeps `cpumanager --version` fast. Exit codes are decided here and nowhere else:
0 ok, 1 bad input or unsatisfiable request, 2 usage (click), 3 system failure.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from typing import Any

import click

from cpumanager import __version__
from cpumanager.errors import CpuManagerError

# name -> (module, attribute, one-line help shown by `cpumanager --help`)
_COMMANDS: dict[str, tuple[str, str, str]] = {
    "topology": ("cpumanager.cli.topology", "topology", "Show the machine's CPU topology."),
    "state": ("cpumanager.cli.state", "state", "Inspect, verify and migrate checkpoints."),
    "compute": ("cpumanager.cli.compute", "compute", "Run one building block (take/hints/merge)."),
    "simulate": ("cpumanager.cli.simulate", "simulate", "What would the kubelet do?"),
    "agent": ("cpumanager.cli.agent", "agent", "Pin local workloads (daemon)."),
    "run": ("cpumanager.cli.agent", "run", "Start a command pinned to exclusive CPUs."),
    "node": ("cpumanager.cli.node", "node", "Snapshot a real node and answer for it."),
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
@click.version_option(__version__, prog_name="cpumanager")
def cli() -> None:
    """The kubelet's CPU Manager and Topology Manager: inspect, simulate, pin."""


def main(argv: list[str] | None = None) -> Any:
    """Run the CLI; every CpuManagerError becomes one line on stderr and an exit code."""
    try:
        return cli.main(args=argv, prog_name="cpumanager", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("cpumanager: aborted", err=True)
        sys.exit(130)
    except click.ClickException as err:
        err.show()
        sys.exit(err.exit_code)
    except CpuManagerError as err:
        click.echo(f"cpumanager: error: {err.message}", err=True)
        sys.exit(err.exit_code)
    except KeyboardInterrupt:
        click.echo("cpumanager: interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(0)
    except Exception as err:  # the last line of defence: one line, never a traceback
        if os.environ.get("CPUMANAGER_DEBUG"):
            raise
        click.echo(
            f"cpumanager: internal error: {type(err).__name__}: {err} "
            "(set CPUMANAGER_DEBUG=1 for a traceback and please report it)",
            err=True,
        )
        sys.exit(3)


if __name__ == "__main__":  # pragma: no cover
    main()
