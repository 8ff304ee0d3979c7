"""How ``cpumanager simulate`` reads in a terminal: a table that fits, then sentences.

The table has one row per event; a long cell wraps (nothing is cut), and ``-o wide`` adds
the shared pool after each event. ``--explain`` prints each event's full story below it,
with each admission's hints per resource (NUMA sets as ``{0,1}``, ``*`` marking the
preferred ones), the merged hint and the reasons.
Nothing here decides anything; it renders the JSON report of :mod:`cpumanager.sim.report`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich import box
from rich.console import Console, RenderableType
from rich.markup import escape
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

__all__ = ["numa_set", "render_report"]

_HINTS_SHOWN = 8


def numa_set(affinity: Sequence[int] | None) -> str:
    """``{0,1}``, or ``any`` for a hint without affinity."""
    if affinity is None:
        return "any"
    return "{" + ",".join(str(node) for node in affinity) + "}"


def _hint(hint: Mapping[str, Any]) -> str:
    return numa_set(hint.get("affinity")) + ("*" if hint.get("preferred") else "")


def _hints_text(value: object) -> str:
    """One resource's answer: its hints, a rule's description, or what its absence means."""
    if value is None:
        return "no preference"
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        if not value:
            return "no NUMA set fits (cannot be placed)"
        shown = " ".join(_hint(h) for h in value[:_HINTS_SHOWN])
        more = len(value) - _HINTS_SHOWN
        return shown + (f" ... ({more} more)" if more > 0 else "")
    return str(value)


def _container_line(name: str, info: Mapping[str, Any]) -> str:
    kind = "exclusive" if info.get("exclusive") else "shared"
    line = f"{name} {info.get('cpus') or '-'} {kind} NUMA {numa_set(info.get('numa') or [])}"
    for resource, ids in (info.get("devices") or {}).items():
        line += f", {resource} {','.join(ids)}"
    return line


def _cell(name: str, info: Mapping[str, Any]) -> str:
    """The table's short form of a container: name, CPUs, excl/shared, NUMA set."""
    kind = "excl" if info.get("exclusive") else "shared"
    return f"{name} {info.get('cpus') or '-'} {kind} {numa_set(info.get('numa') or [])}"


def _result(event: Mapping[str, Any]) -> str:
    error = event.get("error")
    if error:
        return f"[red]{escape(error['type'])}[/red]"
    if event.get("admitted") is False:
        return "[red]rejected[/red]"
    if event["event"] == "admit" and event.get("admitted"):
        return "[green]admitted[/green]"
    return "ok"


def _notes(event: Mapping[str, Any]) -> list[str]:
    notes = list(event.get("notes", []))
    notes += [
        f"released {r['pod']}/{r['container']} CPUs {r['returned'] or '-'} ({r['reason']})"
        for r in event.get("released", [])
    ]
    notes += [f"repaired: {text}" for text in event.get("repairs", [])]
    reconcile = event.get("reconcile")
    if reconcile:
        notes += [f"pushed CPUs {v} to {k}" for k, v in reconcile["updated"].items()]
        notes += [f"could not push to {k}: {v}" for k, v in reconcile["failed"].items()]
    return notes


def _say(console: Console, text: str | RenderableType, indent: int = 0) -> None:
    """Print plain text (never markup) or a renderable at ``indent``; text wraps between
    words (a bullet's continuation lines hang under its text)."""
    if not isinstance(text, str):
        console.print(Padding(text, (0, 0, 0, indent)))
        return
    import textwrap

    hang = "  " if text.startswith("- ") else ""
    lines = textwrap.wrap(
        text,
        width=max(20, console.width - indent),
        subsequent_indent=hang,
        break_long_words=False,
        break_on_hyphens=False,
    )
    for line in lines or [""]:
        console.print(Padding(Text(line), (0, 0, 0, indent)))


def _widths(total: int) -> dict[str, int]:
    """Column widths that fill ``total`` characters; containers take what is left. Error
    types (24 characters at most) fit their column whole; other cells wrap."""
    widths = {"#": 2, "event": 9, "pod": 12, "result": 24, "containers": 0}
    if total > 100:  # wider terminals: longer names first
        widths["pod"] = 20
    padding = len(widths) + 1  # one space between columns, and the box edges
    widths["containers"] = max(16, total - padding - sum(widths.values()))
    return widths


def _table(report: Mapping[str, Any], width: int) -> Table:
    table = Table(
        title=f"scenario {escape(str(report['scenario']))}",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
    )
    for column, size in _widths(width).items():
        table.add_column(column, overflow="fold", width=size)
    for index, event in enumerate(report["events"]):
        containers = event.get("containers", {})
        table.add_row(
            str(index),
            event["event"],
            escape(event.get("pod") or ""),
            _result(event),
            escape("\n".join(_cell(n, i) for n, i in containers.items())),
        )
    return table


def _explain_merge(console: Console, item: Mapping[str, Any]) -> None:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(overflow="fold", max_width=24)
    grid.add_column(overflow="fold")
    for provider, answer in item.get("providers", {}).items():
        if not answer:  # the provider asks for nothing for this container
            grid.add_row(Text(provider), Text("nothing requested: no preference"))
            continue
        if not isinstance(answer, Mapping):
            grid.add_row(Text(provider), Text(_hints_text(answer)))
            continue
        for resource, value in answer.items():
            grid.add_row(Text(resource), Text(_hints_text(value)))
    _say(console, "hints (* = preferred):", 4)
    _say(console, grid, 6)
    merged = item.get("merged") or {}
    verdict = "admitted" if item.get("admit") else "rejected"
    preferred = "preferred" if merged.get("preferred") else "not preferred"
    _say(console, f"merged hint {numa_set(merged.get('affinity'))}, {preferred}: {verdict}", 4)


def _explain(console: Console, report: Mapping[str, Any]) -> None:
    for index, event in enumerate(report["events"]):
        head = f"#{index} {event['event']}" + (f" {event['pod']}" if event.get("pod") else "")
        lines: list[str] = []
        error = event.get("error")
        if error:
            lines.append(f"{error['type']}: {error['message']}")
        lines += [_container_line(n, i) for n, i in event.get("containers", {}).items()]
        if event.get("defaultCpuSet") is not None:
            lines.append(f"shared pool {event.get('defaultCpuSet') or '(empty)'}")
        items = event.get("explain", [])
        if not (error or items or event.get("containers")):
            continue
        console.print()
        _say(console, Text(head, style="bold"))
        for line in lines:
            _say(console, line, 2)
        for item in items:
            container = str(item.get("container"))
            if "providers" in item:
                _say(console, f"topology hints for container {container}", 2)
                _explain_merge(console, item)
            else:
                _say(console, f"CPUs for container {container}: {item.get('cpus') or '-'}", 2)
            for line in item.get("why", []):
                _say(console, f"- {line}", 4)


def render_report(
    report: Mapping[str, Any], *, explain: bool, console: Console, wide: bool = False
) -> None:
    """Print ``report`` (``SimulationReport.to_json``) for people, at the console's width;
    ``wide`` adds the shared pool after each event."""
    console.print(_table(report, console.width))
    if wide:
        _say(console, "shared pool after each event:")
        for index, event in enumerate(report["events"]):
            pool = event.get("defaultCpuSet")
            if pool is not None:
                _say(console, f"#{index} {event['event']}: {pool or '(empty)'}", 2)
    for index, event in enumerate(report["events"]):
        for note in _notes(event):
            _say(console, f"#{index} {event['event']}: {note}")
    if explain:
        _explain(console, report)
    elif any(event.get("error") for event in report["events"]):
        _say(console, "(--explain shows every rejection's full message and reasons)")
    final = report["final"]
    console.print()
    _say(console, f"final shared pool: {final['defaultCpuSet'] or '(empty)'}")
    for pod, containers in final["entries"].items():
        for name, cpus in containers.items():
            _say(console, f"{pod}/{name}: {cpus}", 2)
