"""``fleet capacity -o html``: the fleet as a heat map.

One square per node, coloured by how many more copies it takes (white: none, deep blue:
the most of any node; grey: unusable snapshot), hover for the node and its count; then a
table with a row per node (most copies first): its copies and, per NUMA node, the CPUs free
now (the shared pool less the reserved CPUs, as the checkpoint says) as a cell coloured
from red (none free) to green (all free). Self-contained: inline CSS, no script.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from cpumanager.cli.html.common import esc, page

if TYPE_CHECKING:
    from cpumanager.fleet.placement import Capacity, NodeAnswer

__all__ = ["copies_colour", "fleet_page", "free_colour", "free_per_numa"]

UNUSABLE = "#9e9e9e"

_STYLE = """
body{font-family:sans-serif;margin:16px;color:#222;background:#fff}
h1{font-size:20px;margin:0 0 4px} .summary{font-size:13px;margin-bottom:10px}
.map{display:flex;flex-wrap:wrap;gap:2px;max-width:1150px;margin-bottom:14px}
.sq{width:16px;height:16px;border:1px solid #ccc;box-sizing:border-box}
table{border-collapse:collapse;font-size:12px} th,td{border:1px solid #ccc;padding:2px 6px}
td.n{text-align:right} .legend{font-size:12px;margin:6px 0 12px}
.legend span{display:inline-block;width:14px;height:14px;vertical-align:middle;margin:0 4px}
"""

# (free CPUs, CPUs) per NUMA node, by NUMA id
Frees = dict[int, tuple[int, int]]


def free_per_numa(files: Sequence[Path]) -> dict[str, Frees]:
    """Node name -> its free CPUs per NUMA node now; a snapshot that cannot be read is left
    out (the page shows it as unusable)."""
    from cpumanager.adapters.node_collect import load_snapshot
    from cpumanager.errors import CpuManagerError

    found: dict[str, Frees] = {}
    for path in files:
        try:
            snapshot = load_snapshot(path)
            found[snapshot.node_name or path.name] = _frees(snapshot)
        except CpuManagerError:
            continue
    return found


def _frees(snapshot: object) -> Frees:
    from cpumanager.core.cpuset import CPUSet
    from cpumanager.formats.kubelet_config import KubeletConfig
    from cpumanager.nodeanswers.degraded import raw_cpu_state
    from cpumanager.nodeview.snapshot import NodeSnapshot

    assert isinstance(snapshot, NodeSnapshot)
    topology = snapshot.topology()
    try:
        config = snapshot.kubelet_config()
    except Exception:
        config = KubeletConfig()
    _policy, default, _held = raw_cpu_state(snapshot)
    reserved = config.reserved_cpus or CPUSet()
    if config.cpu_manager_policy != "static":
        pool = topology.all_cpus
    else:
        pool = (default if default is not None else topology.all_cpus) - reserved
    frees: Frees = {}
    for node in topology.numa_ids():
        cpus = topology.cpus_in_numa_nodes([node])
        if cpus:
            frees[node] = (len(pool & cpus), len(cpus))
    return frees


def _mix(low: tuple[int, int, int], high: tuple[int, int, int], share: float) -> str:
    share = min(1.0, max(0.0, share))
    rgb = [round(a + (b - a) * share) for a, b in zip(low, high, strict=True)]
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def copies_colour(copies: int, most: int) -> str:
    """White for none, deepening blue up to ``most``."""
    return _mix((255, 255, 255), (8, 48, 107), copies / most if most else 0.0)


def free_colour(free: int, total: int) -> str:
    """Red when nothing is free, through yellow, to green when everything is."""
    share = free / total if total else 0.0
    if share < 0.5:
        return _mix((215, 48, 39), (254, 224, 139), share * 2)
    return _mix((254, 224, 139), (26, 152, 80), (share - 0.5) * 2)


def fleet_page(
    pod: str,
    result: Capacity,
    answers: Mapping[str, NodeAnswer],
    frees: Mapping[str, Frees],
) -> str:
    """The heat map page of ``fleet capacity``'s answer."""
    ranked = sorted(result.per_node.items(), key=lambda item: (-item[1], item[0]))
    most = max((count for _, count in ranked), default=0)
    floor = "at least " if result.capped else ""
    parts = [
        f"<h1>{esc(pod)}: the fleet takes {floor}{result.total} more copies</h1>",
        f'<div class="summary">{len(ranked)} nodes; the most on one node: {most}</div>',
        f'<div class="legend">copies: 0<span style="background:{copies_colour(0, 1)};'
        f'border:1px solid #ccc"></span><span style="background:{copies_colour(1, 1)}">'
        f'</span>{most} &nbsp; free CPUs: none<span style="background:{free_colour(0, 1)}">'
        f'</span><span style="background:{free_colour(1, 1)}"></span>all &nbsp; unusable'
        f'<span style="background:{UNUSABLE}"></span></div>',
        '<div class="map">',
    ]
    for node, count in ranked:
        answer = answers.get(node)
        unusable = answer is not None and bool(answer.error)
        colour = UNUSABLE if unusable else copies_colour(count, most)
        title = f"{node}: unusable snapshot" if unusable else f"{node}: {count} copies"
        parts.append(f'<div class="sq" style="background:{colour}" title="{esc(title)}"></div>')
    parts.append("</div>")
    numa_ids = sorted({n for per in frees.values() for n in per})
    head = "".join(f"<th>NUMA {n} free</th>" for n in numa_ids)
    parts.append(f"<table><tr><th>node</th><th>copies</th>{head}</tr>")
    for node, count in ranked:
        cells = []
        for n in numa_ids:
            free, total = frees.get(node, {}).get(n, (0, 0))
            if not total:
                cells.append("<td></td>")
                continue
            cells.append(
                f'<td class="n" style="background:{free_colour(free, total)}" '
                f'title="{esc(node)} NUMA {n}: {free} of {total} CPUs free">{free}/{total}</td>'
            )
        ink = "#fff" if most and count * 2 > most else "#000"
        style = f"background:{copies_colour(count, most)};color:{ink}"
        parts.append(
            f'<tr><td>{esc(node)}</td><td class="n" style="{style}">{count}</td>'
            f"{''.join(cells)}</tr>"
        )
    parts.append("</table>")
    return page(f"fleet capacity: {pod}", _STYLE, "\n".join(parts))
