"""Run the CLI in-process as a shell sees it: exit code, stdout and stderr apart.

A plain module rather than conftest.py: the test modules call it in their own one-line
``run`` helpers, and conftest.py is not meant to be imported.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

from cpumanager.cli.main import main


@dataclass
class Run:
    exit_code: int
    output: str
    stderr: str


def run_main(argv: Sequence[str | Path], *, env: Mapping[str, str] | None = None) -> Run:
    """Run through main(), which turns errors into one stderr line and an exit code."""
    with CliRunner().isolation(env=env) as (out, err, _mixed):
        try:
            returned = main([*map(str, argv)])
            code = returned if isinstance(returned, int) else 0
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 1
        return Run(code, out.getvalue().decode(), err.getvalue().decode())
