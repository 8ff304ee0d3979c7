"""Issue 26's rows timed beside the kubelet's own Go code: same inputs, alternating rounds.

Rows: the explicit-list merge (16 NUMA nodes, fragmented, n = 16: the 65,519 CPU hints the
kubelet lists; 8 NUMA nodes, 2 providers x 255 hints, with and without preferred hints),
``cpu_manager_state`` V2 store (state in, bytes out: sets formatted, checksum, JSON) and
restore (bytes in, state out: V1 attempt, V2, checksum, sets parsed; our parsed-list cache
emptied before each call) at 10 / 100 / 1,000 containers, ``memory_manager_state`` encode +
checksum and decode + verify at 10 / 100 / 1,000 entries, and the device checkpoint's at
10 / 100 entries. No file I/O on either side.

The Go side is a timing harness built by hand outside this repository from the kubelet's
code (bench/README.md describes it): it reads the rows' inputs from a JSON file this script
writes (``spec``), times each row with the process CPU clock (fastest call, median beside
it) and writes its figures and answers as JSON. Ours are timed with the thread CPU clock
(``kubelet.call_us``): on a shared machine wall time mostly measures waiting for a core.

    python bench/bench_kubelet_side.py spec SPEC.json
    python bench/bench_kubelet_side.py run --harness BIN [--rounds 3] [--save]
    python bench/bench_kubelet_side.py run --go FIGURES.json [--go MORE.json ...]

``--harness`` alternates rounds: ours, then the harness, ``--rounds`` times; each side keeps
its fastest call over the rounds. ``--go`` reads figures the harness wrote earlier instead.
Answers are compared row by row (merged hint and admit; digests of the bytes written; the
restore's outcome). ``--save`` records the Go figures in ``kubelet_figures.json``.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_checkpoint import _encode_devices, _encode_memory, make_devices, make_memory, make_state
from kubelet import FIGURES_PATH, call_us, load_note

from cpumanager.checkpoint.cpu import codec
from cpumanager.checkpoint.cpu import codec_fast as fast
from cpumanager.checkpoint.cpu.restore import restore_state
from cpumanager.checkpoint.kinds import decode_any
from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.containermap import ContainerMap
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.hints.cpu_hints import generate_cpu_hints
from cpumanager.core.hints.hint import TopologyHint
from cpumanager.core.kept import KEEP
from cpumanager.core.merge.fast import merge_fast
from cpumanager.core.merge.options import NUMAInfo
from cpumanager.presets import synthetic

Row = dict[str, Any]


class Ours:
    """One of our rows: the work timed, and its answer in the harness's words."""

    def __init__(self, spec: Row, work: Callable[[], object], answer: Callable[[], str]) -> None:
        self.spec = spec
        self.work = work
        self.answer = answer


def _hint_json(hint: TopologyHint) -> dict[str, Any]:
    if hint.mask is None:
        return {"nil": True, "preferred": hint.preferred}
    return {"bits": list(hint.mask), "preferred": hint.preferred}


def _merge_row(
    name: str, policy: str, numa: NUMAInfo, lists: list[tuple[TopologyHint, ...]]
) -> Ours:
    providers = [{"r": hints} for hints in lists]

    def work() -> object:
        return merge_fast(policy, numa, providers)

    def answer() -> str:
        hint, admit = merge_fast(policy, numa, providers)
        ids = [] if hint.mask is None else list(hint.mask)
        return f"[{' '.join(map(str, ids))}] {str(hint.preferred).lower()} {str(admit).lower()}"

    spec = {
        "name": name,
        "kind": "merge",
        "policy": policy,
        "nodes": list(numa.nodes),
        "lists": [[_hint_json(h) for h in hints] for hints in lists],
    }
    return Ours(spec, work, answer)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _checkpoint_rows(kind: str, sizes: tuple[int, ...]) -> list[Ours]:
    rows: list[Ours] = []
    running = ContainerMap()
    for size in sizes:
        encode: Callable[[], bytes]
        decode: Callable[[], object]
        if kind == "cpu":
            state = make_state(size)
            data = codec.encode_v2(state)

            def encode(s: object = state) -> bytes:
                return codec.encode_v2(s)  # type: ignore[arg-type]

            def decode(d: bytes = data) -> object:
                fast.clear_caches()  # cold: the kubelet keeps no parsed CPU lists either
                return restore_state(
                    d, source="bench", configured_policy="static", container_map=running
                )
        else:
            value = make_memory(size) if kind == "memory" else make_devices(size)
            encoder = _encode_memory if kind == "memory" else _encode_devices
            data = encoder(value)

            def encode(v: object = value, f: Callable[[object], bytes] = encoder) -> bytes:
                return f(v)

            def decode(d: bytes = data) -> object:
                return decode_any(d)

        blob = base64.b64encode(data).decode()
        label = {"cpu": "cpu_manager_state V2", "memory": "memory_manager_state",
                 "device": "device checkpoint"}[kind]  # fmt: skip
        rows.append(
            Ours(
                {"name": f"{label} encode {size}", "kind": kind, "op": "encode", "blob": blob},
                encode,
                lambda e=encode: _digest(e()),
            )
        )
        rows.append(
            Ours(
                {"name": f"{label} decode {size}", "kind": kind, "op": "decode", "blob": blob},
                decode,
                lambda d=decode: "ok" if d() is not None else "none",
            )
        )
    return rows


def build_rows() -> list[Ours]:
    rows: list[Ours] = []
    topo = synthetic(sockets=2, numa_per_socket=8, cores_per_numa=8, threads=2)
    numa16 = NUMAInfo.of([n.id for n in topo.numa_nodes])
    available = CPUSet(cpu for cpu in topo.all_cpus if cpu % 7 not in (0, 3))
    cpu = generate_cpu_hints(topo, available=available, reusable=CPUSet(), count=16)
    rows += [
        _merge_row(f"merge 16 NUMA frag n=16 CPU list, {policy}", policy, numa16, [cpu])
        for policy in ("best-effort", "restricted")
    ]
    numa8 = NUMAInfo.of(list(range(8)))
    some = tuple(
        TopologyHint(NUMAMask.from_bits(bits), bits.bit_count() == 1) for bits in range(1, 256)
    )
    none = tuple(TopologyHint(NUMAMask.from_bits(bits), False) for bits in range(1, 256))
    rows.append(_merge_row("merge 8 NUMA 2 x 255 hints, best-effort", "best-effort", numa8,
                           [some, some]))  # fmt: skip
    rows.append(_merge_row("merge 8 NUMA 2 x 255 hints none preferred, restricted",
                           "restricted", numa8, [none, none]))  # fmt: skip
    rows += _checkpoint_rows("memory", (10, 100, 1000))
    rows += _checkpoint_rows("cpu", (10, 100, 1000))
    rows += _checkpoint_rows("device", (10, 100))
    return rows


def time_ours(rows: list[Ours]) -> dict[str, tuple[float, float, str]]:
    return {row.spec["name"]: (*call_us(row.work), row.answer()) for row in rows}


def run_harness(binary: str, spec_path: Path) -> dict[str, tuple[float, float, str]]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "go.json"
        subprocess.run([binary, str(spec_path), str(out)], check=True)
        return read_go(out)


def read_go(path: Path) -> dict[str, tuple[float, float, str]]:
    loaded = json.loads(path.read_text())
    return {r["name"]: (r["best_us"], r["median_us"], r["answer"]) for r in loaded["rows"]}


def _keep_best(
    kept: dict[str, tuple[float, float, str]], new: dict[str, tuple[float, float, str]]
) -> None:
    for name, value in new.items():
        if name not in kept or value[0] < kept[name][0]:
            kept[name] = value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    spec_cmd = sub.add_parser("spec", help="write the rows' inputs for the Go harness")
    spec_cmd.add_argument("path", type=Path)
    run_cmd = sub.add_parser("run", help="time our rows beside the harness's")
    run_cmd.add_argument("--harness", help="the harness binary: alternate rounds with it")
    run_cmd.add_argument("--go", type=Path, action="append", default=[], help="its JSON output")
    run_cmd.add_argument("--rounds", type=int, default=3)
    run_cmd.add_argument("--save", action="store_true", help="record the Go figures")
    args = parser.parse_args()
    KEEP.on = False  # every call does the work: no answers kept from an earlier call
    rows = build_rows()
    if args.command == "spec":
        args.path.write_text(json.dumps([row.spec for row in rows]))
        return
    if not args.harness and not args.go:
        parser.error("run needs --harness BIN or --go FIGURES.json")
    print(f"at start: {load_note()}")
    ours: dict[str, tuple[float, float, str]] = {}
    go: dict[str, tuple[float, float, str]] = {}
    for path in args.go:
        _keep_best(go, read_go(path))
    if args.harness:
        with tempfile.TemporaryDirectory() as tmp:
            spec_path = Path(tmp) / "spec.json"
            spec_path.write_text(json.dumps([row.spec for row in rows]))
            for _ in range(args.rounds):
                _keep_best(ours, time_ours(rows))
                _keep_best(go, run_harness(args.harness, spec_path))
    else:
        for _ in range(args.rounds):
            _keep_best(ours, time_ours(rows))
    print(f"{'row':<58} {'Go us':>10} {'(median)':>10} {'ours us':>10} {'(median)':>10} "
          f"{'ratio':>7}  answers")  # fmt: skip
    for row in rows:
        name = row.spec["name"]
        mine = ours[name]
        theirs = go.get(name)
        if theirs is None:
            print(f"{name:<58} {'-':>10} {'':>10} {mine[0]:>10.1f} {mine[1]:>10.1f}")
            continue
        same = "equal" if theirs[2] == mine[2] else f"DIFFER: Go {theirs[2]!r} ours {mine[2]!r}"
        print(
            f"{name:<58} {theirs[0]:>10.1f} {theirs[1]:>10.1f} {mine[0]:>10.1f} {mine[1]:>10.1f}"
            f" {theirs[0] / mine[0]:>7.2f}  {same}"
        )
    print(f"ratio = Go's fastest call / ours (>= 2: at least twice as fast); at end: {load_note()}")
    if args.save:
        figures = json.loads(FIGURES_PATH.read_text())
        figures["issue26_side_by_side_us"] = {
            "note": (
                "the kubelet's own Go code (v1.32.10) timed by a harness built outside the "
                "repository (bench/README.md), fastest call over alternated rounds, process CPU "
                f"clock; inputs from bench_kubelet_side.py; {load_note()}"
            ),
            "rows": {name: {"best": v[0], "median": v[1]} for name, v in go.items()},
        }
        FIGURES_PATH.write_text(json.dumps(figures, indent=2) + "\n")
        print(f"saved the Go figures in {FIGURES_PATH.name}")


if __name__ == "__main__":
    sys.exit(main())
