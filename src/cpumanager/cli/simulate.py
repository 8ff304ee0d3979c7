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

from cpumanager.cli.options import emit_json, output_option
from cpumanager.errors import ScenarioError

DEMO = "demo.yaml"


def _load(path: Path | None) -> Any:
    from cpumanager.sim.scenario import load_scenario, parse_scenario

    if path is not None:
        return load_scenario(path)
    text = resources.files("cpumanager").joinpath("data", DEMO).read_text(encoding="utf-8")
    return parse_scenario(yaml.safe_load(text), source=f"(embedded {DEMO})", base=Path.cwd())


def _cpus_cell(containers: dict[str, dict[str, Any]]) -> str:
    lines = []
    for name, info in containers.items():
        kind = "excl" if info.get("exclusive") else "shared"
        numa = ",".join(str(n) for n in info.get("numa", []))
        extra = ""
        if info.get("devices"):
            extra = " " + " ".join(f"{k}={','.join(v)}" for k, v in info["devices"].items())
        lines.append(f"{name}: {info['cpus'] or '-'} ({kind}, numa {numa or '-'}){extra}")
    return "\n".join(lines)


def _result_cell(event: dict[str, Any]) -> str:
    error = event.get("error")
    if error:
        return f"[red]{error['type']}[/red]\n{error['message']}"
    if event.get("admitted") is False:
        return "[red]failed[/red]"
    if event["event"] in ("admit", "start", "restart"):
        return "[green]ok[/green]"
    return "ok"


def _render(report: dict[str, Any], *, explain: bool) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(title=f"scenario {report['scenario']}", show_lines=True)
    for column in ("#", "event", "pod", "result", "containers", "shared pool", "notes"):
        table.add_column(column, overflow="fold")
    for index, event in enumerate(report["events"]):
        notes = list(event.get("notes", []))
        notes += [
            f"released {r['pod']}/{r['container']} {r['returned'] or '-'} ({r['reason']})"
            for r in event.get("released", [])
        ]
        notes += [f"repaired: {text}" for text in event.get("repairs", [])]
        reconcile = event.get("reconcile")
        if reconcile:
            notes += [f"pushed {k} -> {v}" for k, v in reconcile["updated"].items()]
            notes += [f"failed {k}: {v}" for k, v in reconcile["failed"].items()]
        table.add_row(
            str(index),
            event["event"],
            event.get("pod") or "",
            _result_cell(event),
            _cpus_cell(event.get("containers", {})),
            event.get("default_cpuset", ""),
            "\n".join(notes),
        )
    console.print(table)
    if explain:
        for index, event in enumerate(report["events"]):
            for item in event.get("explain", []):
                console.print(
                    f"[bold]#{index} {event['event']} {event.get('pod') or ''}[/bold]", end=" "
                )
                console.print(f"container {item.get('container')}:")
                for provider, hints in item.get("providers", {}).items():
                    console.print(f"  hints from {provider}: {hints}")
                if "merged" in item:
                    console.print(f"  merged: {item['merged']}  admit: {item.get('admit')}")
                for line in item.get("why", []):
                    console.print(f"  - {line}")
    final = report["final"]
    console.print(f"final shared pool: {final['default_cpuset'] or '(empty)'}")
    for pod, containers in final["entries"].items():
        for name, cpus in containers.items():
            console.print(f"  {pod}/{name}: {cpus}")


@click.command()
@click.argument("scenarios", nargs=-1, type=click.Path(path_type=Path))
@output_option("table", "json")
@click.option("--explain", is_flag=True, help="Show hints, merges and why these CPUs.")
def simulate(scenarios: tuple[Path, ...], output: str, explain: bool) -> None:
    """Run SCENARIO files through the kubelet's managers (no file: the embedded demo)."""
    from cpumanager.sim.simulate import simulate as run

    paths: list[Path | None] = list(scenarios) or [None]
    for path in paths:
        if path is not None and not path.is_file():
            msg = f"scenario {str(path)!r} does not exist or is not a file; check the path"
            raise ScenarioError(msg)
        report = run(_load(path)).to_json(explain=explain)
        if output == "json":
            emit_json(report)
        else:
            _render(report, explain=explain)
