"""One exact admission on an already restored node (issue 15: the extender's exact check).

Each node (tests/extender/nodes.py shapes: 8 to 64 CPUs, 1 to 4 NUMA nodes, single-numa-node,
restricted, best-effort, full-pcpus-only; empty or with running pods) is restored once from
its snapshot, as the extender keeps it. Then, per pod:

* clone: a new Node from the restored NodeState (``Node.fork``, or ``Node(state=...)`` and
  ``start`` when run with ``--restart``), the pod list copied;
* admit: ``node.admit(pod)``, the resource-fit predicate and the score's inputs (the exclusive
  CPUs and the free pool).

Pods: Guaranteed integer (1 to 3 containers), fractional Guaranteed, BestEffort. Figures are
the best of ``--repeat`` rounds of ``--loops`` calls, in microseconds per call (thread CPU
time: the machine is shared). Target: clone + admit <= 100 us.

    PYTHONPATH=src:. python bench/bench_admission.py [--repeat 5 --loops 200] [--profile CASE]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from tests.extender.nodes import make_snapshot, pod_json

from cpumanager.adapters.memory_store import InMemoryStore
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.kept import KEEP
from cpumanager.core.workload import Pod
from cpumanager.formats.manifest import pod_from_manifest
from cpumanager.manager.node import Node
from cpumanager.nodeanswers.fit import (
    Allocatable,
    fit_failures,
    node_allocatable,
    pod_requests,
    pods_usage,
)
from cpumanager.nodeanswers.restore import Restored, restore_node

SHAPES: dict[str, dict[str, object]] = {
    "8c/1n single-numa": {"numa_per_socket": 1, "cores_per_numa": 4},
    "16c/2n single-numa": {"cores_per_numa": 4},
    "32c/2n restricted": {"cores_per_numa": 8, "topology_policy": "restricted"},
    "32c/4n single-numa": {"cores_per_numa": 4, "numa_per_socket": 2, "sockets": 2},
    "64c/2n best-effort": {"cores_per_numa": 16, "topology_policy": "best-effort"},
    "24c/2n full-pcpus": {"cores_per_numa": 6, "options": {"full-pcpus-only": "true"}},
    "64c/4n restricted": {
        "cores_per_numa": 8,
        "numa_per_socket": 2,
        "sockets": 2,
        "topology_policy": "restricted",
    },
}


def _pod(uid: str, cpu: str, *, containers: int = 1, best_effort: bool = False) -> Pod:
    body = pod_json(uid, cpu, containers=containers)
    if best_effort:
        for container in body["spec"]["containers"]:
            container["resources"] = {}
    return pod_from_manifest(body)


PODS: dict[str, Callable[[str], Pod]] = {
    "guaranteed 2": lambda uid: _pod(uid, "2"),
    "guaranteed 3": lambda uid: _pod(uid, "3"),
    "guaranteed 2x2": lambda uid: _pod(uid, "2", containers=2),
    "guaranteed 3x1": lambda uid: _pod(uid, "1", containers=3),
    "fractional 1.5": lambda uid: _pod(uid, "1500m"),
    "best-effort": lambda uid: _pod(uid, "0", best_effort=True),
}


@dataclass
class Prepared:
    """A restored node as the extender keeps it."""

    label: str
    restored: Restored
    active: list[Pod]
    checkpoint: bytes | None
    allocatable: Allocatable
    used: dict[str, int]  # the running pods' summed requests (the fit predicate's usage)


def prepare(label: str, shape: dict[str, object], *, busy: bool) -> Prepared:
    """Restore the node once; a busy node first runs a few pods (exclusive and shared)."""
    restored = restore_node(make_snapshot(label, **shape))  # type: ignore[arg-type]
    if busy:
        for index, (cpu, count) in enumerate((("2", 1), ("1", 2), ("500m", 1), ("4", 1))):
            pod = _pod(f"running-{index}", cpu, containers=count)
            if restored.node.admit(pod).admitted:
                restored.active.append(pod)
    allocatable = node_allocatable(restored.topology, restored.kubelet, hugepages={}, devices=None)
    active = list(restored.active)
    return Prepared(label, restored, active, restored.store.data, allocatable, pods_usage(active))


def clone_restart(prepared: Prepared) -> Node:
    """Today's clone: a new node on the state, restarted from its checkpoint bytes."""
    restored = prepared.restored
    active = list(prepared.active)
    node = Node(
        topology=restored.topology,
        kubelet=restored.kubelet,
        store=InMemoryStore(prepared.checkpoint),
        state=restored.node.snapshot(),
    )
    node.start(active_pods=lambda: active)
    return node


def clone_fork(prepared: Prepared) -> Node:
    """The cheap clone: the restored node forked, immutable state shared."""
    active = list(prepared.active)
    store = InMemoryStore(prepared.checkpoint)
    return prepared.restored.node.fork(store=store, active_pods=lambda: active)


def check(prepared: Prepared, node: Node, pod: Pod) -> tuple[bool, int]:
    """Admission, the fit predicate and the score's inputs: what one verdict reads."""
    restored = prepared.restored
    result = node.admit(pod, explain=False)
    if not result.admitted:
        return False, 0
    if fit_failures(pod_requests(pod), prepared.used, len(prepared.active), prepared.allocatable):
        return False, 0
    state = node.snapshot().cpu
    exclusive = state.pod_cpus(pod.uid)
    free = state.default_cpuset - (restored.kubelet.reserved_cpus or CPUSet())
    return True, len(exclusive) + len(free)


def best(fn: Callable[[], object], *, repeat: int, loops: int) -> float:
    """Best per-call thread CPU time over ``repeat`` rounds, microseconds."""
    rounds = []
    for _ in range(repeat):
        start = time.thread_time()
        for _ in range(loops):
            fn()
        rounds.append((time.thread_time() - start) / loops)
    return min(rounds) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--loops", type=int, default=200)
    parser.add_argument("--sort", default="cumulative")
    parser.add_argument("--restart", action="store_true", help="clone by Node(state=) + start")
    parser.add_argument("--busy", action="store_true", help="profile a node with running pods")
    parser.add_argument(
        "--profile",
        metavar="SHAPE/POD",
        help="cProfile one case, e.g. '32c/4n single-numa/guaranteed 3'",
    )
    args = parser.parse_args()
    KEEP.on = False  # each call does the work: no answers kept from an earlier call
    print("answers kept across calls: off (core/kept.py): every call does the work")
    clone = clone_restart if args.restart else clone_fork
    if args.profile:
        shape_name, _, pod_name = args.profile.rpartition("/")
        prepared = prepare(shape_name, SHAPES[shape_name], busy=args.busy)
        pod = PODS[pod_name]("new")
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(args.loops * args.repeat):
            check(prepared, clone(prepared), pod)
        profiler.disable()
        pstats.Stats(profiler).sort_stats(args.sort).print_stats(45)
        return
    print(
        f"clone by {'restart (Node(state=) + start)' if args.restart else 'Node.fork'}; "
        "us per call, best of rounds (thread CPU time)"
    )
    print(f"{'node':<26}{'pod':<16}{'clone':>8}{'admit+fit':>11}{'total':>8}  verdict")
    worst = 0.0
    for busy in (False, True):
        for label, shape in SHAPES.items():
            prepared = prepare(label, shape, busy=busy)
            name = f"{label}{' busy' if busy else ''}"
            clone_us = best(partial(clone, prepared), repeat=args.repeat, loops=args.loops)
            for pod_name, make in PODS.items():
                pod = make("new")
                verdict = check(prepared, clone(prepared), pod)[0]

                def both(prepared: Prepared = prepared, pod: Pod = pod) -> None:
                    check(prepared, clone(prepared), pod)

                total = best(both, repeat=args.repeat, loops=args.loops)
                worst = max(worst, total)
                print(
                    f"{name:<26}{pod_name:<16}{clone_us:>8.0f}{total - clone_us:>11.0f}"
                    f"{total:>8.0f}  {'admit' if verdict else 'reject'}"
                )
    print(f"worst clone + admit + fit: {worst:.0f} us")


if __name__ == "__main__":
    main()
