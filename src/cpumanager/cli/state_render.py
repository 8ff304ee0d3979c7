"""Rendering shared by the ``state`` commands: key/value lines, tables, where CPUs sit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from cpumanager.cli.options import DEFAULT_OUTPUTS, FormatChoice
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.topology import CPUTopology

__all__ = [
    "ids",
    "in_place_option",
    "lines",
    "output_file_option",
    "placement",
    "report_format_option",
    "table",
]

# The file options of ``migrate`` and ``rewrite``; ``-o`` is the report's format.
output_file_option = click.option(
    "--output-file",
    "--out",
    "out",
    type=click.Path(path_type=Path),
    metavar="FILE",
    help="The file to write (-o is the report's format, as everywhere).",
)
in_place_option = click.option(
    "--in-place", is_flag=True, help="Replace the input (keeps .last-good)."
)
report_format_option = click.option(
    "-o",
    "--output",
    "fmt",
    type=FormatChoice(DEFAULT_OUTPUTS, case_sensitive=False),
    default="table",
    show_default=True,
    help="Format of the report: " + ", ".join(DEFAULT_OUTPUTS) + ".",
)


def placement(topology: CPUTopology | None, cpus: CPUSet) -> dict[str, Any]:
    """Sockets, NUMA nodes and cores of ``cpus`` (nothing without a machine)."""
    if topology is None:
        return {}
    unknown = cpus - topology.all_cpus
    return {
        "sockets": list(topology.sockets_of(cpus)),
        "numa": list(topology.numa_of(cpus)),
        "cores": list(topology.cores_of(cpus)),
        "unknownCpus": str(unknown),
    }


def ids(values: list[int]) -> str:
    return ",".join(str(v) for v in values)


def table(title: str, columns: list[str], rows: list[list[str]]) -> None:
    from rich.console import Console
    from rich.table import Table

    grid = Table(title=title, title_justify="left")
    for column in columns:
        grid.add_column(column, overflow="fold")
    for row in rows:
        grid.add_row(*row)
    Console(soft_wrap=False).print(grid)


def lines(pairs: list[tuple[str, str]]) -> None:
    """``key: value`` lines with the values aligned, wrapped at 80 columns."""
    from cpumanager.cli.options import wrap_line

    width = max(len(key) for key, _ in pairs)
    for key, value in pairs:
        head = f"{key + ':':<{width + 1}} "
        for line in wrap_line(value, prefix=head, indent=" " * len(head)):
            click.echo(line)
