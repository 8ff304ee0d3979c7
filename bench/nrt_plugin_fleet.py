"""Our NodeResourceTopology and NFD's, judged by the NodeResourceTopologyMatch plugin's code
against the kubelet's own verdict (``node whatif``). Run by hand (see bench/README.md).

``cases``: writes one JSON line per (node, candidate pod): the node's allocatable, the pod
as the scheduler sees it, the two objects (``ours``: ``node nrt``; ``nfd``: what NFD's
topology-updater writes for the same node, ``bench/nrt_plugin_nfd.py``) and the kubelet's
verdict on the pod (the project's what-if on the node's snapshot). Nodes: the fixture
nodes (tests/data/nodes) with a fixed pod list, then ``--nodes`` generated ones: 2 or 4
NUMA nodes of 4 to 16 cores with two threads; the static or none CPU manager (reserved
CPUs, sometimes ``full-pcpus-only``); the None or Static memory manager; the topology
manager's single-numa-node policy mostly (container or pod scope), else restricted or
best-effort; hugepages and NUMA-bound devices on some; random running pods admitted by
the node (the checkpoints and PodResources answers they leave); one random candidate (one
to two containers, a quarter with an init container of the same QoS kind, some of those
restartable sidecars).

A harness outside the repository runs the plugin's Filter and Score on each object (its
default arguments: passthrough cache, LeastAllocated) and writes one JSON line per
(case, object): ``{"id", "object", "filter": "ok" | "<code>: <message>", "score"}``.

``compare``: the scheduler's verdict on a case is the plugin's filter together with the
node-level fit (NodeResourcesFit, whose rules the kubelet's predicate shares: the
project's fit predicate); it counts agreements with the kubelet per object and lists
every disagreement with its class.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from nrt_plugin_nfd import nfd_object  # type: ignore[import-not-found]
from tests.extender.nodes import machine
from tests.nodeanswers.snapshots import fixture_snapshot
from tests.nodeview.fixture_nodes import (
    NODES_DIR,
    _device_checkpoint,
    _memory_checkpoint,
    _per_numa,
    fixture_answers,
)

from cpumanager.adapters.memory_store import InMemoryStore
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.devices import Device
from cpumanager.core.ids import ContainerName
from cpumanager.core.workload import QoSClass, qos_class
from cpumanager.formats.kubelet_config import KubeletConfig
from cpumanager.formats.machine_format import topology_from_dict
from cpumanager.formats.manifest import pod_from_manifest
from cpumanager.manager.node import Node, NodeResources
from cpumanager.nodeanswers.fit import node_allocatable, resource_fit
from cpumanager.nodeanswers.nrt import node_resource_topology, quantity_text
from cpumanager.nodeanswers.restore import restore_node
from cpumanager.nodeanswers.whatif import what_if
from cpumanager.nodeview.podresources import (
    AllocatableResources,
    CallResult,
    ContainerResources,
    DeviceAllocation,
    MemoryBlock,
    PodResources,
    PodResourcesAnswers,
)
from cpumanager.nodeview.pods import reduce_pod_list
from cpumanager.nodeview.snapshot import CheckpointFile, ConfigView, NodeSnapshot, Source

GiB = 1 << 30
MiB = 1 << 20
PATHS = {
    "cpu_manager_state": "/var/lib/kubelet/cpu_manager_state",
    "memory_manager_state": "/var/lib/kubelet/memory_manager_state",
    "kubelet_internal_checkpoint": "/var/lib/kubelet/device-plugins/kubelet_internal_checkpoint",
}

# --- pods -----------------------------------------------------------------------------


def _resources(cpu: str | None, memory: str | None, guaranteed: bool, **extra: str) -> dict:
    requests: dict[str, str] = {}
    if cpu is not None:
        requests["cpu"] = cpu
    if memory is not None:
        requests["memory"] = memory
    requests.update(extra)
    if not requests:
        return {}
    if guaranteed:
        return {"requests": dict(requests), "limits": dict(requests)}
    limits = {k: v for k, v in requests.items() if k not in ("cpu", "memory")}
    if memory is not None:
        limits["memory"] = f"{2 * int(memory[:-2])}Gi" if memory.endswith("Gi") else memory
    return {"requests": requests, "limits": limits} if limits else {"requests": requests}


def pod_doc(
    uid: str, node: str, containers: list[dict], *, phase: str = "Running", init: list | None = None
) -> dict[str, Any]:
    """A pod as the API server lists it (bound, with running container statuses)."""
    doc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": uid, "namespace": "fleet", "uid": uid},
        "spec": {"nodeName": node, "containers": containers},
        "status": {"phase": phase},
    }
    if init:
        doc["spec"]["initContainers"] = init
    if phase == "Running":
        doc["status"]["containerStatuses"] = [
            {
                "name": c["name"],
                "containerID": f"containerd://{uid}-{c['name']}",
                "state": {"running": {}},
            }
            for c in containers
        ]
    return doc


def random_containers(
    rng: random.Random,
    *,
    cpus_per_numa: int,
    numa_memory: int,
    device: str | None,
    hugepages: bool,
    big: bool,
) -> list[dict]:
    kind = rng.choices(("int", "frac", "burst", "best"), weights=(6, 1, 2, 1))[0]
    guaranteed = kind in ("int", "frac")
    out = []
    for index in range(rng.choice((1, 1, 1, 2))):
        extra: dict[str, str] = {}
        if device is not None and rng.random() < 0.35:
            extra[device] = str(rng.choice((1, 1, 2, 3)))
        if hugepages and guaranteed and rng.random() < 0.3:
            extra["hugepages-2Mi"] = f"{rng.choice((128, 512, 1024))}Mi"
        if kind == "best" and not extra:
            resources: dict = {}
        else:
            top = cpus_per_numa + 2 if big else max(2, cpus_per_numa // 2)
            cpu = {
                "int": str(rng.randint(1, top)),
                "frac": rng.choice(("500m", "1500m", "250m")),
                "burst": rng.choice(("500m", "1", "2")),
                "best": None,
            }[kind]
            top_gib = max(1, (numa_memory // GiB) * (13 if big else 4) // 10)
            memory = None if kind == "best" else f"{rng.randint(1, top_gib)}Gi"
            resources = _resources(cpu, memory, guaranteed, **extra)
        out.append({"name": f"c{index}", "resources": resources})
    return out


# --- nodes ----------------------------------------------------------------------------


def kubelet_answers(
    node: Node, kubelet: KubeletConfig, docs: list[dict], topology: Any
) -> PodResourcesAnswers:
    """What the kubelet's PodResources API answers on this node (List and
    GetAllocatableResources), from its managers' state."""
    state = node.snapshot()
    listed = []
    for doc in docs:
        if doc["status"]["phase"] != "Running":
            continue
        uid = doc["metadata"]["uid"]
        containers = []
        for c in doc["spec"]["containers"]:
            name = ContainerName(c["name"])
            devices: list[DeviceAllocation] = []
            if state.devices is not None:
                key = next(
                    (
                        k
                        for k in state.devices.allocations
                        if k.pod_uid == uid and k.container_name == name
                    ),
                    None,
                )
                for resource, ids in sorted(
                    (state.devices.allocations.get(key, {}) if key else {}).items()
                ):
                    table = state.devices.devices[resource]
                    devices += _per_numa(resource, [table[i] for i in sorted(ids)])
            memory: list[MemoryBlock] = []
            if state.memory is not None:
                for key, blocks in state.memory.blocks.items():
                    if key.pod_uid == uid and key.container_name == name:
                        memory += [
                            MemoryBlock(b.resource, b.size, tuple(b.numa_affinity)) for b in blocks
                        ]
            containers.append(
                ContainerResources(
                    name=c["name"],
                    devices=tuple(devices),
                    cpu_ids=state.cpu.cpuset_of(uid, name) or CPUSet(),
                    memory=tuple(memory),
                )
            )
        listed.append(
            PodResources(doc["metadata"]["name"], doc["metadata"]["namespace"], tuple(containers))
        )
    devices_out: list[DeviceAllocation] = []
    if state.devices is not None:
        for resource, table in sorted(state.devices.devices.items()):
            devices_out += _per_numa(resource, list(table.values()))
    cpu_ids = CPUSet()
    if kubelet.cpu_manager_policy == "static":
        cpu_ids = topology.all_cpus - (kubelet.reserved_cpus or CPUSet())
    memory_out: list[MemoryBlock] = []
    if state.memory is not None:
        for numa, held in sorted(state.memory.nodes.items()):
            memory_out += [
                MemoryBlock(name, t.allocatable, (numa,)) for name, t in sorted(held.tables.items())
            ]
    ok = CallResult("ok")
    return PodResourcesAnswers(
        pods=tuple(listed),
        allocatable=AllocatableResources(
            devices=tuple(devices_out), cpu_ids=cpu_ids, memory=tuple(memory_out)
        ),
        calls={"List": ok, "GetAllocatableResources": ok, "Get": ok},
    )


def random_node(rng: random.Random, index: int) -> tuple[NodeSnapshot, dict[str, Any]]:
    """A generated node after its pods were admitted, and how it was drawn."""
    name = f"fleet-{index:05d}"
    numa = rng.choice((2, 2, 2, 4))
    cores = rng.choice((4, 8, 8, 16))
    numa_memory = rng.choice((32, 64, 64, 128)) * GiB
    raw = machine(1, numa, cores, 2, memory_per_numa=numa_memory)
    raw["distances"] = {
        str(a): {
            str(b): 10 if a == b else (21 if numa == 2 else rng.choice((12, 21)))
            for b in range(numa)
        }
        for a in range(numa)
    }
    topology = topology_from_dict(raw)
    static_cpu = rng.random() < 0.8
    fields: dict[str, Any] = {
        "cpuManagerPolicy": "static" if static_cpu else "none",
        "topologyManagerPolicy": rng.choices(
            ("single-numa-node", "restricted", "best-effort"), weights=(17, 2, 1)
        )[0],
        "topologyManagerScope": rng.choice(("container", "container", "pod")),
    }
    if static_cpu:
        first = topology.cpus_in_numa_nodes([0])
        reserved = CPUSet([min(first)]) | topology.siblings(min(first))
        fields["reservedSystemCPUs"] = str(reserved)
        if rng.random() < 0.25:
            fields["cpuManagerPolicyOptions"] = {"full-pcpus-only": "true"}
    else:
        fields["systemReserved"] = {"cpu": "1"}
    static_memory = rng.random() < 0.4
    if static_memory:
        fields["memoryManagerPolicy"] = "Static"
        fields["systemReserved"] = {**fields.get("systemReserved", {}), "memory": "1Gi"}
        fields["reservedMemory"] = [{"numaNode": 0, "limits": {"memory": "1124Mi"}}]
    hugepages = rng.random() < 0.2
    pools = {n: {"hugepages-2Mi": 2 * GiB} for n in range(numa)} if hugepages else {}
    device = None
    devices: dict[str, tuple[Device, ...]] = {}
    if rng.random() < 0.3:
        device = rng.choice(("nvidia.com/gpu", "example.com/nic"))
        per = rng.choice((1, 2, 4))
        devices[device] = tuple(
            Device(f"dev-{n}-{i}", (n,)) for n in range(numa) for i in range(per)
        )
    kubelet = KubeletConfig.from_mapping(dict(fields))
    store = InMemoryStore()
    node = Node(
        topology=topology,
        kubelet=kubelet,
        store=store,
        resources=NodeResources(devices=devices, hugepages={n: dict(p) for n, p in pools.items()}),
    )
    active: list = []
    node.start(active_pods=lambda: list(active))
    allocatable = node_allocatable(
        topology, kubelet, hugepages=pools, devices=node.snapshot().devices
    )
    docs = []
    for number in range(rng.randint(0, 3 * numa)):
        uid = f"{name}-p{number}"
        doc = pod_doc(
            uid,
            name,
            random_containers(
                rng,
                cpus_per_numa=cores * 2,
                numa_memory=numa_memory,
                device=device,
                hugepages=hugepages,
                big=False,
            ),
        )
        pod = pod_from_manifest(doc)
        if resource_fit(pod, active, allocatable):
            continue
        if node.admit(pod).admitted:
            active.append(pod)
            docs.append(doc)
    if rng.random() < 0.3:  # a finished pod still listed by the API server
        done = pod_doc(
            f"{name}-done",
            name,
            [{"name": "c0", "resources": _resources("1", "1Gi", True)}],
            phase="Succeeded",
        )
        docs.append(done)
    checkpoints = {
        "cpu_manager_state": CheckpointFile(
            "cpu_manager_state", PATHS["cpu_manager_state"], store.data or b"", None
        ),
        "memory_manager_state": CheckpointFile(
            "memory_manager_state", PATHS["memory_manager_state"], _memory_checkpoint(node), None
        ),
        "kubelet_internal_checkpoint": CheckpointFile(
            "kubelet_internal_checkpoint",
            PATHS["kubelet_internal_checkpoint"],
            _device_checkpoint(node),
            None,
        ),
    }
    snapshot = NodeSnapshot(
        node_name=name,
        collected_at="2026-12-07T00:00:00Z",
        tool="bench",
        root="/",
        kubelet_root="/var/lib/kubelet",
        machine=raw,
        config=ConfigView(fields={k: {"value": v, "from": "file"} for k, v in fields.items()}),
        checkpoints=checkpoints,
        pod_resources=kubelet_answers(node, kubelet, docs, topology),
        pods=reduce_pod_list({"kind": "PodList", "items": docs}, node_name=name)[1],
        sources=(Source("machine", "ok"),),
        hugepages=pools,
    )
    drawn = {
        "numa": numa, "cores_per_numa": cores, "cpu": fields["cpuManagerPolicy"],
        "memory": "Static" if static_memory else "None", "tm": fields["topologyManagerPolicy"],
        "scope": fields["topologyManagerScope"],
        "full_pcpus_only": "cpuManagerPolicyOptions" in fields,
        "hugepages": hugepages, "device": device, "pods": len(docs),
        "numa_memory": numa_memory,
    }  # fmt: skip
    return snapshot, drawn


# --- cases ----------------------------------------------------------------------------


def _memory_capacity(snapshot: NodeSnapshot) -> dict[int, dict[str, int]]:
    topology = snapshot.topology()
    out: dict[int, dict[str, int]] = {}
    for numa in topology.numa_nodes:
        pools = dict(snapshot.hugepages.get(numa.id, {}))
        out[numa.id] = {"memory": numa.memory_bytes or 0, **pools}
    return out


def case(
    case_id: str, snapshot: NodeSnapshot, pod: dict[str, Any], drawn: dict[str, Any]
) -> dict[str, Any]:
    restored = restore_node(snapshot)
    kubelet = restored.kubelet
    topology = restored.topology
    state = restored.node.snapshot()
    allocatable = node_allocatable(
        topology, kubelet, hugepages=snapshot.hugepages, devices=state.devices
    )
    parsed = pod_from_manifest(pod)
    verdict = what_if(snapshot, [parsed]).verdicts[0]
    failures = resource_fit(parsed, restored.active, allocatable)
    objects = {"ours": node_resource_topology(snapshot)}
    if snapshot.pod_resources is not None and snapshot.pod_resources.allocatable is not None:
        pods = {(p.pod.namespace, p.pod.name): p.pod for p in snapshot.pods or ()}
        objects["nfd"] = nfd_object(
            name=snapshot.node_name,
            topology=topology,
            answers=snapshot.pod_resources,
            pods=pods,
            memory_capacity=_memory_capacity(snapshot),
            policy=kubelet.topology_manager_policy,
            scope=kubelet.topology_manager_scope,
        )
    scheduler_pod = {k: v for k, v in pod.items() if k != "status"}
    scheduler_pod["spec"] = {k: v for k, v in pod["spec"].items() if k != "nodeName"}
    return {
        "id": case_id,
        "drawn": drawn,
        "node": {
            "name": snapshot.node_name,
            "allocatable": {k: quantity_text(k, v) for k, v in allocatable.allocatable.items()},
        },
        "pod": scheduler_pod,
        "guaranteed": qos_class(parsed) is QoSClass.GUARANTEED,
        "kubelet": {"admitted": verdict.admitted, "reason": verdict.reason},
        "fit": {"ok": not failures, "reason": failures[0].reason if failures else ""},
        "objects": objects,
    }


def fixture_pods(node: str) -> list[dict[str, Any]]:
    """Candidate pods for the fixture nodes: the issue's 2-CPU / 80 GiB pod, CPU counts
    around a NUMA node's size, fractional and shared pods, GPU pods."""
    sizes = (("2", "80Gi"), ("1", "1Gi"), ("4", "8Gi"), ("6", "8Gi"), ("7", "8Gi"), ("8", "8Gi"),
             ("500m", "1Gi"), ("2", "60Gi"), ("2", "70Gi"))  # fmt: skip
    shapes = [[{"name": "c0", "resources": _resources(c, m, True)}] for c, m in sizes]
    shapes.append([{"name": "c0", "resources": _resources("2", "2Gi", False)}])
    gpu = "nvidia.com/gpu"
    shapes += [
        [{"name": "c0", "resources": _resources("2", "4Gi", True, **{gpu: n})}] for n in "123"
    ]
    shapes.append(
        [{"name": "c0", "resources": _resources("1", "1Gi", True, **{"hugepages-2Mi": "1Gi"})}]
    )
    return [pod_doc(f"cand-{i}", node, c) for i, c in enumerate(shapes)]


def fixture_cases() -> Iterator[dict[str, Any]]:
    for name in ("kubeadm", "gpu", "memory-static", "offline-cpus"):
        snapshot = replace(fixture_snapshot(name), pod_resources=fixture_answers(NODES_DIR / name))
        if snapshot.pod_resources is not None:
            snapshot = _with_kubelet_memory(snapshot)
        for index, pod in enumerate(fixture_pods(snapshot.node_name)):
            yield case(f"fixture/{name}/{index}", snapshot, pod, {"fixture": name})


def _with_kubelet_memory(snapshot: NodeSnapshot) -> NodeSnapshot:
    """The fixtures' answers carry no memory blocks; the kubelet's list the Static memory
    manager's: allocatable per NUMA node and resource, and each container's blocks."""
    answers = snapshot.pod_resources
    assert answers is not None
    assert answers.allocatable is not None
    memory = restore_node(snapshot).node.snapshot().memory
    if memory is None:
        return snapshot
    blocks: list[MemoryBlock] = []
    for numa, held in sorted(memory.nodes.items()):
        blocks += [
            MemoryBlock(name, t.allocatable, (numa,)) for name, t in sorted(held.tables.items())
        ]
    uids = {(p.pod.namespace, p.pod.name): p.pod.uid for p in snapshot.pods or ()}
    listed = []
    for pod in answers.pods or ():
        uid = uids.get((pod.namespace, pod.name))
        containers = []
        for container in pod.containers:
            held_blocks = next(
                (b for k, b in memory.blocks.items()
                 if k.pod_uid == uid and k.container_name == container.name),
                (),
            )  # fmt: skip
            own = tuple(
                MemoryBlock(b.resource, b.size, tuple(b.numa_affinity)) for b in held_blocks
            )
            containers.append(replace(container, memory=own))
        listed.append(replace(pod, containers=tuple(containers)))
    allocatable = replace(answers.allocatable, memory=tuple(blocks))
    return replace(
        snapshot, pod_resources=replace(answers, allocatable=allocatable, pods=tuple(listed))
    )


def generated_cases(count: int, seed: int) -> Iterator[dict[str, Any]]:
    rng = random.Random(seed)
    for index in range(count):
        snapshot, drawn = random_node(rng, index)
        containers = random_containers(
            rng, cpus_per_numa=drawn["cores_per_numa"] * 2, numa_memory=drawn["numa_memory"],
            device=drawn["device"], hugepages=drawn["hugepages"], big=True,
        )  # fmt: skip
        init = None
        if rng.random() < 0.25:  # an init container of the same QoS kind, or a sidecar
            first = dict(containers[0], name="init0")
            if rng.random() < 0.3:
                first["restartPolicy"] = "Always"
            init = [first]
        pod = pod_doc(f"cand-{index}", snapshot.node_name, containers, init=init)
        yield case(f"fleet/{index}", snapshot, pod, drawn)


# --- comparing ------------------------------------------------------------------------


def _policies(record: dict[str, Any]) -> dict[str, str]:
    return {a["name"]: a["value"] for a in record["objects"]["ours"]["attributes"]}


def _zoned(document: dict[str, Any], resource: str) -> list[int]:
    """Each zone's available amount of ``resource`` (millicores for cpu), where listed."""
    from cpumanager.core.quantity import parse_quantity

    found = []
    for zone in document["zones"]:
        for item in zone["resources"]:
            if item["name"] == resource:
                amount = parse_quantity(str(item["available"]))
                found.append(int(amount * 1000) if resource == "cpu" else int(amount))
    return found


def _fractional_guaranteed_cpu(record: dict[str, Any]) -> bool:
    if not record["guaranteed"]:
        return False
    for container in record["pod"]["spec"]["containers"]:
        cpu = container.get("resources", {}).get("requests", {}).get("cpu", "")
        if cpu.endswith("m") and int(cpu[:-1]) % 1000:
            return True
    return False


def classify(record: dict[str, Any], name: str, filter_ok: bool) -> str:
    """Why the scheduler (fit + plugin) and the kubelet disagree on a case."""
    policies = _policies(record)
    kubelet = record["kubelet"]
    document = record["objects"][name]
    if not kubelet["admitted"]:
        if kubelet["reason"] == "SMTAlignmentError":
            return "plugin limitation: full-pcpus-only refuses a CPU count that is not whole cores"
        if policies["topologyManagerPolicy"] != "single-numa-node":
            return (
                "plugin limitation: it filters only under single-numa-node ("
                f"{policies['topologyManagerPolicy']} refused: {kubelet['reason']})"
            )
        sidecars = [
            c for c in record["pod"]["spec"].get("initContainers", [])
            if c.get("restartPolicy") == "Always"
        ]  # fmt: skip
        if sidecars and filter_ok:
            return (
                "plugin limitation: a restartable init container (sidecar) is checked alone, "
                "not charged before the app containers"
            )
        return "scheduler admits what the kubelet refuses: " + kubelet["reason"]
    if not _zoned(document, "memory"):
        return "memory in no zone: every pod asking for memory is refused"
    if len(_zoned(document, "cpu")) < len(document["zones"]):
        return "cpu in no zone or not in every zone (CPU manager none: no allocatable CPU ids)"
    if policies["cpuManagerPolicy"] == "none" and max(_zoned(document, "cpu")) == 0:
        return "cpu 0 in every zone under the none CPU manager"
    if not record["guaranteed"]:
        return "scheduler refuses a non-Guaranteed pod the kubelet admits (other)"
    if _fractional_guaranteed_cpu(record):
        return (
            "plugin limitation: a Guaranteed pod's fractional CPU is checked per zone; "
            "the kubelet runs it in the shared pool"
        )
    return "scheduler refuses what the kubelet admits (other)"


def compare(cases_path: Path, verdicts_path: Path) -> dict[str, Any]:
    records = {}
    for line in cases_path.read_text().splitlines():
        record = json.loads(line)
        records[record["id"]] = record
    by_object: dict[str, Counter[str]] = {}
    listed: dict[str, list[dict[str, Any]]] = {}
    scores: dict[str, dict[str, int]] = {}
    by_config: dict[str, dict[str, Counter[str]]] = {}
    for line in verdicts_path.read_text().splitlines():
        verdict = json.loads(line)
        record = records[verdict["id"]]
        name = verdict["object"]
        counts = by_object.setdefault(name, Counter())
        scores.setdefault(verdict["id"], {})[name] = verdict["score"]
        if verdict.get("error") and verdict["filter"] == "":
            counts["harness error"] += 1
            continue
        filter_ok = verdict["filter"] == "ok"
        scheduler = filter_ok and record["fit"]["ok"]
        kubelet = record["kubelet"]["admitted"]
        counts["cases"] += 1
        source = verdict["id"].split("/")[0]
        counts[f"{source}: cases"] += 1
        policies = _policies(record)
        config = f"cpu {policies['cpuManagerPolicy']}, memory {policies['memoryManagerPolicy']}"
        configs = by_config.setdefault(name, {}).setdefault(config, Counter())
        configs["cases"] += 1
        if scheduler == kubelet:
            counts["agree"] += 1
            counts[f"{source}: agree"] += 1
            configs["agree"] += 1
            continue
        cause = classify(record, name, filter_ok)
        counts["disagree"] += 1
        counts[cause] += 1
        listed.setdefault(name, []).append(
            {
                "id": verdict["id"],
                "filter": verdict["filter"],
                "kubelet": record["kubelet"]["reason"] or "admitted",
                "cause": cause,
            }
        )
    return {
        "counts": {name: dict(sorted(c.items())) for name, c in sorted(by_object.items())},
        "by_config": {
            name: {config: dict(sorted(c.items())) for config, c in sorted(per.items())}
            for name, per in sorted(by_config.items())
        },
        "disagreements": listed,
        "score_differs": sum(1 for s in scores.values() if len(set(s.values())) > 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    make = sub.add_parser("cases", help="write the cases (JSON lines)")
    make.add_argument("--nodes", type=int, default=1000)
    make.add_argument("--seed", type=int, default=24)
    make.add_argument("--out", type=Path, required=True)
    check = sub.add_parser("compare", help="count agreements from the harness's verdicts")
    check.add_argument("cases", type=Path)
    check.add_argument("verdicts", type=Path)
    check.add_argument("--figures", type=Path, default=None)
    args = parser.parse_args()
    if args.command == "cases":
        with args.out.open("w") as out:
            written = 0
            for record in [*fixture_cases(), *generated_cases(args.nodes, args.seed)]:
                out.write(json.dumps(record, sort_keys=True) + "\n")
                written += 1
        print(f"wrote {written} cases to {args.out}")
        return 0
    result = compare(args.cases, args.verdicts)
    print(json.dumps(result["counts"], indent=1))
    print(json.dumps(result["by_config"], indent=1))
    for name, items in sorted(result["disagreements"].items()):
        print(f"\n{name}: {len(items)} disagreements")
        for cause, n in Counter(i["cause"] for i in items).most_common():
            print(f"  {n:5d}  {cause}")
    if args.figures is not None:
        args.figures.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    raise SystemExit(main())
