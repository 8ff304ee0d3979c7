"""Checkpoint codec and durable-store speed (issue 3).

Rows: states of 10, 100 and 1,000 containers (5 per pod, 2 CPUs each, on a machine with
enough CPUs). Prints the kubelet's figure (``kubelet_figures.json``) and microseconds per
call (fastest call) for encode+checksum (``encode_v2``) and for decode+verify+parse (the
kubelet's restore: V1 attempt, V2 attempt, checksum, CPU lists), warm and with the CPU-list
caches emptied before each call (cold),
the file size, and durable commits per second (temp file, fsync, rename, directory fsync)
through ``CheckpointStore.save`` in a temp directory on the disk given by ``--dir``.

    python bench/bench_checkpoint.py [--dir DIR] [--commits N]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from kubelet import best_call_us, figures, load_note

from cpumanager.adapters.checkpoint_store import CheckpointStore
from cpumanager.adapters.filestore import write_atomic
from cpumanager.checkpoint import codec, fast
from cpumanager.checkpoint.loader import restore_state
from cpumanager.core.containermap import ContainerMap
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.ids import ContainerName, PodUID
from cpumanager.core.state import StateSnapshot


def make_state(containers: int) -> StateSnapshot:
    assignments: dict[PodUID, dict[ContainerName, CPUSet]] = {}
    for index in range(containers):
        pod = PodUID(f"0f1e2d3c-4b5a-6978-8796-{index // 5:012d}")
        assignments.setdefault(pod, {})[ContainerName(f"container-{index % 5}")] = CPUSet(
            [2 * index + 8, 2 * index + 9]
        )
    default = CPUSet.range(0, 8) | CPUSet.range(2 * containers + 8, 2 * containers + 16)
    return StateSnapshot("static", default, assignments)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=None, help="directory on the disk to test")
    parser.add_argument("--commits", type=int, default=200)
    args = parser.parse_args()

    go = figures()["checkpoint_v2_us"]
    print(
        f"{'containers':>10} {'bytes':>8} {'kubelet us':>10} {'encode+checksum us':>19}"
        f" {'(cold)':>8} {'decode+verify us':>17} {'(cold)':>8}"
    )
    for containers in (10, 100, 1000):
        state = make_state(containers)
        data = codec.encode_v2(state)

        def restore(d: bytes = data) -> object:
            return restore_state(
                d, source="bench", configured_policy="static", container_map=ContainerMap()
            )

        encode = best_call_us(lambda s=state: codec.encode_v2(s))
        decode = best_call_us(restore)
        # cold: the CPU-list caches emptied before every call (a state never seen before)
        encode_cold = best_call_us(lambda s=state: (fast.clear_caches(), codec.encode_v2(s)))
        decode_cold = best_call_us(lambda: (fast.clear_caches(), restore()))
        print(
            f"{containers:>10} {len(data):>8} {go[str(containers)]:>10} {encode:>19.1f}"
            f" {encode_cold:>8.1f} {decode:>17.1f} {decode_cold:>8.1f}"
        )
    print(f"kubelet figures: {figures()['source']}; {load_note()}")

    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        directory = Path(tmp)
        for label, keep in (("store.save (with last-good link)", True), ("store.save", False)):
            store = CheckpointStore(directory, keep_last_good=keep)
            states = [make_state(10 + (i % 2)) for i in range(2)]
            start = time.perf_counter()
            for index in range(args.commits):
                store.save(states[index % 2])
            elapsed = time.perf_counter() - start
            print(
                f"{label}: {args.commits / elapsed:.0f} durable commits/s "
                f"({elapsed / args.commits * 1e3:.2f} ms each)"
            )
        payload = codec.encode_v2(make_state(10))
        start = time.perf_counter()
        for _ in range(args.commits):
            write_atomic(directory / "raw", payload)
        elapsed = time.perf_counter() - start
        print(f"write_atomic alone: {args.commits / elapsed:.0f} commits/s")
        print(f"disk: {directory}")


if __name__ == "__main__":
    main()
