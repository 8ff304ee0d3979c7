"""``node show -o html``: the node as boxes, sockets → NUMA nodes → cores → CPUs.

Each CPU is a box coloured by who holds it: a container's exclusive CPUs in that holder's
colour (``common.PALETTE``, in order of first appearance), the shared pool light green, the
kubelet's reserved CPUs dark grey and marked ``R``. Hovering a CPU names its holder (the
``title`` attribute: pod and container). A legend lists every holder with its CPUs; a
degraded answer (the kubelet would not start) shows the refusal on top.
"""

from __future__ import annotations

from typing import Any

from cpumanager.cli.html.common import RESERVED, SHARED, esc, holder_colour, page
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.topology import CPUTopology

__all__ = ["cpu_holders", "node_page"]

_STYLE = """
body{font-family:sans-serif;margin:16px;color:#222;background:#fff}
h1{font-size:20px;margin:0 0 4px} .policy{font-size:13px;margin-bottom:12px}
.banner{border:3px solid #b00;background:#fee;padding:8px;margin-bottom:12px;font-size:13px}
.socket{border:2px solid #333;border-radius:6px;padding:8px;margin:0 0 12px}
.socket>h2{font-size:15px;margin:0 0 6px}
.numa{display:inline-block;vertical-align:top;border:1px dashed #666;border-radius:4px;
 padding:6px;margin:0 8px 8px 0}
.numa>h3{font-size:13px;margin:0 0 4px}
.core{display:inline-block;border:1px solid #999;border-radius:3px;padding:2px;margin:2px}
.cpu{display:inline-block;width:34px;height:34px;margin:1px;border-radius:2px;
 font-size:11px;line-height:34px;text-align:center;color:#fff}
.cpu.shared{background:#d9ead3;color:#333} .cpu.idle{background:#fff;color:#999;
 border:1px solid #ccc;width:32px;height:32px;line-height:32px}
.cpu.reserved{background:#555555;outline:2px dotted #000}
.legend{font-size:13px} .legend span.swatch{display:inline-block;width:14px;height:14px;
 vertical-align:middle;margin-right:4px;border-radius:2px}
.legend li{list-style:none;margin:2px 0}
"""


def cpu_holders(picture: dict[str, Any]) -> dict[int, str]:
    """CPU id -> holder (``pod container``) of every exclusively held CPU."""
    held: dict[int, str] = {}
    for entry in picture["numaNodes"]:
        for item in entry["exclusive"]:
            for cpu in CPUSet.parse(item["cpus"]):
                held[cpu] = item["holder"]
    return held


def _colours(picture: dict[str, Any]) -> dict[str, str]:
    colours: dict[str, str] = {}
    for entry in picture["numaNodes"]:
        for item in entry["exclusive"]:
            if item["holder"] not in colours:
                colours[item["holder"]] = holder_colour(len(colours))
    return colours


def _cpu_box(
    cpu: int, held: dict[int, str], colours: dict[str, str], *, reserved: CPUSet, shared: CPUSet
) -> str:
    if cpu in held:
        who = held[cpu]
        return (
            f'<span class="cpu held" style="background:{colours[who]}" '
            f'title="CPU {cpu}: {esc(who)} (exclusive)">{cpu}</span>'
        )
    if cpu in reserved:
        return (
            f'<span class="cpu reserved" title="CPU {cpu}: reserved for the system">R{cpu}</span>'
        )
    if cpu in shared:
        return f'<span class="cpu shared" title="CPU {cpu}: shared pool">{cpu}</span>'
    return f'<span class="cpu idle" title="CPU {cpu}: not in the shared pool">{cpu}</span>'


def node_page(picture: dict[str, Any], topology: CPUTopology) -> str:
    """The page of ``node show``'s values (``picture``) on ``topology``."""
    held = cpu_holders(picture)
    colours = _colours(picture)
    reserved = CPUSet.parse(picture["reserved"])
    shared = CPUSet.parse(picture["shared"])
    parts = [f"<h1>node {esc(picture['node'])}</h1>"]
    parts.append(
        f'<div class="policy">CPU manager {esc(picture["cpuManagerPolicy"])}, topology manager '
        f"{esc(picture['topologyManagerPolicy'])}/{esc(picture['topologyManagerScope'])}, "
        f"memory manager {esc(picture['memoryManagerPolicy'])}</div>"
    )
    degraded = picture.get("degraded")
    if degraded:
        problems = "".join(f"<li>{esc(p)}</li>" for p in degraded["problems"])
        parts.append(
            '<div class="banner"><b>DEGRADED: the kubelet would not start on this node:</b> '
            f"{esc(degraded['refusal'])}<ul>{problems}</ul>Shown from {esc(degraded['source'])}."
            "</div>"
        )
    for socket in topology.socket_ids():
        in_socket = topology.cpus_in_sockets([socket])
        parts.append(f'<div class="socket"><h2>socket {socket}</h2>')
        for numa in topology.numa_nodes_in_sockets([socket]):
            cpus = topology.cpus_in_numa_nodes([numa]) & in_socket
            parts.append(f'<div class="numa"><h3>NUMA node {numa}</h3>')
            for core in topology.cores_of(cpus):
                boxes = "".join(
                    _cpu_box(cpu, held, colours, reserved=reserved, shared=shared)
                    for cpu in topology.cpus_in_cores([core]) & cpus
                )
                parts.append(f'<span class="core" title="core {core}">{boxes}</span>')
            parts.append("</div>")
        parts.append("</div>")
    legend = [
        f'<li><span class="swatch" style="background:{RESERVED}"></span>reserved '
        f"{esc(picture['reserved'] or '-')}</li>",
        f'<li><span class="swatch" style="background:{SHARED}"></span>shared pool '
        f"{esc(picture['shared'] or '-')}</li>",
    ]
    for who, colour in colours.items():
        cpus = CPUSet(cpu for cpu, holder in held.items() if holder == who)
        legend.append(
            f'<li><span class="swatch" style="background:{colour}"></span>{esc(who)}: CPUs '
            f"{cpus}</li>"
        )
    parts.append(f'<ul class="legend">{"".join(legend)}</ul>')
    return page(f"node {picture['node']}", _STYLE, "\n".join(parts))
