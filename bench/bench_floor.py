"""What the rows issue 26 left open cost before any of our logic runs, beside half the Go time.

Issue 26 asks for every codec row and the 16-NUMA explicit-list merge at twice the speed of
the kubelet's Go code. This script measures, for each of those rows, the parts no CPython
implementation with the project's data model can skip, all of them C-level calls:

* **merge, 16 NUMA nodes, 65,519 hints**: one read of every hint's mask (``map`` with an
  ``attrgetter`` over the tuple), which any merge of an explicit list needs;
* **decode rows**: the C JSON scanner over the file (orjson), FNV-1a (C) over the go-spew text
  the checksum is computed on, and building the objects the read returns (the frozen model
  instances, from values already extracted: no parsing, no checks);
* **encode rows**: FNV-1a over the go-spew text, then our fastest builders of the go-spew and
  the JSON text (f-strings over the model; not a floor, shown for scale).

It prints each part, their sum and Go's fastest call halved (``kubelet_figures.json``,
``issue26_side_by_side_us``, measured by ``bench_kubelet_side.py``): where the sum of the
unavoidable parts is already above half of Go's time, no Python-level work on top can reach
twice the kubelet's speed.

    python bench/bench_floor.py
"""

from __future__ import annotations

import json
from collections.abc import Callable
from operator import attrgetter
from typing import Any

import orjson
from bench_checkpoint import (
    _encode_devices,
    _encode_memory,
    make_devices,
    make_memory,
    make_state,
)
from kubelet import FIGURES_PATH, call_us, load_note

from cpumanager.checkpoint.cpu import codec
from cpumanager.checkpoint.cpu.checksum import render
from cpumanager.checkpoint.device import codec_fast as device_fast
from cpumanager.checkpoint.device import model as device_model
from cpumanager.checkpoint.go.fnv import fnv1a_32
from cpumanager.checkpoint.memory import codec_fast_write as memory_fast
from cpumanager.checkpoint.memory import model as memory_model
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.hints.cpu_hints import generate_cpu_hints
from cpumanager.presets import synthetic


def _us(work: Callable[[], object]) -> float:
    return call_us(work)[0]


def _go(rows: dict[str, Any], name: str) -> float:
    return float(rows[name]["best"])


def _line(name: str, budget: float, parts: dict[str, float], floor: float) -> str:
    shown = "  ".join(f"{label} {value:.1f}" for label, value in parts.items())
    verdict = "floor above budget" if floor > budget else "floor within budget"
    return f"{name:<34} {budget:>9.1f}  {shown}  -> {floor:.1f} us: {verdict}"


def _memory_builder(checkpoint: memory_model.MemoryManagerCheckpoint) -> Callable[[], object]:
    machine = checkpoint.machine_state or {}
    entries = checkpoint.entries or {}
    tables = [
        (t.total, t.system_reserved, t.allocatable, t.reserved, t.free)
        for node in machine.values()
        if node is not None
        for t in (node.memory_map or {}).values()
        if t is not None
    ]
    nodes = [(n.number_of_assignments, n.cells) for n in machine.values() if n is not None]
    blocks = [
        (b.numa_affinity, b.type, b.size)
        for containers in entries.values()
        if containers
        for found in containers.values()
        if found
        for b in found
    ]
    table, node, block = memory_model.MemoryTable, memory_model.NUMANodeState, memory_model.Block

    def build() -> object:
        return (
            [table(*values) for values in tables],
            [node(count, None, cells) for count, cells in nodes],
            [block(*values) for values in blocks],
        )

    return build


def _device_builder(checkpoint: device_model.DeviceManagerCheckpoint) -> Callable[[], object]:
    rows = [
        (e.pod_uid, e.container_name, e.resource_name, e.device_ids, e.alloc_resp)
        for e in checkpoint.data.pod_device_entries or ()
    ]
    entry = device_model.PodDevicesEntry

    def build() -> object:
        return [entry(*values) for values in rows]

    return build


def _decode_row(
    go: dict[str, Any],
    row: str,
    *,
    label: str,
    size: int,
    data: bytes,
    spew: str,
    build: Callable[[], object],
) -> float:
    """Print a decode row's unavoidable parts (scan, FNV of the go-spew text, the returned
    objects); returns the FNV time (the encode row uses it too)."""
    parse = _us(lambda: orjson.loads(data))
    text = spew.encode()
    fnv = _us(lambda: fnv1a_32(text))
    objects = _us(build)
    budget = _go(go, f"{row} decode {size}") / 2
    parts = {"parse": parse, "fnv": fnv, "objects": objects}
    print(_line(f"{label} decode {size}", budget, parts, parse + fnv + objects))
    return fnv


def main() -> None:
    figures = json.loads(FIGURES_PATH.read_text())
    go = figures["issue26_side_by_side_us"]["rows"]
    print(f"at start: {load_note()}")
    print(f"{'row':<34} {'Go/2 us':>9}  parts (us)")

    topo = synthetic(sockets=2, numa_per_socket=8, cores_per_numa=8, threads=2)
    available = CPUSet(cpu for cpu in topo.all_cpus if cpu % 7 not in (0, 3))
    hints = generate_cpu_hints(topo, available=available, reusable=CPUSet(), count=16)
    masks = attrgetter("mask._bits")
    read = _us(lambda: list(map(masks, hints)))
    for policy in ("best-effort", "restricted"):
        name = f"merge 16 NUMA frag n=16 CPU list, {policy}"
        budget = _go(go, name) / 2
        print(_line(f"merge 16 NUMA ({len(hints)} hints)", budget, {"read masks": read}, read))

    for size in (10, 100, 1000):
        checkpoint = make_memory(size)
        spew = memory_fast.spew_memory(checkpoint) or ""
        fnv = _decode_row(go, "memory_manager_state", label="memory", size=size,
                          data=_encode_memory(checkpoint), spew=spew,
                          build=_memory_builder(checkpoint))  # fmt: skip
        spew_text = _us(lambda c=checkpoint: memory_fast.spew_memory(c))
        json_text = _us(lambda c=checkpoint: memory_fast.marshal_memory(c))
        budget = _go(go, f"memory_manager_state encode {size}") / 2
        parts = {"fnv": fnv, "spew text": spew_text, "json text": json_text}
        print(_line(f"memory encode {size}", budget, parts, fnv))

    for size in (10, 100, 1000):
        state = make_state(size)
        data = codec.encode_v2(state)
        assigned = [cpus for pod in state.assignments.values() for cpus in pod.values()]
        bits = [cpus.bits for cpus in [state.default_cpuset, *assigned]]
        parse = _us(lambda d=data: orjson.loads(d))
        sets = _us(lambda b=bits: list(map(CPUSet.from_bits, b)))
        spewed = render(codec.decode_as(data, "v2", source="bench")).encode()
        fnv = _us(lambda s=spewed: fnv1a_32(s))
        budget = _go(go, f"cpu_manager_state V2 decode {size}") / 2
        parts = {"parse": parse, "fnv": fnv, "CPU sets": sets}
        print(_line(f"cpu V2 decode {size}", budget, parts, parse + fnv + sets))
        texts = _us(lambda a=assigned: list(map(str, a)))
        budget = _go(go, f"cpu_manager_state V2 encode {size}") / 2
        parts = {"fnv": fnv, "CPU lists as text": texts}
        print(_line(f"cpu V2 encode {size}", budget, parts, fnv + texts))

    for size in (10, 100):
        checkpoint = make_devices(size)
        spew = device_fast.spew_device(checkpoint) or ""
        _decode_row(go, "device checkpoint", label="device", size=size,
                    data=_encode_devices(checkpoint), spew=spew,
                    build=_device_builder(checkpoint))  # fmt: skip
    print(f"at end: {load_note()}")


if __name__ == "__main__":
    main()
