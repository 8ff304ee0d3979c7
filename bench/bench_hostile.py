"""The extender under load from one heavy or hostile caller (issue 21), on a real server.

Starts ``cpumanager extender`` as a subprocess on 127.0.0.1 and measures, from this
process:

* ``restore``: `/filter` latency (p50/p99/max over other nodes) and `/healthz` latency,
  first with no push, then while a large snapshot (a 1,024-NUMA machine with its distance
  table, about 12 MB) is pushed and restored again and again (each push changed, so each
  is restored);
* ``names``: the server's RSS and `/metrics` size after N distinct pushed node names (small
  one-NUMA nodes), and the answer to one name past ``--max-nodes``.

    python bench/bench_hostile.py [restore] [names] [--names N] [--seconds S]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.extender.nodes import make_snapshot, pod_json, snapshot_document

TOKEN = "bench-token"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    def __init__(self, scratch: Path, *extra: str) -> None:
        token = scratch / "token"
        token.write_text(TOKEN + "\n")
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [
                sys.executable, "-m", "cpumanager", "extender",
                "--listen", f"127.0.0.1:{self.port}", "--token-file", str(token),
                "--stale-after", "3600", *extra,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                self.get("/healthz")
                return
            except OSError:
                time.sleep(0.1)
        msg = "the extender did not start"
        raise RuntimeError(msg)

    def call(self, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
        request = urllib.request.Request(self.base + path, data=body, method=method)
        request.add_header("Authorization", "Bearer " + TOKEN)
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as err:
            return err.code, err.read()

    def get(self, path: str) -> bytes:
        with urllib.request.urlopen(self.base + path, timeout=30) as response:
            return bytes(response.read())

    def push(self, name: str, document: dict[str, Any]) -> int:
        return self.call("POST", f"/v1/nodes/{name}/snapshot", json.dumps(document).encode())[0]

    def rss_mb(self) -> float:
        return psutil.Process(self.process.pid).memory_info().rss / 2**20

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(30)


def percentiles(values: list[float]) -> str:
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return (
        f"n={len(ordered)} p50={statistics.median(ordered) * 1e3:.1f} ms "
        f"p99={p99 * 1e3:.1f} ms max={ordered[-1] * 1e3:.1f} ms"
    )


def big_document(index: int) -> dict[str, Any]:
    """A 1,024-NUMA machine (2 sockets, 2 cores a node, 2 threads) with its distances."""
    snapshot = make_snapshot(
        "big",
        sockets=2,
        numa_per_socket=512,
        cores_per_numa=2,
        threads=2,
        topology_policy="best-effort",
        config={"topologyManagerPolicyOptions": {"max-allowable-numa-nodes": "1024"}},
    )
    document = snapshot_document(snapshot)
    nodes = 1024
    document["machine"]["distances"] = {
        str(a): {
            str(b): 10 if a == b else (12 if a // 512 == b // 512 else 32) for b in range(nodes)
        }
        for a in range(nodes)
    }
    document["machine"]["name"] = f"big-{index}"  # a changed snapshot: restored again
    return document


def timed_filters(
    server: Server, names: list[str], seconds: float
) -> tuple[list[float], list[float]]:
    filters: list[float] = []
    health: list[float] = []
    end = time.monotonic() + seconds
    index = 0
    while time.monotonic() < end:
        body = json.dumps({"Pod": pod_json(f"p{index}", cpu="2"), "NodeNames": names}).encode()
        start = time.perf_counter()
        status, _ = server.call("POST", "/filter", body)
        filters.append(time.perf_counter() - start)
        assert status == 200, status
        start = time.perf_counter()
        server.get("/healthz")
        health.append(time.perf_counter() - start)
        index += 1
    return filters, health


def restore(scratch: Path, seconds: float) -> None:
    server = Server(scratch)
    try:
        names = [f"n{i:03d}" for i in range(50)]
        for name in names:
            assert (
                server.push(name, snapshot_document(make_snapshot(name, cores_per_numa=8))) == 200
            )
        size = len(json.dumps(big_document(0)).encode())
        print(f"large push: {size / 1e6:.1f} MB")
        filters, health = timed_filters(server, names, seconds)
        print(f"idle:          filter {percentiles(filters)}; healthz {percentiles(health)}")
        stop = threading.Event()
        pushes: list[float] = []

        def pusher() -> None:
            index = 1
            while not stop.is_set():
                document = big_document(index)
                start = time.perf_counter()
                status = server.push("big", document)
                pushes.append(time.perf_counter() - start)
                assert status == 200, status
                index += 1

        thread = threading.Thread(target=pusher)
        thread.start()
        time.sleep(1.0)  # the first push is being received and restored
        filters, health = timed_filters(server, names, seconds)
        stop.set()
        thread.join()
        print(f"while pushing: filter {percentiles(filters)}; healthz {percentiles(health)}")
        print(f"large pushes answered: {percentiles(pushes)}")
    finally:
        server.stop()


def names(scratch: Path, count: int) -> None:
    server = Server(scratch, "--max-nodes", str(count))
    try:
        before = server.rss_mb()
        metrics_before = len(server.get("/metrics"))
        start = time.perf_counter()
        for index in range(count):
            name = f"node-{index:05d}"
            document = snapshot_document(
                make_snapshot(name, numa_per_socket=1, cores_per_numa=4, threads=2)
            )
            assert server.push(name, document) == 200
        seconds = time.perf_counter() - start
        after = server.rss_mb()
        metrics_after = len(server.get("/metrics"))
        extra = snapshot_document(make_snapshot("one-too-many", numa_per_socket=1))
        status = server.push("one-too-many", extra)
        per_node = (after - before) * 1024 / count
        print(
            f"{count} names pushed in {seconds:.0f} s: RSS {before:.0f} -> {after:.0f} MB "
            f"({per_node:.1f} KiB a node); /metrics {metrics_before / 1024:.0f} "
            f"-> {metrics_after / 1024:.0f} KiB; one more name: {status}"
        )
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", nargs="*", default=["restore", "names"])
    parser.add_argument("--names", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as scratch:
        if "restore" in args.what:
            restore(Path(scratch), args.seconds)
        if "names" in args.what:
            names(Path(scratch), args.names)
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
