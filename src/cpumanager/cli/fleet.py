"""`cpumanager fleet fit` / `fleet capacity`: the node what-if over a directory of snapshots.

Each node's snapshot is restored and copies of the pod admitted in turn, as the node's
kubelet would (``fleet/node.py``), on a local process pool or with ``--dask`` on a Dask
cluster; placement and capacity follow from those answers (``fleet/placement.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from cpumanager.cli.options import STRUCTURED, WrappingGroup, emit_as, output_option, wrap_line

if TYPE_CHECKING:
    from cpumanager.fleet.placement import NodeAnswer, Rejection
    from cpumanager.fleet.runner import PodSource

__all__ = ["fleet"]

F = TypeVar("F", bound=Callable[..., Any])
DEFAULT_MAX_COPIES = 1000


def _common(func: F) -> F:
    decorators = [
        click.argument("pod_file", type=click.Path(path_type=Path, dir_okay=False)),
        click.option(
            "--snapshots",
            required=True,
            type=click.Path(path_type=Path, file_okay=False),
            help="Directory of node snapshot files (*.json, from 'node snapshot').",
        ),
        click.option(
            "--dask",
            default=None,
            metavar="ADDRESS",
            help="Map the per-node work on a Dask scheduler at ADDRESS ('local': a local "
            "cluster of --workers processes).",
        ),
        click.option(
            "--workers",
            type=click.IntRange(1, 256),
            default=2,
            show_default=True,
            help="Worker processes (local pool or --dask local).",
        ),
        click.option(
            "--time-limit",
            type=click.FloatRange(min=0),
            default=60.0,
            show_default=True,
            help="Seconds one snapshot may take before it is reported unusable (0: none; "
            "not applied on Dask workers).",
        ),
        click.option(
            "--all",
            "show_all",
            is_flag=True,
            help="List every node and every replica (as -o wide); default: a summary.",
        ),
    ]
    for decorator in reversed(decorators):
        func = decorator(func)
    return func


def _pod_source(path: Path) -> PodSource:
    """The POD.yaml text, read as every manifest is (bounded, UTF-8 checked)."""
    from cpumanager.adapters._text import read_utf8_text
    from cpumanager.fleet.runner import PodSource

    text = read_utf8_text(path, what="manifest file", utf8_remedy="save it as UTF-8 YAML or JSON")
    return PodSource(text, str(path))


@contextmanager
def _progress(total: int) -> Iterator[Callable[[int, int], None] | None]:
    """A rich progress bar on a terminal (stderr), nothing otherwise."""
    import sys

    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("nodes", total=total)
        yield lambda done, _total: bar.update(task, completed=done)


def _answers(
    pod_file: Path,
    snapshots: Path,
    limit: int,
    dask: str | None,
    workers: int,
    *,
    time_limit: float,
) -> Any:
    from cpumanager.fleet.runner import run_answers, snapshot_files

    source = _pod_source(pod_file)
    pod = source.pod()
    files = snapshot_files(snapshots)
    with _progress(len(files)) as tick:
        return pod, run_answers(
            files, source, limit, workers=workers, dask=dask, progress=tick, time_limit=time_limit
        )


def _clean(text: str) -> str:
    """Control characters from hostile snapshots escaped before they reach a terminal."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _rejections_json(groups: tuple[Rejection, ...]) -> list[dict[str, Any]]:
    return [
        {"reason": g.reason, "count": len(g.nodes), "nodes": list(g.nodes), "example": g.example}
        for g in groups
    ]


def _rejection_lines(groups: tuple[Rejection, ...], head: str, *, every: bool) -> list[str]:
    """Refusals grouped by reason: count, a few node names (all with ``every``), one
    example message; wrapped at 80 columns."""
    lines = [head] if groups else []
    for g in groups:
        names = g.nodes if every else g.nodes[:3]
        shown = ", ".join(_clean(n) for n in names)
        more = f" and {len(g.nodes) - len(names)} more" if len(g.nodes) > len(names) else ""
        count = f"{len(g.nodes)} node{'s' if len(g.nodes) != 1 else ''}"
        lines += wrap_line(f"{count} ({shown}{more})", prefix=f"  {_clean(g.reason)}: ",
                           indent="      ")  # fmt: skip
        lines += wrap_line(_clean(g.example), prefix="    e.g. ", indent="      ")
    return lines


def _by_node(placements: tuple[str | None, ...]) -> list[tuple[str | None, list[int]]]:
    """Each node (None: unschedulable) with the 1-based replicas it takes, most first."""
    found: dict[str | None, list[int]] = {}
    for index, node in enumerate(placements, 1):
        found.setdefault(node, []).append(index)
    return sorted(found.items(), key=lambda item: (item[0] is None, -len(item[1]), item[1][0]))


def _ranges(numbers: list[int]) -> str:
    """``1-6,9,11-12``."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and runs[-1][1] == n - 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


_TOP = 10  # nodes named in a summary


@click.group("fleet", cls=WrappingGroup)
def fleet() -> None:
    """What-if over many nodes' snapshots: placement and capacity, exactly as the kubelets."""


@fleet.command("fit")
@_common
@output_option
@click.option(
    "--replicas", type=click.IntRange(1, 100_000), default=1, show_default=True,
    help="Copies to place one after another.",
)  # fmt: skip
@click.pass_context
def fit(
    ctx: click.Context,
    *,
    pod_file: Path,
    snapshots: Path,
    dask: str | None,
    workers: int,
    time_limit: float,
    output: str,
    show_all: bool,
    replicas: int,
) -> None:
    """POD.yaml: where would each replica go, and which nodes reject it and why?

    The table says how many replicas each node takes (the top nodes; -o wide or --all:
    every replica in order). Exit 0 when every replica is placed, 1 otherwise.
    """
    from cpumanager.fleet.placement import place

    pod, answers = _answers(pod_file, snapshots, replicas, dask, workers, time_limit=time_limit)
    result = place(answers, replicas)
    if output in STRUCTURED:
        emit_as(
            output,
            {
                "pod": pod.display_name,
                "replicas": replicas,
                "placed": result.placed,
                "placements": list(result.placements),
                "perNode": result.per_node,
                "rejections": _rejections_json(result.rejections),
            },
        )
    else:
        every = output == "wide" or show_all
        nodes = len({n for n in result.placements if n is not None})
        lines = [
            f"{pod.display_name}: {result.placed} of {replicas} replica(s) placed on "
            f"{nodes} node{'s' if nodes != 1 else ''}"
        ]
        if every:
            for i, node in enumerate(result.placements, 1):
                where = _clean(node) if node is not None else "unschedulable (no node admits it)"
                lines.append(f"  replica {i}: {where}")
        else:
            groups = _by_node(result.placements)
            placed = [g for g in groups if g[0] is not None]
            for node, replicas_of in placed[:_TOP] + [g for g in groups if g[0] is None]:
                where = _clean(node) if node is not None else "unschedulable"
                lines += wrap_line(
                    f"{len(replicas_of)} (replica{'s' if len(replicas_of) > 1 else ''} "
                    f"{_ranges(replicas_of)})",
                    prefix=f"  {where}: ",
                    indent="    ",
                )
            if len(placed) > _TOP:
                lines.append(f"  and {len(placed) - _TOP} more nodes (-o wide or --all)")
        lines += _rejection_lines(
            result.rejections, "nodes that refuse the next copy:", every=every
        )
        click.echo("\n".join(lines))
    if result.placed < replicas:
        ctx.exit(1)


@fleet.command("capacity")
@_common
@output_option("table", "wide", "json", "yaml", "html")
@click.option(
    "--max-copies", type=click.IntRange(1, 100_000), default=DEFAULT_MAX_COPIES,
    show_default=True, help="Stop counting a node at this many copies.",
)  # fmt: skip
def capacity(
    *,
    pod_file: Path,
    snapshots: Path,
    dask: str | None,
    workers: int,
    time_limit: float,
    output: str,
    show_all: bool,
    max_copies: int,
) -> None:
    """POD.yaml: how many more copies can each node, and the fleet, take?

    The table is a summary (totals, the top nodes, refusals grouped by reason); -o wide or
    --all lists every node; -o html writes a self-contained heat map page to stdout."""
    from cpumanager.fleet.placement import capacity as fleet_capacity
    from cpumanager.fleet.runner import snapshot_files

    pod, answers = _answers(pod_file, snapshots, max_copies, dask, workers, time_limit=time_limit)
    result = fleet_capacity(answers)
    answers_by_node: dict[str, NodeAnswer] = {a.node: a for a in answers}
    if output in STRUCTURED:
        emit_as(
            output,
            {
                "pod": pod.display_name,
                "total": result.total,
                "atLeast": bool(result.capped),
                "perNode": result.per_node,
                "capped": list(result.capped),
                "limits": _rejections_json(result.limits),
            },
        )
        return
    if output == "html":
        from cpumanager.cli.html.fleet_page import fleet_page, free_per_numa

        frees = free_per_numa(snapshot_files(snapshots))
        click.echo(fleet_page(pod.display_name, result, answers_by_node, frees), nl=False)
        return
    every = output == "wide" or show_all
    floor = "at least " if result.capped else ""
    unusable = sum(1 for a in answers if a.error)
    taking = sum(1 for count in result.per_node.values() if count)
    lines = [
        f"{pod.display_name}: the fleet takes {floor}{result.total} more copies",
    ]
    full = len(answers) - taking - unusable
    lines += wrap_line(
        f"nodes: {len(answers)}; taking a copy: {taking}; full: {full}; unusable snapshots: "
        f"{unusable}; stopped at --max-copies {max_copies}: {len(result.capped)}",
        prefix="  ",
        indent="    ",
    )
    ranked = sorted(result.per_node.items(), key=lambda item: (-item[1], item[0]))
    shown = ranked if every else [item for item in ranked if item[1]][:_TOP]
    if shown:
        lines.append("every node:" if every else f"top nodes (of {taking} taking a copy):")
    for node, count in shown:
        answer = answers_by_node[node]
        note = f" (stopped at --max-copies {max_copies})" if answer.capped else ""
        if answer.error:
            note = " (snapshot unusable)"
        lines += wrap_line(f"{count}{note}", prefix=f"  {_clean(node)}: ", indent="    ")
    lines += _rejection_lines(result.limits, "what stops each node:", every=every)
    if not every and len(ranked) > len(shown):
        lines.append("every node: -o wide (or --all)")
    click.echo("\n".join(lines))
