"""Named machines: the kubelet's test fixtures and realistic large shapes, built in pure code.

Three kinds of names are understood by :func:`get_preset`:

* the kubelet's fixture names (``topoDualSocketHT``) and their kebab-case aliases
  (``dual-socket-ht``), with the fixtures' declared counters kept verbatim (some are odd on
  purpose; the kubelet's algorithms read them as declared);
* realistic large machines generated from a compact description (AMD EPYC NPS4, Intel Xeon
  6900P SNC3, an 8-socket box, an ia64-style 64-node box, a GB200-like tray with 32 CPU-less
  GPU-memory nodes);
* shape strings ``<S>s<N>n<C>c<T>t[<L>l]`` (sockets, NUMA nodes per socket, cores per NUMA
  node, threads per core, L3 groups per NUMA node), e.g. ``2s4n16c2t2l``; ``/`` between the
  parts is allowed (``2s/4n/16c/2t``).

Generated machines number CPUs the way Linux does on x86 servers: the first thread of every
core in socket order, then the second threads in the same order, so a core's siblings are
``c`` and ``c + cores``. Core ids are the lowest thread id, L3 ids a dense index in CPU order.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType

from cpumanager.core.topology import CPUInfo, CPUTopology, NUMANodeInfo
from cpumanager.errors import MachineError
from cpumanager.presets.kubelet_machines import KUBELET_MACHINES

__all__ = [
    "MAX_SHAPE_CPUS",
    "GIB",
    "Preset",
    "declared_topology",
    "get_preset",
    "is_preset",
    "list_presets",
    "parse_shape",
    "synthetic",
]

GIB = 1 << 30

DistanceFn = Callable[[int, int], int]


@dataclass(frozen=True, slots=True)
class Preset:
    """A named machine: its canonical name, other accepted names and a one-line summary."""

    name: str
    aliases: tuple[str, ...]
    summary: str
    kind: str  # "kubelet" (a kubelet test fixture) or "generated"


# --- decoding the kubelet fixtures ------------------------------------------------------

_RUN = re.compile(r"(\d+)(?:([+-]\d+)?\*(\d+))?")


def _decode_column(text: str) -> list[int]:
    values: list[int] = []
    for token in text.split():
        match = _RUN.fullmatch(token)
        if match is None:  # pragma: no cover - the data module is generated and fixed
            msg = f"bad run {token!r} in preset data"
            raise MachineError(msg)
        start, step, count = match.groups()
        if count is None:
            values.append(int(start))
            continue
        stride = int(step) if step else 0
        values.extend(int(start) + stride * i for i in range(int(count)))
    return values


def declared_topology(
    rows: Iterable[tuple[int, int, int, int, int]],
    counters: tuple[int, int, int, int, int],
    *,
    name: str,
) -> CPUTopology:
    """A topology from ``(cpu, core, socket, numa, l3)`` rows with its counters kept verbatim.

    The kubelet's test machines declare counters that need not match their CPU records, and
    its decisions read the declared ones, so they are not recomputed.
    """
    records = [
        CPUInfo(cpu=cpu, core=core, socket=socket, numa=numa, l3=l3)
        for cpu, core, socket, numa, l3 in rows
    ]
    num_cpus, num_cores, num_sockets, num_numa, num_uncore = counters
    return CPUTopology(
        records,
        num_cpus=num_cpus,
        num_cores=num_cores,
        num_sockets=num_sockets,
        num_numa_nodes=num_numa,
        num_uncore_caches=num_uncore,
        name=name,
    )


def _kubelet_machine(name: str) -> CPUTopology:
    _alias, _source, counters, columns = KUBELET_MACHINES[name]
    cores, sockets, numas, uncores = (_decode_column(col) for col in columns)
    rows = zip(range(len(cores)), cores, sockets, numas, uncores, strict=True)
    return declared_topology(rows, counters, name=name)


# --- the generic generator ----------------------------------------------------------------


def _default_distance(
    *, numa_per_socket: int, same_socket: int, remote: int
) -> Callable[[int, int], int]:
    def distance(a: int, b: int) -> int:
        if a == b:
            return 10
        if a // numa_per_socket == b // numa_per_socket:
            return same_socket
        return remote

    return distance


def _check_positive(**values: int) -> None:
    for key, value in values.items():
        if value < 1:
            msg = f"synthetic machine: {key} must be at least 1, got {value}"
            raise MachineError(msg)


def synthetic(
    *,
    sockets: int = 1,
    numa_per_socket: int = 1,
    cores_per_numa: int = 4,
    threads: int = 2,
    l3_per_numa: int = 1,
    l3_per_socket: bool = False,
    memory_per_numa_bytes: int | None = 64 * GIB,
    same_socket_distance: int = 12,
    remote_distance: int = 21,
    distance: DistanceFn | None = None,
    cpuless_memory_bytes: Sequence[int | None] = (),
    name: str = "",
) -> CPUTopology:
    """A regular machine: ``sockets`` x ``numa_per_socket`` x ``cores_per_numa`` x ``threads``.

    * ``l3_per_numa`` splits each node's cores into that many equal L3 groups (AMD CCDs);
      ``l3_per_socket=True`` makes one L3 group span the whole socket (Intel SNC).
    * Distances: 10 local, ``same_socket_distance`` within a socket, ``remote_distance``
      across sockets, unless a ``distance(a, b)`` function is given (it sees every node).
    * ``cpuless_memory_bytes`` appends one memory-only node (HBM, CXL, GPU memory) per item,
      with that much memory; their ids follow the CPU nodes.
    """
    _check_positive(
        sockets=sockets,
        numa_per_socket=numa_per_socket,
        cores_per_numa=cores_per_numa,
        threads=threads,
        l3_per_numa=l3_per_numa,
    )
    if cores_per_numa % l3_per_numa:
        msg = (
            f"synthetic machine: {cores_per_numa} cores per NUMA node cannot be split into "
            f"{l3_per_numa} equal L3 groups; choose a divisor"
        )
        raise MachineError(msg)
    numa_count = sockets * numa_per_socket
    total_cores = numa_count * cores_per_numa
    cores_per_l3 = cores_per_numa // l3_per_numa
    records = []
    for core_index in range(total_cores):
        numa = core_index // cores_per_numa
        socket = numa // numa_per_socket
        l3 = socket if l3_per_socket else core_index // cores_per_l3
        for thread in range(threads):
            cpu = thread * total_cores + core_index
            records.append(CPUInfo(cpu=cpu, core=core_index, socket=socket, numa=numa, l3=l3))
    dist = distance or _default_distance(
        numa_per_socket=numa_per_socket,
        same_socket=same_socket_distance,
        remote=remote_distance,
    )
    all_nodes = numa_count + len(cpuless_memory_bytes)
    memories = [memory_per_numa_bytes] * numa_count + list(cpuless_memory_bytes)
    nodes = [
        NUMANodeInfo(
            id=node,
            memory_bytes=memories[node],
            distances=MappingProxyType({other: dist(node, other) for other in range(all_nodes)}),
        )
        for node in range(all_nodes)
    ]
    label = name or f"{sockets}s{numa_per_socket}n{cores_per_numa}c{threads}t{l3_per_numa}l"
    return CPUTopology(records, numa_nodes=nodes, name=label)


# Every shape is built in memory: a typo such as 1s1n1000000c1t would cost gigabytes.
MAX_SHAPE_CPUS = 65536
_SHAPE = re.compile(r"(\d+)s/?(\d+)n/?(\d+)c/?(\d+)t(?:/?(\d+)l)?")


def parse_shape(text: str) -> CPUTopology | None:
    """The machine for a shape string like ``2s4n16c2t2l`` (None when ``text`` is no shape)."""
    match = _SHAPE.fullmatch(text.strip().lower())
    if match is None:
        return None
    sockets, numa, cores, threads, l3 = match.groups()
    total = 1
    for part in (sockets, numa, cores, threads):
        total *= int(part) if len(part) <= 6 else MAX_SHAPE_CPUS + 1
    if total > MAX_SHAPE_CPUS:
        msg = (
            f"shape {text.strip()[:60]!r} describes more than {MAX_SHAPE_CPUS} CPUs, the limit "
            "for shapes; describe bigger machines in a machine file"
        )
        raise MachineError(msg)
    return synthetic(
        sockets=int(sockets),
        numa_per_socket=int(numa),
        cores_per_numa=int(cores),
        threads=int(threads),
        l3_per_numa=int(l3) if l3 else 1,
        name=text.strip(),
    )


# --- realistic large machines -------------------------------------------------------------


def _epyc_nps4() -> CPUTopology:
    """2 x AMD EPYC 7763 (Milan, 64 cores) in NPS4: 8 NUMA nodes, 16 L3s of 8 cores, 256 CPUs.

    Each socket has 8 CCDs of one 8-core CCX (32 MiB L3 each); NPS4 puts two CCDs and two
    memory channels on each node. SLIT as the BIOS reports it: 10 / 12 / 32.
    """
    return synthetic(
        sockets=2,
        numa_per_socket=4,
        cores_per_numa=16,
        threads=2,
        l3_per_numa=2,
        memory_per_numa_bytes=128 * GIB,
        same_socket_distance=12,
        remote_distance=32,
        name="epyc-7763-2s-nps4",
    )


def _xeon_snc3() -> CPUTopology:
    """2 x Intel Xeon 6972P (Granite Rapids-AP, 96 cores, 3 compute dies) in SNC3.

    6 NUMA nodes of 32 cores, SMT2, 384 CPUs. Linux reports one L3 per package, so one L3
    group spans three NUMA nodes. SLIT: 10 / 12 / 21.
    """
    return synthetic(
        sockets=2,
        numa_per_socket=3,
        cores_per_numa=32,
        threads=2,
        l3_per_socket=True,
        memory_per_numa_bytes=256 * GIB,
        same_socket_distance=12,
        remote_distance=21,
        name="xeon-6972p-2s-snc3",
    )


def _eight_socket() -> CPUTopology:
    """8 x Intel Xeon Platinum 8380H (Cooper Lake, 28 cores), one node per socket, 448 CPUs.

    Sockets are joined as a cube of UPI links: one hop 21, two or more hops 31.
    """

    def cube(a: int, b: int) -> int:
        if a == b:
            return 10
        return 21 if (a ^ b).bit_count() == 1 else 31

    return synthetic(
        sockets=8,
        numa_per_socket=1,
        cores_per_numa=28,
        threads=2,
        memory_per_numa_bytes=384 * GIB,
        distance=cube,
        name="xeon-8380h-8s",
    )


def _ia64_64n() -> CPUTopology:
    """An SGI Altix-like ia64 box: 4 sockets (bricks) x 16 nodes x 4 single-thread cores.

    256 CPUs, 64 NUMA nodes with 4 GiB each. The distance grows with the router level that
    separates two nodes (the highest differing bit of their ids); crossing a socket costs most.
    """

    def routers(a: int, b: int) -> int:
        if a == b:
            return 10
        level = (a ^ b).bit_length()  # 1..6; levels 5-6 cross a socket (16 nodes each)
        return 10 + 3 * level if level <= 4 else 10 + 9 * level

    return synthetic(
        sockets=4,
        numa_per_socket=16,
        cores_per_numa=4,
        threads=1,
        memory_per_numa_bytes=4 * GIB,
        distance=routers,
        name="ia64-4s-64n",
    )


def _gb200_tray() -> CPUTopology:
    """A GB200 NVL72 compute tray: 2 Grace CPUs (72 Neoverse V2 cores each, no SMT) and 4 GPUs.

    Nodes 0-1 are the Grace CPUs with 480 GiB LPDDR5X each; nodes 2-33 are CPU-less GPU memory
    nodes, 8 per GPU (one per possible MIG partition; the first holds the GPU's 186 GiB of HBM,
    the others are empty until partitioned). GPUs 0-1 hang off Grace 0, GPUs 2-3 off Grace 1.
    SLIT: Grace to Grace 40, Grace to its own GPUs 80, to the other Grace's GPUs 120.
    """
    gpu_nodes = 32

    def owner(node: int) -> int:
        return node if node < 2 else (node - 2) // 16

    def slit(a: int, b: int) -> int:
        if a == b:
            return 10
        if a < 2 and b < 2:
            return 40
        return 80 if owner(a) == owner(b) else 120

    hbm = [186 * GIB if (n % 8) == 0 else 0 for n in range(gpu_nodes)]
    return synthetic(
        sockets=2,
        numa_per_socket=1,
        cores_per_numa=72,
        threads=1,
        memory_per_numa_bytes=480 * GIB,
        distance=slit,
        cpuless_memory_bytes=hbm,
        name="gb200-tray",
    )


_GENERATED: dict[str, tuple[tuple[str, ...], str, Callable[[], CPUTopology]]] = {
    "epyc-7763-2s-nps4": (
        ("amd-epyc-nps4", "epyc-nps4"),
        "2 x AMD EPYC 7763, NPS4: 8 NUMA nodes, 16 L3s, 128 cores, 256 CPUs",
        _epyc_nps4,
    ),
    "xeon-6972p-2s-snc3": (
        ("intel-xeon-6900p-snc3", "xeon-snc3"),
        "2 x Intel Xeon 6972P, SNC3: 6 NUMA nodes, L3 per socket, 192 cores, 384 CPUs",
        _xeon_snc3,
    ),
    "xeon-8380h-8s": (
        ("eight-socket", "8-socket"),
        "8 x Intel Xeon 8380H: 8 sockets/NUMA nodes, 224 cores, 448 CPUs, cube SLIT",
        _eight_socket,
    ),
    "ia64-4s-64n": (
        ("ia64-64-numa", "altix-64n"),
        "ia64-style: 4 sockets, 64 NUMA nodes of 4 cores, no SMT, 256 CPUs",
        _ia64_64n,
    ),
    "gb200-tray": (
        ("gb200", "grace-blackwell"),
        "GB200 tray: 2 Grace (72 cores, no SMT) + 32 CPU-less GPU memory nodes, 34 NUMA nodes",
        _gb200_tray,
    ),
}


# --- lookup ----------------------------------------------------------------------------------


@cache
def list_presets() -> tuple[Preset, ...]:
    """Every preset: the kubelet fixtures (in the kubelet's order), then the generated ones."""
    found = [
        Preset(
            name=name,
            aliases=(alias,),
            summary=(
                f"kubelet fixture ({source}): {len(_decode_column(columns[0]))} CPUs, "
                f"declared {counters[0]} CPUs / {counters[1]} cores / {counters[2]} sockets / "
                f"{counters[3]} NUMA / {counters[4]} uncore"
            ),
            kind="kubelet",
        )
        for name, (alias, source, counters, columns) in KUBELET_MACHINES.items()
    ]
    found += [
        Preset(name=name, aliases=aliases, summary=summary, kind="generated")
        for name, (aliases, summary, _build) in _GENERATED.items()
    ]
    return tuple(found)


@cache
def _names() -> dict[str, str]:
    table: dict[str, str] = {}
    for preset in list_presets():
        table[preset.name.lower()] = preset.name
        for alias in preset.aliases:
            table[alias.lower()] = preset.name
    return table


def is_preset(name: str) -> bool:
    """Whether ``name`` is a preset name, alias or shape string."""
    key = name.strip().lower()
    return key in _names() or _SHAPE.fullmatch(key) is not None


@cache
def _build(canonical: str) -> CPUTopology:
    if canonical in KUBELET_MACHINES:
        return _kubelet_machine(canonical)
    return _GENERATED[canonical][2]()


def get_preset(name: str) -> CPUTopology:
    """The named machine; an unknown name raises MachineError listing the names."""
    canonical = _names().get(name.strip().lower())
    if canonical is not None:
        return _build(canonical)
    shaped = parse_shape(name)
    if shaped is not None:
        return shaped
    choices = ", ".join(
        preset.aliases[0] if preset.kind == "kubelet" else preset.name for preset in list_presets()
    )
    msg = (
        f"unknown machine {name!r}; use a machine file path, a shape such as '2s4n16c2t', "
        f"or one of: {choices}"
    )
    raise MachineError(msg)
