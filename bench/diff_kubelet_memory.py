"""Differential run: the memory manager (Static) and the topology manager against the kubelet.

Random cases (a seed makes them again): machines of 1-8 NUMA nodes with memory and
hugepages (2Mi, 1Gi; some pools empty), a memory reservation that adds up (and now and then
one that does not, or names a node the machine lacks, or reserves no memory at all: the
kubelet refuses to start), a CPU manager (none or static), a topology manager policy and
scope, and a sequence of operations: admit a pod (Guaranteed with memory and hugepages from
small to more than one NUMA node holds, Burstable, BestEffort; several containers, init
containers, restartable init containers), start its containers in order (PreStartContainer:
finished init containers give their memory back), remove a pod.

Every case runs through a harness built from the kubelet's own Go code (a separate program,
not in this repository, see bench/README.md: it reads the cases as JSON lines and answers
one JSON line each) and through our ``Node`` at kubelet 1.32. Compared: the start refusal
(the kubelet's text must open ours), each admission's verdict, reason and message, each
container's memory blocks and CPUs, the ``memory_manager_state`` and ``cpu_manager_state``
bytes after each admission and at the end (after a stale-state pass).

The kubelet builds a container's blocks by ranging over a Go map, so their order in the
checkpoint changes from run to run; when only that order differs, our blocks are put in the
kubelet's order and encoded again, and the bytes must then be equal. Its stale-state removal
also ranges over a map; when releases on a multi-node group come in another order, the
split of reserved memory between the group's nodes can differ while every group total is
equal (the kubelet's own state comparison, ``areMachineStatesEqual``, checks totals per
group): such states are counted as ``equivalent``, not as disagreements.

    python bench/diff_kubelet_memory.py --harness BIN --seed 1 --cases 200
    python bench/diff_kubelet_memory.py --seed 1 --cases 200 --write-cases cases.jsonl
    python bench/diff_kubelet_memory.py --seed 1 --cases 200 --answers answers.jsonl

Exit status: 0 when every case agrees, 1 on any disagreement, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import struct
import subprocess
import sys
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cpumanager.adapters.memory_store import InMemoryStore
from cpumanager.checkpoint.memory.codec import decode_memory, encode_memory, with_fresh_checksum
from cpumanager.checkpoint.memory.model import (
    Block,
    MemoryManagerCheckpoint,
    NUMANodeState,
)
from cpumanager.checkpoint.memory.model import MemoryTable as CheckpointTable
from cpumanager.checkpoint.memory.restore import default_machine_state, validate_memory_state
from cpumanager.core import versions
from cpumanager.core.ids import ContainerID, ContainerName, PodUID
from cpumanager.core.memory import MemoryState
from cpumanager.core.workload import Pod
from cpumanager.errors import CpuManagerError
from cpumanager.formats.kubelet_config import KubeletConfig, reserved_memory_per_node
from cpumanager.formats.machine_format import topology_from_dict
from cpumanager.formats.manifest import pod_from_manifest
from cpumanager.manager.node import Node, NodeResources, NodeState

MI = 2**20
GI = 2**30
RELEASE = versions.parse_release("1.32")
PAGE_KB = {"hugepages-2Mi": 2048, "hugepages-1Gi": 1048576}

# --- cases --------------------------------------------------------------------------------


def _quantity(amount: int) -> str:
    for suffix, size in (("Gi", GI), ("Mi", MI), ("Ki", 1024), ("M", 10**6), ("k", 1000)):
        if amount and amount % size == 0:
            return f"{amount // size}{suffix}"
    return str(amount)


def _written(rng: random.Random, amount: int) -> str:
    """``amount`` as a manifest may write it: binary, decimal, fractional or plain bytes."""
    pick = rng.random()
    if pick < 0.1:
        return str(amount)
    if pick < 0.2 and amount % (GI // 4) == 0:
        return f"{amount / GI}Gi"
    if pick < 0.3 and amount % 10**6 == 0:
        return f"{amount // 10**6}M"
    return _quantity(amount)


def _split(rng: random.Random, total: int, parts: int, unit: int) -> list[int]:
    """``total`` (a multiple of ``unit``) cut into ``parts`` pieces of whole units."""
    units = total // unit
    cuts = sorted(rng.randint(0, units) for _ in range(parts - 1))
    edges = [0, *cuts, units]
    return [(edges[i + 1] - edges[i]) * unit for i in range(parts)]


def _machine(rng: random.Random) -> dict[str, Any]:
    numa = rng.choice((1, 1, 2, 2, 2, 3, 4, 4, 6, 8, 8)) if rng.random() < 0.97 else 9
    cpuless = rng.choice((0, 0, 0, 0, 1)) if numa >= 2 else 0
    with_cpus = numa - cpuless
    cores_per_node = rng.choice((1, 2, 2))
    sockets = 2 if with_cpus % 2 == 0 and with_cpus >= 2 and rng.random() < 0.5 else 1
    total_cores = with_cpus * cores_per_node
    cpus = []
    for thread in range(2):
        for core in range(total_cores):
            node = core // cores_per_node
            cpus.append(
                {
                    "cpu": thread * total_cores + core,
                    "core": core,
                    "socket": node * sockets // with_cpus,
                    "numa": node,
                }
            )
    sizes = [s for s in PAGE_KB if rng.random() < 0.6]
    nodes = []
    for node in range(numa):
        memory = rng.randint(4, 32) * 256 * MI
        pages: dict[str, int] = {}
        budget = memory // 2
        for size in sizes:
            page = PAGE_KB[size] * 1024
            count = 0 if rng.random() < 0.3 else rng.randint(1, max(1, budget // page // 2))
            count = min(count, budget // page)
            budget -= count * page
            pages[str(PAGE_KB[size])] = count
        nodes.append({"id": node, "memory": memory, "hugepages": pages})
    return {"cpus": cpus, "numa": nodes}


def _f32(value: float) -> float:
    return float(struct.unpack("f", struct.pack("f", value))[0])


def _go_percent_of(capacity: int, threshold: str) -> int:
    """What the kubelet's eviction threshold holds back for ``N%`` (float32 arithmetic)."""
    if threshold in ("0%", "100%"):
        return 0
    percent = _f32(_f32(float(threshold[:-1])) / 100)
    return int(capacity * percent)


def _reservation(rng: random.Random, machine: Mapping[str, Any]) -> dict[str, Any]:
    """kubeReserved / systemReserved / evictionHard and a reservedMemory that adds up (or,
    now and then, one the kubelet refuses)."""
    nodes = machine["numa"]
    decimal = rng.random() < 0.25  # "500M" rather than "512Mi"
    kube = rng.randint(1, 8) * (50 * 10**6 if decimal else 64 * MI)
    system = rng.choice((0, 0, rng.randint(1, 4) * (50 * 10**6 if decimal else 64 * MI)))
    eviction = rng.choice(("100Mi", "100Mi", "200Mi", "0%", "1%", "5%", "2.5%"))
    capacity = sum(n["memory"] for n in nodes)
    if eviction.endswith("%"):
        threshold = _go_percent_of(capacity, eviction)
    else:
        threshold = int(eviction[:-2]) * MI
    kube_reserved: dict[str, str] = {"memory": _quantity(kube)}
    system_reserved: dict[str, str] = {"memory": _quantity(system)} if system else {}
    total = kube + system + threshold
    unit = 1 if total % MI else MI
    per_node = _split(rng, total, len(nodes), unit)
    limits: list[dict[str, int]] = [{"memory": amount} for amount in per_node]
    sizes = sorted({size for n in nodes for size in n["hugepages"]}, key=int)
    twist = rng.random()
    if twist < 0.04 and sizes:
        # hugepages in reservedMemory: the node-allocatable reservation cannot hold them
        # (kubeReserved and systemReserved refuse hugepages), so the kubelet refuses
        size_kb = rng.choice(sizes)
        name = next(k for k, v in PAGE_KB.items() if str(v) == size_kb)
        limits[rng.randrange(len(nodes))][name] = int(size_kb) * 1024
    elif twist < 0.09:
        node = rng.randrange(len(nodes))
        limits[node]["memory"] = limits[node].get("memory", 0) + rng.choice((MI, 64 * MI))
    elif twist < 0.12:
        limits.append({"memory": 64 * MI})
        kube_reserved["memory"] = _quantity(kube + 64 * MI)
        reserved = _entries(limits)
        reserved[-1]["numaNode"] = len(nodes) + rng.randint(0, 3)
        return _config(kube_reserved, system_reserved, eviction, reserved)
    elif twist < 0.14:
        kube_reserved = {}
        system_reserved = {}
        eviction = "0%"
        limits = [{} for _ in nodes]
    elif twist < 0.17:
        # node 0 reserves more regular memory than it has outside its hugepages
        pages = sum(int(kb) * 1024 * count for kb, count in nodes[0]["hugepages"].items())
        extra = nodes[0]["memory"] - pages + rng.choice((0, MI, 64 * MI)) - limits[0]["memory"]
        if extra > 0:
            limits[0]["memory"] += extra
            kube_reserved["memory"] = _quantity(kube + extra)
    return _config(kube_reserved, system_reserved, eviction, _entries(limits))


def _entries(limits: Sequence[Mapping[str, int]]) -> list[dict[str, Any]]:
    """reservedMemory entries; zero amounts left out (the kubelet's configuration
    validation refuses them before the memory manager is built)."""
    return [
        {"numaNode": node, "limits": {k: _quantity(v) for k, v in sorted(amounts.items()) if v}}
        for node, amounts in enumerate(limits)
        if any(amounts.values())
    ]


def _config(
    kube: Mapping[str, str],
    system: Mapping[str, str],
    eviction: str,
    reserved: list[dict[str, Any]],
) -> dict[str, Any]:
    return {
        "kubeReserved": dict(kube),
        "systemReserved": dict(system),
        "evictionHard": {"memory.available": eviction},
        "reservedMemory": reserved,
    }


@dataclass
class _PodMaker:
    rng: random.Random
    node_memory: int
    page_sizes: tuple[str, ...]
    count: int = 0
    uids: list[str] = field(default_factory=list)

    def memory(self) -> int:
        pick = self.rng.random()
        if pick < 0.1:
            return self.rng.randint(1, 800) * 10**6
        if pick < 0.6:
            return self.rng.randint(1, 12) * 64 * MI
        if pick < 0.88:
            return self.rng.randint(1, 8) * self.node_memory // 8 // MI * MI
        return self.rng.randint(9, 20) * self.node_memory // 8 // MI * MI

    def resources(self, qos: str, *, init: bool = False) -> dict[str, Any]:
        cpu = self.rng.choice(("100m", "250m", "500m", "1", "1", "2"))
        memory = self.memory() // (2 if init and self.rng.random() < 0.5 else 1)
        requests: dict[str, str] = {"cpu": cpu, "memory": _written(self.rng, memory)}
        for size in self.page_sizes:
            if self.rng.random() < 0.4:
                unit = PAGE_KB[size] * 1024
                requests[size] = _quantity(unit * self.rng.randint(1, 64 if unit == 2 * MI else 2))
        limits = dict(requests)
        if qos == "burstable":
            limits["memory"] = _written(self.rng, memory * 2)
            if self.rng.random() < 0.5:
                del limits["cpu"]
        if qos == "besteffort":
            return {}
        return {"requests": requests, "limits": limits}

    def pod(self) -> dict[str, Any]:
        self.count += 1
        uid = str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        self.uids.append(uid)
        qos = self.rng.choices(("guaranteed", "burstable", "besteffort"), (0.8, 0.15, 0.05))[0]
        containers = [
            {"name": f"app{i}", "resources": self.resources(qos)}
            for i in range(self.rng.choice((1, 1, 1, 2, 3)))
        ]
        inits = []
        for i in range(self.rng.choice((0, 0, 0, 1, 2, 3))):
            spec: dict[str, Any] = {"name": f"init{i}", "resources": self.resources(qos, init=True)}
            if self.rng.random() < 0.3:
                spec["restartPolicy"] = "Always"
            inits.append(spec)
        spec_body: dict[str, Any] = {"containers": containers}
        if inits:
            spec_body["initContainers"] = inits
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"p{self.count}", "namespace": "default", "uid": uid},
            "spec": spec_body,
        }


def generate_case(rng: random.Random, name: str, *, pods: int) -> dict[str, Any]:
    machine = _machine(rng)
    cpu_policy = rng.choice(("static", "static", "none"))
    sizes = tuple(
        size
        for size, kb in PAGE_KB.items()
        if any(str(kb) in n["hugepages"] for n in machine["numa"])
    )
    node_memory = max(n["memory"] for n in machine["numa"])
    maker = _PodMaker(rng, node_memory, sizes)
    ops: list[dict[str, Any]] = []
    live: dict[str, dict[str, Any]] = {}
    for _ in range(pods):
        doc = maker.pod()
        ops.append({"op": "admit", "pod": doc})
        uid = doc["metadata"]["uid"]
        live[uid] = doc
        if rng.random() < 0.6:
            names = [c["name"] for c in doc["spec"].get("initContainers", [])]
            names += [c["name"] for c in doc["spec"]["containers"]]
            upto = len(names) if rng.random() < 0.7 else rng.randint(1, len(names))
            ops += [{"op": "start", "uid": uid, "container": n} for n in names[:upto]]
        if live and rng.random() < 0.25:
            gone = rng.choice(sorted(live))
            del live[gone]
            ops.append({"op": "remove", "uid": gone})
        if rng.random() < 0.05:
            restart: dict[str, Any] = {"op": "restart"}
            if rng.random() < 0.35:
                restart["config"] = _reservation(rng, machine)  # a new reservation
            ops.append(restart)
    return {
        "name": name,
        "machine": machine,
        "cpuPolicy": cpu_policy,
        "cpuPolicyOptions": {},
        "reservedCPUs": "0" if cpu_policy == "static" else "",
        "topologyPolicy": rng.choice(("none", "best-effort", "restricted", "single-numa-node")),
        "topologyScope": rng.choice(("container", "pod")),
        "topologyOptions": ({"max-allowable-numa-nodes": "9"} if len(machine["numa"]) > 8 else {}),
        "memoryPolicy": "Static",
        **_reservation(rng, machine),
        "ops": ops,
    }


def generate(seed: int, cases: int, *, pods: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [generate_case(rng, f"s{seed}-c{i}", pods=pods) for i in range(cases)]


# --- our side -----------------------------------------------------------------------------


def memory_checkpoint(state: MemoryState) -> MemoryManagerCheckpoint:
    """The ``memory_manager_state`` the kubelet would write for ``state`` (before checksum)."""
    machine: dict[int, NUMANodeState | None] = {
        node: NUMANodeState(
            info.assignments,
            {
                name: CheckpointTable(t.total, t.system_reserved, t.allocatable, t.reserved, t.free)
                for name, t in info.tables.items()
            },
            tuple(info.cells),
        )
        for node, info in state.nodes.items()
    }
    entries: dict[str, dict[str, tuple[Block, ...] | None] | None] = {}
    for key, blocks in state.blocks.items():
        pod = entries.setdefault(str(key.pod_uid), {})
        assert pod is not None
        pod[str(key.container_name)] = tuple(
            Block(tuple(b.numa_affinity), b.resource, b.size) for b in blocks
        )
    return MemoryManagerCheckpoint("Static", machine, entries)


def _kubelet_config(case: Mapping[str, Any]) -> KubeletConfig:
    raw: dict[str, Any] = {
        "cpuManagerPolicy": case["cpuPolicy"],
        "topologyManagerPolicy": case["topologyPolicy"],
        "topologyManagerScope": case["topologyScope"],
        "memoryManagerPolicy": case["memoryPolicy"],
        "evictionHard": case["evictionHard"],
        "reservedMemory": case["reservedMemory"],
    }
    if case["topologyOptions"]:
        raw["topologyManagerPolicyOptions"] = case["topologyOptions"]
    if case["reservedCPUs"]:
        raw["reservedSystemCPUs"] = case["reservedCPUs"]
    for key in ("kubeReserved", "systemReserved"):
        if case[key]:
            raw[key] = case[key]
    config = KubeletConfig.from_mapping(raw)
    return config.with_gate_values(versions.gate_values(RELEASE, config.feature_gates))


def _resources(machine: Mapping[str, Any]) -> NodeResources:
    hugepages: dict[int, dict[str, int]] = {}
    for node in machine["numa"]:
        for size_kb, count in node["hugepages"].items():
            name = next(k for k, v in PAGE_KB.items() if str(v) == size_kb)
            hugepages.setdefault(node["id"], {})[name] = count * int(size_kb) * 1024
    return NodeResources(
        hugepages=hugepages, memory={n["id"]: n["memory"] for n in machine["numa"]}
    )


def _topology(machine: Mapping[str, Any]) -> Any:
    return topology_from_dict(
        {
            "cpus": [
                {"cpu": c["cpu"], "socket": c["socket"], "numa": c["numa"], "core": c["core"],
                 "l3": c["numa"]}
                for c in machine["cpus"]
            ],
            "numa_nodes": [{"id": n["id"], "memory_bytes": n["memory"]} for n in machine["numa"]],
        }
    )  # fmt: skip


def _b64(data: bytes | None) -> str:
    return "" if data is None else base64.b64encode(data).decode()


def _admit(node: Node, pod: Pod, active: list[Pod]) -> dict[str, Any]:
    """One admission (the pod active while admitted, dropped when refused), answered as
    the harness answers it."""
    if pod not in active:
        active.append(pod)
    verdict = node.admit(pod, explain=False)
    if not verdict.admitted:
        active.remove(pod)
    memory = node.snapshot().memory
    assert memory is not None
    blocks: dict[str, list[dict[str, Any]]] = {}
    cpus: dict[str, str] = {}
    for container in pod.all_containers():
        held = memory.blocks.get(pod.key(container.name))
        if held is not None:
            blocks[container.name] = [
                {"numaAffinity": list(b.numa_affinity), "type": b.resource, "size": b.size}
                for b in held
            ]
        cpus[container.name] = str(node.placement(pod, container).cpus)
    return {
        "op": "admit",
        "uid": pod.uid,
        "admitted": verdict.admitted,
        "reason": verdict.reason,
        "message": verdict.message,
        "blocks": blocks,
        "cpus": cpus,
    }


def _memory_bytes(node: Node) -> str:
    state = node.snapshot().memory
    assert state is not None
    return _b64(encode_memory(with_fresh_checksum(memory_checkpoint(state))))


def _restore_refusal(case: Mapping[str, Any], kubelet: KubeletConfig, data: bytes) -> str:
    """The memory manager's Start over the checkpoint a restart finds ("" when it starts)."""
    machine = case["machine"]
    resources = _resources(machine)
    memory = resources.memory or {}
    reserved = reserved_memory_per_node(
        kubelet, tuple(sorted(memory)), memory_capacity_bytes=sum(memory.values())
    )
    default = default_machine_state(memory, hugepages=resources.hugepages, system_reserved=reserved)
    refusals = validate_memory_state(decode_memory(data, source="restart"), default)
    return refusals[0] if refusals else ""


def run_ours(case: Mapping[str, Any]) -> dict[str, Any]:
    """The case through our Node, answered in the harness's shape."""
    answer: dict[str, Any] = {"name": case["name"], "start_error": "", "ops": []}
    store = InMemoryStore()
    active: list[Pod] = []
    topology = _topology(case["machine"])
    try:
        node = Node(
            topology=topology,
            kubelet=_kubelet_config(case),
            store=store,
            resources=_resources(case["machine"]),
        )
        node.start(active_pods=lambda: list(active))
    except CpuManagerError as err:
        answer["start_error"] = str(err)
        return answer
    pods: dict[str, Pod] = {}
    started: dict[PodUID, list[ContainerID]] = {}
    now = dict(case)
    for op in case["ops"]:
        result: dict[str, Any] = {"op": op["op"], "uid": op.get("uid", ""), "admitted": False}
        if op["op"] == "admit":
            pod = pod_from_manifest(op["pod"])
            pods[pod.uid] = pod
            result = _admit(node, pod, active)
        elif op["op"] == "start":
            pod = pods[op["uid"]]
            if pod not in active:  # a rejected pod never starts
                answer["ops"].append(result)
                continue
            container = pod.container(op["container"])
            cid = ContainerID(f"{op['uid']}-{op['container']}")
            node.container_started(pod, container, cid)
            started.setdefault(pod.uid, []).append(cid)
        elif op["op"] == "remove":
            pod = pods[op["uid"]]
            if pod in active:
                active.remove(pod)
            node.remove_pod(pod.uid, container_ids=started.pop(pod.uid, []), reclaim=False)
        elif op["op"] == "restart":
            # a new kubelet over the same state (the configuration changed as the operation
            # says); every active pod is admitted again, in order
            now.update(op.get("config") or {})
            saved = node.stop()
            memory_file = base64.b64decode(_memory_bytes_of(saved))
            running = [
                (cid, uid, ContainerName(cid.removeprefix(f"{uid}-")))
                for uid, ids in started.items()
                for cid in ids
            ]
            try:
                kubelet = _kubelet_config(now)
                node = Node(
                    topology=topology,
                    kubelet=kubelet,
                    store=store,
                    resources=_resources(case["machine"]),
                    state=saved,
                )
                node.start(active_pods=lambda: list(active), running_containers=running)
                refusal = _restore_refusal(now, kubelet, memory_file)
            except CpuManagerError as err:
                refusal = str(err)
            if refusal:
                result["start_error"] = refusal
                result["memory_state"] = _b64(memory_file)
                result["cpu_state"] = _b64(store.data)
                answer["ops"].append(result)
                answer["memory_state"] = result["memory_state"]
                answer["cpu_state"] = result["cpu_state"]
                return answer
            readmitted = []
            known = active.copy()  # a refused pod leaves ``active`` during the loop
            for pod in known:
                again = _admit(node, pod, active)
                again["memory_state"] = _memory_bytes(node)
                again["cpu_state"] = _b64(store.data)
                readmitted.append(again)
            result["readmitted"] = readmitted
        result["memory_state"] = _memory_bytes(node)
        result["cpu_state"] = _b64(store.data)
        answer["ops"].append(result)
    node.remove_stale_state()
    answer["memory_state"] = _memory_bytes(node)
    answer["cpu_state"] = _b64(store.data)
    return answer


def _memory_bytes_of(state: NodeState) -> str:
    assert state.memory is not None
    return _b64(encode_memory(with_fresh_checksum(memory_checkpoint(state.memory))))


# --- comparison ---------------------------------------------------------------------------


def _decoded(b64: str) -> dict[str, Any] | None:
    if not b64:
        return None
    loaded: dict[str, Any] = json.loads(base64.b64decode(b64))
    return loaded


def _block_key(block: Mapping[str, Any]) -> tuple[Any, ...]:
    return (tuple(block.get("numaAffinity") or ()), block.get("type"), block.get("size"))


def _in_their_order(ours: MemoryManagerCheckpoint, theirs: Mapping[str, Any]) -> bytes | None:
    """Our checkpoint with each container's blocks in the kubelet's order (None: the blocks
    are not the same multiset)."""
    entries: dict[str, dict[str, tuple[Block, ...] | None] | None] = {}
    for pod, containers in (ours.entries or {}).items():
        out: dict[str, tuple[Block, ...] | None] = {}
        for name, blocks in (containers or {}).items():
            order = (theirs.get("entries") or {}).get(pod, {}).get(name)
            mine = list(blocks or ())
            if order is None or len(order) != len(mine):
                return None
            placed = []
            for wanted in order:
                match = next(
                    (b for b in mine if (b.numa_affinity, b.type, b.size) == _block_key(wanted)),
                    None,
                )
                if match is None:
                    return None
                mine.remove(match)
                placed.append(match)
            out[name] = tuple(placed)
        entries[pod] = out
    checkpoint = MemoryManagerCheckpoint(ours.policy_name, ours.machine_state, entries)
    return encode_memory(with_fresh_checksum(checkpoint))


def _equivalent(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Same blocks (as multisets), same node tables but for the reserved/free split within a
    group, same totals per group: what the kubelet's areMachineStatesEqual accepts."""

    def blocks(doc: Mapping[str, Any]) -> dict[tuple[str, str], list[tuple[Any, ...]]]:
        return {
            (pod, name): sorted(_block_key(x) for x in held or ())
            for pod, containers in (doc.get("entries") or {}).items()
            for name, held in (containers or {}).items()
        }

    if blocks(a) != blocks(b):
        return False
    ma, mb = a.get("machineState") or {}, b.get("machineState") or {}
    if set(ma) != set(mb):
        return False
    for node, sa in ma.items():
        sb = mb[node]
        if sa["numberOfAssignments"] != sb["numberOfAssignments"]:
            return False
        if sorted(sa["cells"] or ()) != sorted(sb["cells"] or ()):
            return False
        if set(sa["memoryMap"]) != set(sb["memoryMap"]):
            return False
        for name, ta in sa["memoryMap"].items():
            tb = sb["memoryMap"][name]
            if any(ta[k] != tb[k] for k in ("total", "systemReserved", "allocatable")):
                return False
            for field_name in ("free", "reserved"):
                group = sa["cells"] or [int(node)]
                sum_a = sum(ma[str(n)]["memoryMap"][name][field_name] for n in group)
                sum_b = sum(mb[str(n)]["memoryMap"][name][field_name] for n in group)
                if sum_a != sum_b:
                    return False
    return True


def _first_difference(a: Any, b: Any, path: str = "") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=lambda k: (k == "checksum", str(k))):
            if key not in a or key not in b:
                return f"{path}.{key}: kubelet {a.get(key)!r} ours {b.get(key)!r}"
            found = _first_difference(a[key], b[key], f"{path}.{key}")
            if found:
                return found
        return ""
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for index, (x, y) in enumerate(zip(a, b, strict=True)):
            found = _first_difference(x, y, f"{path}[{index}]")
            if found:
                return found
        return ""
    return "" if a == b else f"{path}: kubelet {a!r} ours {b!r}"


@dataclass
class Tally:
    cases: int = 0
    refused: int = 0
    pods: int = 0
    admitted: int = 0
    rejected: int = 0
    guaranteed_blocks: int = 0
    block_order_only: int = 0
    equivalent: int = 0
    restarts: int = 0
    restart_refusals: int = 0
    disagreements: list[str] = field(default_factory=list)
    reasons: dict[str, int] = field(default_factory=dict)


def _compare_memory(theirs_b64: str, ours_b64: str, where: str, tally: Tally) -> str:
    if theirs_b64 == ours_b64:
        return ""
    theirs = _decoded(theirs_b64)
    ours_doc = _decoded(ours_b64)
    if theirs is None or ours_doc is None:
        return f"{where}: memory_manager_state present on one side only"
    ours = decode_memory(base64.b64decode(ours_b64), source="ours")
    again = _in_their_order(ours, theirs)
    if again is not None and again == base64.b64decode(theirs_b64):
        tally.block_order_only += 1
        return ""
    if _equivalent(theirs, ours_doc):
        tally.equivalent += 1
        return ""
    return f"{where}: memory_manager_state differs: {_first_difference(theirs, ours_doc)}"


def _compare_admission(
    where: str, t: Mapping[str, Any], o: Mapping[str, Any], tally: Tally
) -> list[str]:
    """The disagreements of one admission: verdict, blocks, CPUs, both checkpoints."""
    found: list[str] = []
    tally.pods += 1
    if t["admitted"]:
        tally.admitted += 1
    else:
        tally.rejected += 1
        key = f"{t['reason']}: {t['message']}"
        tally.reasons[key] = tally.reasons.get(key, 0) + 1
    found += [
        f"{where}: {key}: kubelet {t.get(key)!r} ours {o.get(key)!r}"
        for key in ("admitted", "reason", "message")
        if t.get(key, "") != o.get(key, "")
    ]
    tb = {k: sorted(map(_block_key, v)) for k, v in (t.get("blocks") or {}).items()}
    ob = {k: sorted(map(_block_key, v)) for k, v in (o.get("blocks") or {}).items()}
    tally.guaranteed_blocks += sum(len(v) for v in tb.values())
    if tb != ob:
        found.append(f"{where}: blocks: kubelet {tb} ours {ob}")
    if (t.get("cpus") or {}) != (o.get("cpus") or {}):
        found.append(f"{where}: cpus: kubelet {t.get('cpus')} ours {o.get('cpus')}")
    problem = _compare_memory(t["memory_state"], o["memory_state"], where, tally)
    if problem:
        found.append(problem)
    if t["cpu_state"] != o["cpu_state"]:
        diff = _first_difference(_decoded(t["cpu_state"]), _decoded(o["cpu_state"]))
        found.append(f"{where}: cpu_manager_state differs: {diff}")
    return found


def compare(
    case: Mapping[str, Any], theirs: Mapping[str, Any], ours: Mapping[str, Any], tally: Tally
) -> list[str]:
    """Every disagreement between the kubelet's answer and ours for one case."""
    name = case["name"]
    tally.cases += 1
    found: list[str] = []
    if theirs.get("panic"):
        return [f"{name}: the kubelet panicked: {theirs['panic']}"]
    if theirs["start_error"] or ours["start_error"]:
        tally.refused += 1
        if not ours["start_error"].startswith(theirs["start_error"]) or (
            bool(theirs["start_error"]) != bool(ours["start_error"])
        ):
            found.append(
                f"{name}: start: kubelet {theirs['start_error']!r} ours {ours['start_error']!r}"
            )
        return found
    for index, (t, o) in enumerate(zip(theirs["ops"], ours["ops"], strict=True)):
        where = f"{name} op {index} ({t['op']} {t['uid'][:8]})"
        if t["op"] == "restart":
            tally.restarts += 1
            mine, kubelet = o.get("start_error", ""), t.get("start_error", "")
            if kubelet or mine:
                tally.restart_refusals += 1
                if not (kubelet and mine.startswith(kubelet)):
                    found.append(f"{where}: restart: kubelet {kubelet!r} ours {mine!r}")
                return found
            theirs_again, ours_again = t.get("readmitted") or [], o.get("readmitted") or []
            if len(theirs_again) != len(ours_again):
                found.append(
                    f"{where}: pods admitted again: kubelet {len(theirs_again)} "
                    f"ours {len(ours_again)}"
                )
                return found
            again = list(zip(theirs_again, ours_again, strict=True))
            for step, (ta, oa) in enumerate(again):
                found += _compare_admission(f"{where} again {step}", ta, oa, tally)
                if found:
                    return found
            continue
        if t["op"] != "admit":
            continue
        found += _compare_admission(where, t, o, tally)
        if found:
            return found  # later ops follow from the first difference
    problem = _compare_memory(theirs["memory_state"], ours["memory_state"], f"{name} end", tally)
    if problem:
        found.append(problem)
    if theirs["cpu_state"] != ours["cpu_state"]:
        diff = _first_difference(_decoded(theirs["cpu_state"]), _decoded(ours["cpu_state"]))
        found.append(f"{name} end: cpu_manager_state differs: {diff}")
    return found


# --- running ------------------------------------------------------------------------------


def run_harness(binary: str, cases: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    text = "".join(json.dumps(case) + "\n" for case in cases)
    done = subprocess.run(
        [binary], input=text, capture_output=True, text=True, check=False, timeout=3600
    )
    if done.returncode != 0:
        raise SystemExit(f"the harness failed ({done.returncode}): {done.stderr.strip()[:400]}")
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, action="append", default=None)
    parser.add_argument("--cases", type=int, default=50)
    parser.add_argument("--pods", type=int, default=10, help="admissions per case")
    parser.add_argument("--harness", help="the kubelet harness binary")
    parser.add_argument("--answers", help="the harness's answers (JSON lines), already run")
    parser.add_argument("--write-cases", help="write the cases (JSON lines) and stop")
    parser.add_argument("--cases-file", help="run these cases (JSON lines) instead")
    parser.add_argument("--only", help="run only the case of this name")
    parser.add_argument("--show", type=int, default=20, help="disagreements printed")
    args = parser.parse_args(argv)
    seeds = args.seed or [1]
    if args.cases_file:
        with open(args.cases_file) as handle:
            cases = [json.loads(line) for line in handle if line.strip()]
    else:
        cases = [case for seed in seeds for case in generate(seed, args.cases, pods=args.pods)]
    if args.only:
        cases = [case for case in cases if case["name"] == args.only]
    if args.write_cases:
        with open(args.write_cases, "w") as out:
            out.writelines(json.dumps(case) + "\n" for case in cases)
        return 0
    if args.answers:
        with open(args.answers) as handle:
            by_name = {a["name"]: a for a in map(json.loads, handle) if a}
        theirs = [by_name[case["name"]] for case in cases]
    elif args.harness:
        theirs = run_harness(args.harness, cases)
    else:
        parser.error("give --harness BIN, --answers FILE or --write-cases FILE")
    tally = Tally()
    bad_cases: list[str] = []
    for case, answer in zip(cases, theirs, strict=True):
        found = compare(case, answer, run_ours(case), tally)
        if found:
            bad_cases.append(case["name"])
            tally.disagreements.extend(found)
    _report(seeds, tally, bad_cases, args.show)
    return 1 if tally.disagreements else 0


def _report(seeds: Sequence[int], tally: Tally, bad: Sequence[str], show: int) -> None:
    print(f"seeds {','.join(map(str, seeds))}: {tally.cases} cases ({tally.refused} refused at "
          f"start), {tally.pods} admissions compared ({tally.admitted} admitted, {tally.rejected} "
          f"rejected), {tally.guaranteed_blocks} memory blocks")  # fmt: skip
    print(f"checkpoints equal once blocks are in the kubelet's order: {tally.block_order_only}; "
          f"equal up to the split within a group: {tally.equivalent}")  # fmt: skip
    print(f"restarts: {tally.restarts} ({tally.restart_refusals} refused)")
    for reason, count in sorted(tally.reasons.items(), key=lambda kv: -kv[1])[:8]:
        print(f"  {count:5d} x {reason}")
    print(f"disagreeing cases: {len(bad)}")
    for line in tally.disagreements[:show]:
        print(f"  {line}")


if __name__ == "__main__":
    sys.exit(main())
