"""Concurrency of `cpumanager run` sessions on one state directory: no CPU twice at once.

N client processes each admit, hold and release a run pod M times against the same state
directory (the real checkpoint store and state-directory lock, the run session that
`cpumanager run` uses, no command started). Each client logs when it held which CPUs; any
two overlapping holds that share a CPU are a double assignment. Also checks that every CPU
is back in the shared pool at the end.

    python bench/concurrency_run.py [--clients 8] [--runs 100] [--cpus 1-2]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from cpumanager.app import AgentConfig, build_run_session, run_pod_of_this_process
from cpumanager.checkpoint.cpu.codec import decode
from cpumanager.core.cpuset import CPUSet
from cpumanager.errors import CpuManagerError
from cpumanager.presets import get_preset

MACHINE = "dual-socket-ht"  # 12 CPUs, one reserved


def client(state: str, runs: int, seed: int, out: str) -> None:
    rng = random.Random(seed)
    config = AgentConfig(state_dir=Path(state), topology=get_preset(MACHINE))
    holds = []
    rejected = errors = 0
    for _ in range(runs):
        session = build_run_session(config)
        pod = run_pod_of_this_process(cpus=rng.randint(1, 2), memory="64Mi")
        try:
            admission = session.admit(pod)
        except CpuManagerError as err:
            rejected += err.exit_code == 1
            errors += err.exit_code != 1
            continue
        began = time.monotonic()
        time.sleep(rng.uniform(0, 0.01))
        ended = time.monotonic()
        holds.append((began, ended, str(admission.cpus)))
        problem = session.release(pod)
        errors += problem is not None
    Path(out).write_text(json.dumps({"holds": holds, "rejected": rejected, "errors": errors}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--runs", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        state = Path(scratch) / "state"
        outs = [Path(scratch) / f"client{i}.json" for i in range(args.clients)]
        start = time.perf_counter()
        procs = [
            multiprocessing.Process(target=client, args=(str(state), args.runs, i, str(out)))
            for i, out in enumerate(outs)
        ]
        for proc in procs:
            proc.start()
        for proc in procs:
            proc.join()
        seconds = time.perf_counter() - start
        results = [json.loads(out.read_text()) for out in outs]
        holds = [(b, e, CPUSet.parse(c)) for r in results for b, e, c in r["holds"]]
        holds.sort()
        double = 0
        for i, (_began, ended, cpus) in enumerate(holds):
            for other_began, _other_end, other_cpus in holds[i + 1 :]:
                if other_began >= ended:
                    break
                double += bool(cpus & other_cpus)
        final = decode((state / "cpu_manager_state").read_bytes(), source="state")
        left = sum(len(c) for c in (final.entries or {}).values())
    print(
        f"clients={args.clients} runs={args.clients * args.runs} admitted={len(holds)} "
        f"rejected={sum(r['rejected'] for r in results)} "
        f"host_errors={sum(r['errors'] for r in results)} double_assignments={double} "
        f"entries_left={left} ({seconds:.1f} s)"
    )


if __name__ == "__main__":
    main()
