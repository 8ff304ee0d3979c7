"""`cpumanager node` on a big node: 512 CPUs (2 sockets, 8 NUMA nodes, SMT 2), 250 pods.

The node is built once in a temporary directory the way the test fixtures are
(tests/nodeview/fixture_nodes.py): a sysfs tree, a kubelet root with the three checkpoints
written by our managers after admitting the pods, a kubectl pod list, and a stand-in kubelet
serving the PodResources answers on a Unix socket. Then each step is timed N times and the
best and median printed. Targets (issue 13): snapshot <= 1 s, ``node whatif`` of one pod
<= 100 ms after load, ``node show`` <= 300 ms.

    PYTHONPATH=src:. python bench/bench_node.py [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

from tests.nodeview.fixture_content import PodSpec, burstable, guaranteed, kubeadm_config
from tests.nodeview.fixture_nodes import NodeSpec, build_node, fixture_kubelet

from cpumanager.adapters.node_collect import (
    CollectOptions,
    collect_snapshot,
    load_snapshot,
    write_snapshot,
)
from cpumanager.core.ids import ContainerName, PodUID
from cpumanager.core.kept import KEEP
from cpumanager.core.workload import Container, Pod
from cpumanager.formats.kubelet_config import KubeletConfig
from cpumanager.nodeanswers.nrt import node_resource_topology
from cpumanager.nodeanswers.preflight import preflight
from cpumanager.nodeanswers.show import node_picture
from cpumanager.nodeanswers.whatif import what_if
from cpumanager.presets import get_preset

MACHINE = "2s4n32c2t"  # 2 sockets x 4 NUMA nodes x 32 cores x 2 threads = 512 CPUs
PODS = 250


def big_node_spec() -> NodeSpec:
    """100 Guaranteed pods with 2 exclusive CPUs, 150 shared (Burstable) pods."""
    pods = []
    for index in range(PODS):
        if index % 5 < 2:
            resources = guaranteed("2", "2Gi")
            pods.append(PodSpec("prod", f"g-{index}", [("app", resources)], qos="Guaranteed"))
        else:
            pods.append(PodSpec("web", f"b-{index}", [("app", burstable("250m", "256Mi"))]))
    kubelet = KubeletConfig(
        cpu_manager_policy="static",
        system_reserved={"cpu": Fraction(2)},
        topology_manager_policy="best-effort",
    )
    text = kubeadm_config(policy="static", reserved=None, topology="best-effort")
    text += 'systemReserved:\n  cpu: "2"\n'
    return NodeSpec("big", "big-node-1", text, kubelet, pods, topology=get_preset(MACHINE))


def timed(label: str, repeat: int, step: Callable[[], object]) -> None:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        step()
        times.append((time.perf_counter() - start) * 1000)
    print(f"{label:<44} best {min(times):7.1f} ms   median {statistics.median(times):7.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    KEEP.on = False  # each call does the work: no answers kept from an earlier call
    print("answers kept across calls: off (core/kept.py): every call does the work")
    with tempfile.TemporaryDirectory(prefix="cpmb", dir="/tmp") as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        build_node(big_node_spec(), root / "node")
        node = root / "node"
        print(f"built the node in {time.perf_counter() - start:.1f} s: {MACHINE}, {PODS} pods")
        socket = root / "kubelet.sock"
        out = root / "snapshot.json"
        with fixture_kubelet(node, socket):
            options = CollectOptions(
                root=node,
                kubelet_root=node / "var/lib/kubelet",
                pods=node / "pods.json",
                socket=socket,
            )
            snap = collect_snapshot(options)
            bad = [s.name for s in snap.sources if s.status != "ok"]
            assert not bad, bad
            timed(
                "node snapshot: collect (target <= 1 s)",
                args.repeat,
                lambda: collect_snapshot(options),
            )
            timed(
                "node snapshot: collect + write the file",
                args.repeat,
                lambda: write_snapshot(collect_snapshot(options), out),
            )
        size = out.stat().st_size
        timed(f"load_snapshot ({size / 1024:.0f} KiB)", args.repeat, lambda: load_snapshot(out))
        loaded = load_snapshot(out)
        one = [_pod("whatif", "4")]
        timed(
            "node whatif: one pod, after load (<= 100 ms)",
            args.repeat,
            lambda: what_if(loaded, one),
        )
        timed("node show (<= 300 ms)", args.repeat, lambda: node_picture(loaded))
        timed("node nrt", args.repeat, lambda: node_resource_topology(loaded))
        timed(
            "node preflight (same configuration)",
            args.repeat,
            lambda: preflight(loaded, loaded.kubelet_config()),
        )


def _pod(name: str, cpus: str) -> Pod:
    amounts = {"cpu": Fraction(cpus), "memory": Fraction(2**30)}
    container = Container(ContainerName("app"), requests=amounts, limits=amounts)
    return Pod(PodUID(f"bench-{name}"), name, "bench", (), (container,))


if __name__ == "__main__":
    main()
