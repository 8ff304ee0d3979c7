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

from cpumanager.cli.options import STRUCTURED, WrappingGroup, emit_as, output_option

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
        output_option,
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


def _rejection_lines(groups: tuple[Rejection, ...], head: str) -> list[str]:
    lines = [head] if groups else []
    for g in groups:
        shown = ", ".join(_clean(n) for n in g.nodes[:5])
        more = f" and {len(g.nodes) - 5} more" if len(g.nodes) > 5 else ""
        lines.append(f"  {_clean(g.reason)}: {len(g.nodes)} node(s) ({shown}{more})")
        lines.append(f"    e.g. {_clean(g.example)}")
    return lines


@click.group("fleet", cls=WrappingGroup)
def fleet() -> None:
    """What-if over many nodes' snapshots: placement and capacity, exactly as the kubelets."""


@fleet.command("fit")
@_common
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
    replicas: int,
) -> None:
    """POD.yaml: where would each replica go, and which nodes reject it and why?

    Exit 0 when every replica is placed, 1 otherwise.
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
        lines = [f"{pod.display_name}: {result.placed} of {replicas} replica(s) placed"]
        for i, node in enumerate(result.placements, 1):
            where = _clean(node) if node is not None else "unschedulable (no node admits it)"
            lines.append(f"  replica {i}: {where}")
        lines += _rejection_lines(result.rejections, "nodes that refuse the next copy:")
        click.echo("\n".join(lines))
    if result.placed < replicas:
        ctx.exit(1)


@fleet.command("capacity")
@_common
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
    max_copies: int,
) -> None:
    """POD.yaml: how many more copies can each node, and the fleet, take?"""
    from cpumanager.fleet.placement import capacity as fleet_capacity

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
    floor = "at least " if result.capped else ""
    lines = [f"{pod.display_name}: the fleet takes {floor}{result.total} more copies"]
    for node, count in result.per_node.items():
        answer = answers_by_node[node]
        note = f" (stopped at --max-copies {max_copies})" if answer.capped else ""
        if answer.error:
            note = " (snapshot unusable)"
        lines.append(f"  {_clean(node)}: {count}{note}")
    lines += _rejection_lines(result.limits, "what stops each node:")
    click.echo("\n".join(lines))
