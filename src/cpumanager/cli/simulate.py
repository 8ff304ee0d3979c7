"""`cpumanager simulate`: what would the kubelet do with these pods on this machine, and why.

With no scenario it runs the embedded demo (a dual-socket machine, static policy,
single-numa-node, an admission that fits, one that cannot, a restart after a pod exited).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import click
import yaml

from cpumanager.cli.options import STRUCTURED, emit_as, output_option
from cpumanager.errors import ScenarioError

DEMO = "demo.yaml"


def _load(path: Path | None) -> Any:
    from cpumanager.sim.scenario import load_scenario, parse_scenario

    if path is not None:
        return load_scenario(path)
    text = resources.files("cpumanager").joinpath("data", DEMO).read_text(encoding="utf-8")
    return parse_scenario(yaml.safe_load(text), source=f"(embedded {DEMO})", base=Path.cwd())


def _render(report: dict[str, Any], *, explain: bool, wide: bool) -> None:
    from rich.console import Console

    from cpumanager.cli.simulate_render import render_report

    render_report(report, explain=explain, console=Console(), wide=wide)


@click.command()
@click.argument("scenarios", nargs=-1, type=click.Path(path_type=Path))
@output_option
@click.option("--explain", is_flag=True, help="Show hints, merges and why these CPUs.")
@click.option(
    "--kubelet-version",
    default=None,
    metavar="1.N",
    help="The kubelet release (overrides the scenarios' kubeletVersion; default the newest).",
)
def simulate(
    scenarios: tuple[Path, ...], output: str, explain: bool, kubelet_version: str | None
) -> None:
    """Run SCENARIO files through the kubelet's managers (no file: the embedded demo)."""
    from dataclasses import replace

    from cpumanager.core.versions import parse_release
    from cpumanager.sim.simulate import simulate as run

    release = None if kubelet_version is None else parse_release(kubelet_version)

    paths: list[Path | None] = list(scenarios) or [None]
    for path in paths:
        if path is not None and not path.is_file():
            msg = f"scenario {str(path)!r} does not exist or is not a file; check the path"
            raise ScenarioError(msg)
        scenario = _load(path)
        if release is not None:
            scenario = replace(scenario, kubelet_version=release)
        report = run(scenario).to_json(explain=explain)
        if output in STRUCTURED:
            emit_as(output, report)
        else:
            _render(report, explain=explain, wide=output == "wide")
