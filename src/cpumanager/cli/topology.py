"""`cpumanager topology`: show a machine's CPU topology (this host, a sysfs copy, a preset, a file).

Human output is a rich picture: sockets -> NUMA nodes -> L3 groups -> cores -> threads, the
memory of each node, memory-only nodes, the distance matrix and any discovery warnings.
``-o json`` prints the machine file format (``formats/machine_format.py``) as one compact object,
``-o yaml`` the same as YAML; ``--save FILE`` writes it to a file (YAML for .yaml/.yml).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from cpumanager.cli.options import (
    emit_json,
    load_topology,
    machine_options,
    output_option,
    wrap_line,
)

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

    from cpumanager.core.topology import CPUTopology

__all__ = ["render_topology", "topology"]

_MAX_MATRIX = 16  # nodes; past this the distance matrix is summarised (full in -o json)


def _bytes(value: int | None) -> str:
    if value is None:
        return "memory unknown"
    size = float(value)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            text = f"{size:.1f}".removesuffix(".0")
            return f"{text} {unit}"
        size /= 1024
    raise AssertionError  # pragma: no cover - the loop always returns


def _cores_line(topology: CPUTopology, cpus: object) -> str:
    """``core id: threads`` for every core in ``cpus``, e.g. ``0:[0,64] 1:[1,65]``."""
    from cpumanager.core.cpuset import CPUSet

    assert isinstance(cpus, CPUSet)
    parts = []
    for core in topology.cores_of(cpus):
        threads = topology.cpus_in_cores([core]) & cpus
        parts.append(f"{core}:[{threads}]")
    return " ".join(parts)


def _tree(topology: CPUTopology) -> RenderableType:
    from rich.markup import escape
    from rich.tree import Tree

    smt = {len(topology.siblings(cpu)) for cpu in topology.all_cpus}
    title = (
        f"[bold]{escape(topology.name or 'machine')}[/]: {len(topology.all_cpus)} CPUs, "
        f"{len(topology.core_ids())} cores, {len(topology.socket_ids())} sockets, "
        f"{len(topology.numa_ids())} NUMA nodes ({len(topology.cpu_numa_ids())} with CPUs), "
        f"{len(topology.l3_ids())} L3 groups, SMT {'/'.join(str(n) for n in sorted(smt))}"
    )
    root = Tree(title)
    for socket in topology.socket_ids():
        socket_cpus = topology.cpus_in_sockets([socket])
        branch = root.add(f"[bold cyan]socket {socket}[/]  CPUs {socket_cpus}")
        for node in topology.numa_of(socket_cpus):
            node_cpus = socket_cpus & topology.cpus_in_numa_nodes([node])
            memory = _bytes(topology.numa_node(node).memory_bytes)
            numa_branch = branch.add(f"[green]NUMA node {node}[/]  CPUs {node_cpus}  ({memory})")
            for l3 in topology.l3_of(node_cpus):
                l3_cpus = node_cpus & topology.cpus_in_l3([l3])
                spans = topology.numa_of(topology.cpus_in_l3([l3]))
                note = f"  (spans NUMA {', '.join(map(str, spans))})" if len(spans) > 1 else ""
                l3_branch = numa_branch.add(f"[magenta]L3 {l3}[/]  CPUs {l3_cpus}{note}")
                l3_branch.add(escape(f"cores id:[threads] {_cores_line(topology, l3_cpus)}"))
    cpuless = [n for n in topology.numa_ids() if n not in topology.cpu_numa_ids()]
    if cpuless:
        from cpumanager.core.cpuset import CPUSet

        memory_only = root.add("[bold yellow]memory-only NUMA nodes[/] (no CPUs)")
        by_memory: dict[int | None, list[int]] = {}
        for node in cpuless:
            by_memory.setdefault(topology.numa_node(node).memory_bytes, []).append(node)
        for node_memory, nodes in by_memory.items():
            label = "node" if len(nodes) == 1 else "nodes"
            each = "" if len(nodes) == 1 else " each"
            memory_only.add(f"NUMA {label} {CPUSet(nodes)}  ({_bytes(node_memory)}{each})")
    return root


def _distances(topology: CPUTopology) -> RenderableType | None:
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    ids = topology.numa_ids()
    if not any(node.distances for node in topology.numa_nodes):
        return None
    if len(ids) > _MAX_MATRIX:
        values = sorted({d for node in topology.numa_nodes for d in node.distances.values()})
        shown = ", ".join(map(str, values[:12])) + (", ..." if len(values) > 12 else "")
        return (
            f"NUMA distances: {len(ids)}x{len(ids)} matrix, values {shown} "
            "(the full matrix is in -o json)"
        )
    table = Table(show_edge=False)
    table.add_column("node", justify="right", style="bold")
    for node in ids:
        table.add_column(str(node), justify="right")
    for a in ids:
        table.add_row(
            str(a), *("-" if (d := topology.distance(a, b)) is None else str(d) for b in ids)
        )
    return Group(Text("NUMA distances"), table)


def render_topology(topology: CPUTopology, console: Console) -> None:
    """Print the human picture of ``topology`` on ``console``."""
    from rich.markup import escape

    from cpumanager.formats.machine_format import topology_to_dict

    console.print(_tree(topology))
    matrix = _distances(topology)
    if matrix is not None:
        console.print(matrix)
    counters = topology_to_dict(topology).get("counters")
    if counters:
        text = ", ".join(f"{key}={value}" for key, value in counters.items())
        console.print(f"declared counters (used by the kubelet's algorithms): {text}")
    for warning in topology.warnings:
        console.print(f"[yellow]warning:[/] {escape(warning)}", highlight=False)


def _name_line(name: str, aliases: tuple[str, ...] | list[str]) -> list[str]:
    """A preset's name and aliases; the aliases on the next line when both do not fit."""
    line = f"  {name}  ({', '.join(aliases)})"
    if len(line) <= 80:
        return [line]
    return [f"  {name}", *wrap_line(f"({', '.join(aliases)})", prefix="    ", indent="    ")]


def _list_presets(output: str) -> None:
    from cpumanager.presets import list_presets

    presets = list_presets()
    if output == "json":
        emit_json(
            [
                {"name": p.name, "aliases": list(p.aliases), "kind": p.kind, "summary": p.summary}
                for p in presets
            ]
        )
        return
    if output == "yaml":
        import yaml

        rows = [{"name": p.name, "aliases": list(p.aliases), "summary": p.summary} for p in presets]
        click.echo(yaml.safe_dump(rows, sort_keys=False, width=100), nl=False)
        return
    lines = ["kubelet test machines (declared counters kept verbatim):"]
    for p in presets:
        if p.kind == "kubelet":
            lines += _name_line(p.name, p.aliases)
            lines += wrap_line(p.summary, prefix="      ", indent="      ")
    lines.append("generated machines:")
    for p in presets:
        if p.kind != "kubelet":
            lines += _name_line(p.name, p.aliases)
            lines += wrap_line(p.summary, prefix="      ", indent="      ")
    lines.append("shapes: <S>s<N>n<C>c<T>t[<L>l]")
    lines.append("  (sockets, NUMA/socket, cores/NUMA, threads, L3/NUMA)")
    lines.append("  e.g. --machine 2s4n16c2t2l")
    click.echo("\n".join(lines))


@click.command()
@machine_options
@output_option
@click.option(
    "--save",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    metavar="FILE",
    help="Also write the machine file to FILE (YAML for .yaml/.yml, JSON otherwise).",
)
@click.option("--list", "list_only", is_flag=True, help="List the preset machine names.")
def topology(
    sysfs: Path | None, machine: str | None, output: str, save: Path | None, list_only: bool
) -> None:
    """Show the machine's CPU topology: sockets, NUMA nodes, L3 groups, cores, threads.

    Without options, reads this host's sysfs. --machine takes a preset name, a shape
    (2s4n16c2t) or a machine file; --sysfs reads a copy of another machine's sysfs.
    """
    if list_only:
        _list_presets(output.lower())
        return
    topo = load_topology(sysfs=sysfs, machine=machine)
    if save is not None:
        from cpumanager.adapters.machine_file import write_machine_file

        write_machine_file(topo, save)
        click.echo(f"cpumanager: saved machine file {save}", err=True)
    fmt = output.lower()
    if fmt == "json":
        from cpumanager.formats.machine_format import topology_to_dict

        emit_json(topology_to_dict(topo))
    elif fmt == "yaml":
        from cpumanager.adapters.machine_file import dump_machine

        click.echo(dump_machine(topo, yaml_format=True), nl=False)
    else:
        from rich.console import Console

        render_topology(topo, Console())
