"""End-to-end: kube-scheduler's own scheduling cycle against ``cpumanager extender``, every
binding replayed through the kubelet's own admission (bench/README.md, "End to end with the
real kube-scheduler").

This is the Python side. The other side is a harness built by hand from Kubernetes v1.32's
own packages (``pkg/scheduler`` with the default profile, ``pkg/kubelet/cm``'s topology
manager and static CPU manager, client-go's fake clientset); it is not part of this
repository. The harness reads the nodes and pods this driver writes, runs the scheduler
with or without the extender (filter, prioritize and bind verbs, through a timing proxy),
admits each binding on the target node's kubelet (whose CPU manager writes a real
``cpu_manager_state``), pushes the node's new snapshot to the extender as its agent would,
serves the three API calls the extender's bind makes, and prints one JSON line of figures.

    PYTHONPATH=src:. python bench/e2e_scheduler/driver.py --harness PATH [--nodes 50]
        [--pods 1000] [--workers 1] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.extender.nodes import make_snapshot, snapshot_document

SHAPES: list[dict[str, Any]] = [
    {"cores_per_numa": 4},
    {"cores_per_numa": 8},
    {"cores_per_numa": 4, "numa_per_socket": 1, "sockets": 2},
    {"cores_per_numa": 6, "topology_policy": "restricted"},
    {"cores_per_numa": 6, "options": {"full-pcpus-only": "true"}},
    {"cores_per_numa": 8, "numa_per_socket": 2, "sockets": 2, "reserved": "0,32"},
]
SIZES = ["1", "2", "3", "4", "5", "6", "8", "500m"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def nodes(count: int) -> list[dict[str, Any]]:
    found = []
    for index in range(count):
        name = f"node-{index:03d}"
        snapshot = make_snapshot(name, **SHAPES[index % len(SHAPES)])
        found.append({"name": name, "snapshot": snapshot_document(snapshot)})
    return found


def pods(count: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    found = []
    for index in range(count):
        containers = []
        for c in range(rng.choice((1, 1, 1, 2))):
            cpu = rng.choice(SIZES)
            memory = rng.choice(("256Mi", "1Gi", "2Gi"))
            amounts = {"cpu": cpu, "memory": memory}
            containers.append(
                {
                    "name": f"c{c}",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": amounts, "limits": amounts},
                }
            )
        found.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"pod-{index:05d}",
                    "namespace": "default",
                    "uid": f"00000000-0000-0000-0000-{index:012d}",
                },
                "spec": {"schedulerName": "default-scheduler", "containers": containers},
            }
        )
    return found


def run(harness: str, work: Path, *, extender: bool, workers: int) -> dict[str, Any]:
    args = [harness, "--nodes", str(work / "nodes.json"), "--pods", str(work / "pods.json")]
    server = None
    if extender:
        token = "e2e-" + os.urandom(8).hex()
        (work / "token").write_text(token + "\n")
        api_port, ext_port, proxy_port = free_port(), free_port(), free_port()
        kubeconfig = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "e2e", "cluster": {"server": f"http://127.0.0.1:{api_port}"}}],
            "users": [{"name": "e2e", "user": {"token": "unused"}}],
            "contexts": [{"name": "e2e", "context": {"cluster": "e2e", "user": "e2e"}}],
            "current-context": "e2e",
        }
        (work / "kubeconfig").write_text(json.dumps(kubeconfig))
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "cpumanager",
                "extender",
                "--listen",
                f"127.0.0.1:{ext_port}",
                "--token-file",
                str(work / "token"),
                "--kubeconfig",
                str(work / "kubeconfig"),
                "--stale-after",
                "1000000",
                "--workers",
                str(workers),
            ],
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", ext_port), 1).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    msg = "the extender did not start"
                    raise SystemExit(msg) from None
                time.sleep(0.2)
        args += [
            "--extender",
            f"http://127.0.0.1:{ext_port}",
            "--token",
            token,
            "--api-listen",
            f"127.0.0.1:{api_port}",
            "--proxy-listen",
            f"127.0.0.1:{proxy_port}",
        ]
    try:
        done = subprocess.run(args, capture_output=True, text=True, check=False)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
    if done.returncode != 0:
        msg = f"the harness failed: {done.stderr.strip().splitlines()[-1:] or done.returncode}"
        raise SystemExit(msg)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--harness", required=True, help="the harness binary (built by hand)")
    parser.add_argument("--nodes", type=int, default=50)
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=20)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="e2e-") as scratch:
        work = Path(scratch)
        (work / "nodes.json").write_text(json.dumps(nodes(options.nodes)))
        (work / "pods.json").write_text(json.dumps(pods(options.pods, options.seed)))
        rows = {
            "without extender": run(options.harness, work, extender=False, workers=1),
            "with extender": run(options.harness, work, extender=True, workers=options.workers),
        }
    print(
        f"{options.pods} Guaranteed pods over {options.nodes} nodes; load average "
        f"{os.getloadavg()[0]:.1f}"
    )
    print("| | bound | unschedulable | kubelet-rejected | filter p50 / p99 | pods/s |")
    print("|---|---|---|---|---|---|")
    for mode, r in rows.items():
        filt = r.get("filter_ms") or []
        timing = f"{statistics.median(filt):.0f} / {pct(filt, 0.99):.0f} ms" if filt else "-"
        print(
            f"| {mode} | {r['bound']} | {r['unschedulable']} | {r['kubelet_rejected']} | "
            f"{timing} | {r['pods_per_second']:.1f} |"
        )
        reasons = sorted(set(r.get("reject_reasons") or []))
        if reasons:
            print(f"  kubelet refusals ({mode}): {', '.join(reasons)}")
        if r.get("push_failures") or r.get("bind_errors"):
            print(f"  push failures {r['push_failures']}, bind errors {r['bind_errors']}")
    if options.out is not None:
        options.out.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
