"""Crash injection for `cpumanager run` and `cpumanager agent`: SIGKILL at random moments.

Each iteration starts either a `run --cpus 1 -- sleep 2` or an agent daemon (period 50 ms)
on one state directory and kills it with SIGKILL after a random delay, then runs one clean
tick (`agent --once`) and checks:

* corrupt: the checkpoint does not decode (or the clean tick fails);
* CPUs lost: the shared pool and the exclusive sets do not add up to every CPU exactly;
* wrong pins: a workload's affinity differs from what the checkpoint gives it (its own
  exclusive set, or the shared pool).

The machine is a fake sysfs of the CPUs this process may use (one core each), the
workloads two `sleep` processes (one exclusive CPU, one shared). Needs 2 usable CPUs.

    python bench/crash_run_agent.py [--kills 1000] [--seed S]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from tests.adapters.sysfs_tree import SysfsTree

from cpumanager.checkpoint.cpu.codec import decode
from cpumanager.core.cpuset import CPUSet

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
POD = """\
kind: Pod
metadata: {{name: {name}, annotations: {{cpumanager.io/pid: "{pid}"}}}}
spec:
  containers:
  - name: main
    resources: {{limits: {{cpu: "{cpu}", memory: 64Mi}}}}
"""


def cli(*args: object) -> list[str]:
    return [sys.executable, "-m", "cpumanager", *map(str, args)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        sys.exit("needs 2 usable CPUs")
    counts = {"run": 0, "agent": 0, "corrupt": 0, "cpus_lost": 0, "wrong_pins": 0}
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch)
        tree = SysfsTree(base / "machine").online(str(CPUSet(allowed)))
        for index, cpu in enumerate(allowed):
            tree.cpu(cpu, package=0, core_id=index, siblings=str(cpu),
                     package_cpus=str(CPUSet(allowed)))  # fmt: skip
        tree.node(0, str(CPUSet(allowed)), memory_kb=4 << 20)
        tree.node_online("0")
        state = base / "state"
        workloads = base / "workloads"
        workloads.mkdir()
        sleepers = [subprocess.Popen(["sleep", "100000"]) for _ in range(2)]
        for name, proc, cpu in (("excl", sleepers[0], "1"), ("shared", sleepers[1], "500m")):
            (workloads / f"{name}.yaml").write_text(POD.format(name=name, pid=proc.pid, cpu=cpu))
        common = ("--state-dir", state, "--sysfs", tree.root)
        try:
            for _ in range(args.kills):
                kind = rng.choice(("run", "agent"))
                counts[kind] += 1
                if kind == "run":
                    command = cli("run", "--cpus", "1", *common, "--", "sleep", "2")
                else:
                    command = cli("agent", "--workloads", workloads, *common, "--period", "50ms")
                proc = subprocess.Popen(command, env=ENV, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)  # fmt: skip
                time.sleep(rng.uniform(0.0, 1.5))
                proc.kill()
                proc.wait()
                check(counts, common, workloads, sleepers, set(allowed))
        finally:
            for proc in sleepers:
                proc.kill()
                proc.wait()
    seconds = time.perf_counter() - start
    print(
        f"kills={args.kills} (run {counts['run']}, agent {counts['agent']}) "
        f"corrupt={counts['corrupt']} cpus_lost={counts['cpus_lost']} "
        f"wrong_pins={counts['wrong_pins']} ({seconds:.0f} s)"
    )


def check(
    counts: dict[str, int],
    common: tuple[object, ...],
    workloads: Path,
    sleepers: list[subprocess.Popen[bytes]],
    allowed: set[int],
) -> None:
    tick = subprocess.run(cli("agent", "--workloads", workloads, *common, "--once"), env=ENV,
                          capture_output=True, text=True, check=False)  # fmt: skip
    state = Path(str(common[1])) / "cpu_manager_state"
    try:
        json.loads(tick.stdout)
        checkpoint = decode(state.read_bytes(), source=str(state))
    except (ValueError, OSError, Exception):
        counts["corrupt"] += 1
        print("corrupt:", tick.stderr.strip()[:300])
        return
    default = CPUSet.parse(checkpoint.default_cpu_set)
    exclusive = {
        pod: CPUSet.parse(cpus)
        for pod, containers in (checkpoint.entries or {}).items()
        for cpus in (containers or {}).values()
    }
    held = [cpu for cpus in exclusive.values() for cpu in cpus] + list(default)
    if sorted(held) != sorted(allowed):
        counts["cpus_lost"] += 1
        print("cpus lost or doubled:", checkpoint)
    report = json.loads(tick.stdout)
    by_pod = {entry["pod"]: entry for entry in report.get("admitted", [])}
    del by_pod
    for proc in sleepers:
        now = CPUSet(os.sched_getaffinity(proc.pid))
        if now != default and now not in exclusive.values():
            counts["wrong_pins"] += 1
            print(f"wrong pin: pid {proc.pid} on {now}, shared {default}, exclusive {exclusive}")


if __name__ == "__main__":
    main()
