"""`cpumanager` entry point. Exit codes are decided here and nowhere else: 0 ok, 1 bad input
or unsatisfiable request, 2 usage (click), 3 system failure.

Cold start matters (scripts run short commands in loops): this module imports nothing but
the standard library until it knows the command. ``--version`` is answered without click;
everything else imports the click group (``cli/group.py``), which loads the one subcommand
module it needs. ``tests/test_coldstart.py`` keeps it so.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from cpumanager import __version__
from cpumanager.cli.version import VERSION_MESSAGE

if TYPE_CHECKING:
    from cpumanager.cli.group import cli

__all__ = ["VERSION_MESSAGE", "cli", "main"]


def __getattr__(name: str) -> object:
    if name == "cli":  # the click group, imported when asked for
        from cpumanager.cli.group import cli

        return cli
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)


def main(argv: list[str] | None = None) -> Any:
    """Run the CLI; every CpuManagerError becomes one line on stderr and an exit code."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["--version"]:  # answered without importing click
        print(VERSION_MESSAGE % {"prog": "cpumanager", "version": __version__}, flush=True)
        return 0
    import click

    from cpumanager.cli.group import cli
    from cpumanager.errors import CpuManagerError

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
