"""Differential campaign: random nodes and pod sequences through our CPU and topology
managers (``Node`` at kubelet release 1.32) and through a harness built from the kubelet's
own Go code (v1.32).

    python bench/diff_kubelet_cpu.py --seed S --cases N --harness BIN [--cases-out FILE]
    python bench/diff_kubelet_cpu.py --seed S --cases N --answers FILE
    python bench/diff_kubelet_cpu.py --cases-in FILE --answers FILE   (a hand-made case)

Each case is a machine (1-4 sockets, NUMA nodes in either nesting and past the 8-node
limit, SMT 1/2/4, hybrid cores and uneven sockets, uncore cache groups per node or per
socket, linear, round-robin, sibling-adjacent or shuffled CPU numbering, NUMA distances), a
kubelet configuration (explicit or whole/fractional/zero reservation, static policy options
in every combination, some refused, topology manager policy, scope and options, feature
gates) and a sequence of steps (Guaranteed, fractional, Burstable and BestEffort pods, init
and sidecar containers, removals, kubelet restarts). Both sides answer: whether the managers
start (or the refusal's text), each pod's admission with the reason and message, each
container's exclusive CPUs, each restart's verdict, the allocatable CPUs, and the
``cpu_manager_state`` bytes at the end. A refusal agrees when the texts are equal, or ours
is the kubelet's followed by a remedy after "; " (a restore refusal: the kubelet's text
inside ours); those are counted apart. Every difference is printed with the case id; the
exit status is 1 when there is one. See bench/README.md for the harness.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cpumanager.adapters.memory_store import InMemoryStore
from cpumanager.core import versions
from cpumanager.core.ids import ContainerID
from cpumanager.core.topology import CPUInfo, CPUTopology, NUMANodeInfo
from cpumanager.core.workload import Pod
from cpumanager.errors import CpuManagerError
from cpumanager.formats.kubelet_config import KubeletConfig
from cpumanager.formats.manifest import pod_from_manifest
from cpumanager.manager.node import Node
from cpumanager.nodeview.version_preflight import config_findings

RELEASE = (1, 32)
CPU_OPTIONS = (
    "full-pcpus-only",
    "distribute-cpus-across-numa",
    "align-by-socket",
    "distribute-cpus-across-cores",
    "strict-cpu-reservation",
    "prefer-align-cpus-by-uncorecache",
)
ALPHA_OPTIONS = frozenset(CPU_OPTIONS[1:])
TOPOLOGY_POLICIES = ("none", "best-effort", "restricted", "single-numa-node")

# --- the generator -----------------------------------------------------------------------


def _machine(rng: random.Random) -> dict[str, Any]:
    """A machine: CPU records (core = its lowest thread, as the kubelet names cores) and
    NUMA nodes with a distance row each."""
    sockets = rng.choice((1, 1, 2, 2, 2, 4))
    if rng.random() < 0.25 and sockets > 1:
        per_numa = rng.choice([d for d in (2, 4) if sockets % d == 0])  # sockets per NUMA
        numa_count = sockets // per_numa
        socket_numa = [s // per_numa for s in range(sockets)]
        numa_sockets = {
            n: [s for s in range(sockets) if socket_numa[s] == n] for n in range(numa_count)
        }
        layout = f"{per_numa}-sockets-per-numa"
    else:
        per_socket = rng.choice([k for k in (1, 1, 2, 4) if sockets * k <= 8])
        if sockets <= 2 and rng.random() < 0.04:
            per_socket = 8 if sockets == 2 else rng.choice((9, 12))  # past the NUMA limit
        numa_count = sockets * per_socket
        numa_sockets = {n: [n // per_socket] for n in range(numa_count)}
        layout = f"{per_socket}-numa-per-socket"
    threads = rng.choice((1, 2, 2, 2, 2, 4)) if rng.random() < 0.9 else 4
    budget = (160 if rng.random() < 0.1 else 64) // threads
    cores_per_unit = rng.randint(
        1,
        max(
            1, min(6 if budget < 100 else 20, budget // (numa_count * max(1, len(numa_sockets[0]))))
        ),
    )
    # each (NUMA node, socket) pair holds cores_per_unit cores
    units = [(n, s) for n in range(numa_count) for s in numa_sockets[n]]
    groups = rng.choice((1, 1, 2, 3))
    extras: list[str] = []
    uneven = cores_per_unit > 1 and rng.random() < 0.1
    socket_l3 = rng.random() < 0.08
    hybrid = threads > 1 and rng.random() < 0.08
    cores: list[tuple[int, int, int]] = []  # (numa, socket, l3)
    l3_next = 0
    for unit, (numa, socket) in enumerate(units):
        count = cores_per_unit - 1 if uneven and unit == 0 else cores_per_unit
        split = max(1, min(groups, count))
        cores.extend(
            (numa, socket, 1000 + socket if socket_l3 else l3_next + index * split // count)
            for index in range(count)
        )
        l3_next += split
    for flag, name in ((uneven, "uneven"), (socket_l3, "socket-l3"), (hybrid, "hybrid")):
        if flag:
            extras.append(name)
    numbering = rng.choice(("linear", "round-robin", "siblings-adjacent", "shuffled"))
    order = list(range(len(cores)))
    if numbering == "round-robin" and sockets > 1:
        by_socket: dict[int, list[int]] = {}
        for index, (_, socket, _) in enumerate(cores):
            by_socket.setdefault(socket, []).append(index)
        order = []
        lists = [by_socket[s] for s in sorted(by_socket)]
        for position in range(max(len(x) for x in lists)):
            order.extend(x[position] for x in lists if position < len(x))
    ncores = len(cores)
    names = list(range(ncores * threads))
    if numbering == "shuffled":
        rng.shuffle(names)
    cpus: list[dict[str, int]] = []
    for rank, core_index in enumerate(order):
        numa, socket, l3 = cores[core_index]
        if numbering == "siblings-adjacent":
            ids = [rank * threads + t for t in range(threads)]
        else:
            ids = [rank + t * ncores for t in range(threads)]
        if hybrid and rank % 3 == 0:
            ids = ids[:1]  # a core of one thread (hybrid parts)
        ids = [names[i] for i in ids]
        cpus.extend(
            {"cpu": cpu, "core": min(ids), "socket": socket, "numa": numa, "l3": l3} for cpu in ids
        )
    cpus.sort(key=lambda r: r["cpu"])
    far = {}
    numa = []
    for a in range(numa_count):
        row = []
        for b in range(numa_count):
            if a == b:
                row.append(10)
                continue
            key = (min(a, b), max(a, b))
            if key not in far:
                same = set(numa_sockets[a]) & set(numa_sockets[b])
                far[key] = rng.choice((11, 12)) if same else rng.choice((20, 21, 28, 32))
            row.append(far[key])
        numa.append({"id": a, "distances": row})
    return {
        "cpus": cpus,
        "numa": numa,
        "shape": f"{sockets}s/{numa_count}n {layout} {threads}t {groups}l3 {numbering}"
        + "".join(f" {extra}" for extra in extras),
    }


def _config(rng: random.Random, machine: dict[str, Any]) -> dict[str, Any]:
    ids = [r["cpu"] for r in machine["cpus"]]
    cfg: dict[str, Any] = {
        "topologyManagerPolicy": rng.choice(TOPOLOGY_POLICIES),
        "topologyManagerScope": rng.choice(("container", "container", "pod")),
    }
    topo_options: dict[str, str] = {}
    if rng.random() < 0.35:
        topo_options["prefer-closest-numa-nodes"] = rng.choice(("true", "true", "false"))
    if rng.random() < 0.15:
        topo_options["max-allowable-numa-nodes"] = rng.choice(("8", "8", "16", "4"))
    if rng.random() < 0.02:
        topo_options["no-such-topology-option"] = "true"
    cfg["topologyManagerPolicyOptions"] = topo_options
    options: dict[str, str] = {}
    for name in CPU_OPTIONS:
        if rng.random() < 0.22:
            options[name] = "true" if rng.random() < 0.95 else rng.choice(("false", "yes"))
    spread = "distribute-cpus-across-cores"
    if spread in options and len(options) > 1 and rng.random() < 0.7:
        del options[spread]  # it excludes three others: keep most cases startable
    cfg["cpuManagerPolicyOptions"] = options
    gates: dict[str, bool] = {}
    if any(name in ALPHA_OPTIONS for name in options):
        gates["CPUManagerPolicyAlphaOptions"] = rng.random() < 0.95
    if rng.random() < 0.03:
        gates["CPUManagerPolicyBetaOptions"] = False
    if "max-allowable-numa-nodes" in topo_options and rng.random() < 0.1:
        gates["TopologyManagerPolicyBetaOptions"] = False
    cfg["featureGates"] = gates
    if rng.random() < 0.5:
        count = rng.choice((1, 1, 2, 2, 3, 4))
        roll = rng.random()
        if roll < 0.45:
            pick = rng.choice(ids)
            first = next(r for r in machine["cpus"] if r["cpu"] == pick)
            chosen = sorted(r["cpu"] for r in machine["cpus"] if r["core"] == first["core"])
        elif roll < 0.55 and len(machine["numa"]) > 1:  # a whole NUMA node
            node = rng.randrange(len(machine["numa"]))
            chosen = sorted(r["cpu"] for r in machine["cpus"] if r["numa"] == node)
        else:
            chosen = sorted(rng.sample(ids, min(count, len(ids))))
        cfg["reservedSystemCPUs"] = ",".join(str(c) for c in chosen)
        cfg["reservedCPUQuantity"] = str(len(chosen))
    else:
        cfg["reservedSystemCPUs"] = ""
        cfg["reservedCPUQuantity"] = rng.choice(
            ("1", "1", "2", "3", "1500m", "4", "250m", "0", str(max(1, len(ids) // 4)), "1", "2")
        )
    return cfg


def _resources(cpu: str | None, *, limit: str | None = None, memory: bool = True) -> dict[str, Any]:
    requests: dict[str, str] = {}
    limits: dict[str, str] = {}
    if cpu is not None:
        requests["cpu"] = cpu
        if limit != "":
            limits["cpu"] = limit or cpu
    if memory:
        requests["memory"] = limits["memory"] = "1Gi"
    out: dict[str, Any] = {}
    if requests:
        out["requests"] = requests
    if limits:
        out["limits"] = limits
    return out


def _pod(rng: random.Random, uid: str, machine_cpus: int) -> dict[str, Any]:
    kind = rng.choices(
        ("guaranteed", "fractional", "burstable", "besteffort"), weights=(70, 10, 12, 8)
    )[0]
    big = max(1, machine_cpus - 2)

    def amount() -> str:
        roll = rng.random()
        if roll < 0.6:
            return str(rng.randint(1, 4))
        if roll < 0.9:
            return str(rng.randint(1, max(1, machine_cpus // 2)))
        return str(rng.randint(max(1, big // 2), big))

    def container(name: str) -> dict[str, Any]:
        if kind == "guaranteed":
            whole = amount()
            spelling = rng.choice((whole,) * 16 + (f"{whole}000m", f"{whole}.0", f"{whole}.5"))
            resources = _resources(spelling, memory=rng.random() > 0.04)
        elif kind == "fractional":
            cpu = rng.choice(("500m", "1500m", amount(), "2500m"))
            resources = _resources(cpu)
        elif kind == "burstable":
            resources = rng.choice(
                (
                    _resources("1", limit="2"),
                    _resources(amount(), limit=""),
                    _resources(None),
                )
            )
        else:
            resources = {}
        return {"name": name, "resources": resources}

    spec: dict[str, Any] = {
        "containers": [container(f"c{i}") for i in range(rng.choice((1, 1, 1, 2, 3)))]
    }
    inits = rng.choice((0, 0, 0, 1, 2))
    if inits:
        spec["initContainers"] = []
        for i in range(inits):
            init = container(f"i{i}")
            if rng.random() < 0.4:
                init["restartPolicy"] = "Always"
            spec["initContainers"].append(init)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": uid, "namespace": "default", "uid": uid},
        "spec": spec,
    }


def generate(seed: int, count: int, step_range: tuple[int, int] = (3, 16)) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    cases = []
    for index in range(count):
        machine = _machine(rng)
        cfg = _config(rng, machine)
        steps: list[dict[str, Any]] = []
        pods: list[str] = []
        for n in range(rng.randint(*step_range)):
            if pods and rng.random() < 0.2:
                steps.append({"op": "remove", "uid": pods.pop(rng.randrange(len(pods)))})
                continue
            if n > 1 and rng.random() < 0.08:
                steps.append({"op": "restart"})
                continue
            uid = f"s{seed}c{index}p{n}"
            pods.append(uid)
            steps.append({"op": "add", "pod": _pod(rng, uid, len(machine["cpus"]))})
        cases.append({"id": f"s{seed}-c{index}", "machine": machine, **cfg, "steps": steps})
    return cases


# --- our side ----------------------------------------------------------------------------


def _kubelet_raw(case: dict[str, Any]) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "cpuManagerPolicy": "static",
        "topologyManagerPolicy": case["topologyManagerPolicy"],
        "topologyManagerScope": case["topologyManagerScope"],
    }
    if case["topologyManagerPolicyOptions"]:
        raw["topologyManagerPolicyOptions"] = case["topologyManagerPolicyOptions"]
    if case["cpuManagerPolicyOptions"]:
        raw["cpuManagerPolicyOptions"] = case["cpuManagerPolicyOptions"]
    if case["featureGates"]:
        raw["featureGates"] = case["featureGates"]
    if case["reservedSystemCPUs"]:
        raw["reservedSystemCPUs"] = case["reservedSystemCPUs"]
    else:
        raw["systemReserved"] = {"cpu": case["reservedCPUQuantity"]}
    return raw


def _topology(machine: dict[str, Any]) -> CPUTopology:
    records = [
        CPUInfo(r["cpu"], r["core"], r["socket"], r["numa"], r["l3"]) for r in machine["cpus"]
    ]
    nodes = [
        NUMANodeInfo(n["id"], 64 << 30, dict(enumerate(n["distances"]))) for n in machine["numa"]
    ]
    return CPUTopology(records, numa_nodes=nodes)


def ours(case: dict[str, Any]) -> dict[str, Any]:
    """The case through our Node, in the harness' answer shape."""
    answer: dict[str, Any] = {"id": case["id"], "started": False, "steps": []}
    store = InMemoryStore()
    active: list[Pod] = []
    try:
        kubelet = KubeletConfig.from_mapping(_kubelet_raw(case))
        findings = config_findings(kubelet, RELEASE, option_levels=False)
        refusals = [f.text for f in findings if f.verdict == "refuse"]
        if refusals:
            answer["errors"] = ["; ".join(refusals)]
            return answer
        kubelet = kubelet.with_gate_values(versions.gate_values(RELEASE, kubelet.feature_gates))
        topology = _topology(case["machine"])
        node = Node(topology=topology, kubelet=kubelet, store=store, release=RELEASE)
        node.start(active_pods=lambda: tuple(active))
    except CpuManagerError as err:
        answer["errors"] = [err.message]
        return answer
    answer["started"] = True
    pods: dict[str, Pod] = {}
    for step in case["steps"]:
        if step["op"] == "add":
            pod = pod_from_manifest(step["pod"])
            pods[pod.uid] = pod
            active.append(pod)
            result = node.admit(pod, explain=False)
            if not result.admitted:
                active.remove(pod)
            else:
                for container in pod.all_containers():
                    node.container_started(
                        pod, container, ContainerID(f"{pod.uid}/{container.name}")
                    )
            snapshot = node.cpu_state
            containers = []
            for container in pod.all_containers():
                held = snapshot.cpuset_of(pod.uid, container.name)
                containers.append(
                    {"name": container.name, "cpus": "" if held is None else str(held)}
                )
            answer["steps"].append(
                {
                    "uid": pod.uid,
                    "op": "add",
                    "admitted": result.admitted,
                    "reason": result.reason,
                    "message": result.message,
                    "containers": containers,
                }
            )
        elif step["op"] == "restart":
            node, ok = _restart(
                node, topology=topology, kubelet=kubelet, store=store, active=active, answer=answer
            )
            if not ok:
                answer["allocatable"] = ""
                break
        else:
            found = pods.get(step["uid"])
            if found is None:
                continue
            ids = [ContainerID(f"{found.uid}/{c.name}") for c in found.all_containers()]
            node.remove_pod(found.uid, container_ids=ids, reclaim=False)
            active[:] = [p for p in active if p.uid != found.uid]
            answer["steps"].append({"uid": step["uid"], "op": "remove", "admitted": True})
    else:
        answer["allocatable"] = str(node._cpu_manager.allocatable_cpus())
    data = store.data
    answer["checkpoint"] = base64.b64encode(data).decode() if data is not None else ""
    return answer


def _restart(
    node: Node,
    *,
    topology: CPUTopology,
    kubelet: KubeletConfig,
    store: InMemoryStore,
    active: list[Pod],
    answer: dict[str, Any],
) -> tuple[Node, bool]:
    """A kubelet restart: a new Node over the same store, the running containers handed
    over, every active pod admitted again (all of them active meanwhile, as the simulator
    models it). False when the new node does not start."""
    step: dict[str, Any] = {"uid": "", "op": "restart", "admitted": True, "reason": ""}
    saved = node.stop()
    running = [
        (ContainerID(f"{pod.uid}/{c.name}"), pod.uid, c.name)
        for pod in active
        for c in pod.all_containers()
    ]
    try:
        node = Node(topology=topology, kubelet=kubelet, store=store, state=saved, release=RELEASE)
        node.start(active_pods=lambda: tuple(active), running_containers=running)
    except CpuManagerError as err:
        step.update(admitted=False, message=err.message)
        answer["steps"].append(step)
        return node, False
    message = ""
    for pod in list(active):
        result = node.admit(pod, explain=False)
        if not result.admitted:
            message += f"{pod.uid}: {result.reason}: {result.message}; "
            continue
        for container in pod.all_containers():
            node.container_started(pod, container, ContainerID(f"{pod.uid}/{container.name}"))
    step["message"] = message
    answer["steps"].append(step)
    return node, True


# --- comparison --------------------------------------------------------------------------


@dataclass
class Tally:
    cases: int = 0
    started: int = 0
    refused: int = 0
    pods: int = 0
    admitted: int = 0
    rejected: int = 0
    containers: int = 0
    agreements: int = 0
    remedies: int = 0
    restarts: int = 0
    wrapped: int = 0
    differences: list[str] = field(default_factory=list)
    kinds: Counter[str] = field(default_factory=Counter)


def compare(
    case: dict[str, Any], theirs: dict[str, Any], mine: dict[str, Any], tally: Tally
) -> None:
    cid = case["id"]
    shape = case["machine"]["shape"]
    where = (
        f"{cid} [{shape}; {case['topologyManagerPolicy']}/{case['topologyManagerScope']} "
        f"cpu={sorted(case['cpuManagerPolicyOptions'])} "
        f"topo={case['topologyManagerPolicyOptions']} "
        f"reserved={case['reservedSystemCPUs'] or case['reservedCPUQuantity']}]"
    )
    tally.cases += 1
    before = len(tally.differences)

    def differ(kind: str, text: str) -> None:
        tally.kinds[kind] += 1
        tally.differences.append(f"{where} {kind}: {text}")

    if theirs.get("panic"):
        differ("harness-panic", theirs["panic"])
        return
    if theirs["started"] != mine["started"]:
        differ(
            "start",
            f"kubelet started={theirs['started']} {theirs.get('errors')}; "
            f"ours started={mine['started']} {mine.get('errors')}",
        )
        return
    if not theirs["started"]:
        tally.refused += 1
        text = mine["errors"][0]
        if text in theirs["errors"]:
            tally.agreements += 1
        elif any(text.startswith(f"{go}; ") for go in theirs["errors"]):
            # the project's configuration errors: the kubelet's text, then a remedy
            tally.agreements += 1
            tally.remedies += 1
        else:
            differ("refusal-text", f"kubelet {theirs['errors']!r}; ours {text!r}")
        return
    tally.started += 1
    for go_step, py_step in zip(theirs["steps"], mine["steps"], strict=True):
        if go_step["op"] == "restart":
            tally.restarts += 1
            go_text, py_text = go_step["message"], py_step["message"]
            if go_step["admitted"] is py_step["admitted"] is False and go_text in py_text:
                # the kubelet's restore error inside ours (which names the file and a remedy)
                tally.wrapped += 1
            elif (go_step["admitted"], go_text) != (py_step["admitted"], py_text):
                differ(
                    "restart",
                    f"kubelet started={go_step['admitted']} {go_step['message']!r}; "
                    f"ours started={py_step['admitted']} {py_step['message']!r}",
                )
            continue
        if go_step["op"] != "add":
            continue
        tally.pods += 1
        uid = go_step["uid"]
        if go_step["admitted"] != py_step["admitted"]:
            differ(
                "admit",
                f"{uid}: kubelet admitted={go_step['admitted']} ({go_step['reason']}: "
                f"{go_step['message']}); ours admitted={py_step['admitted']} "
                f"({py_step['reason']}: {py_step['message']})",
            )
            break
        tally.admitted += go_step["admitted"]
        tally.rejected += not go_step["admitted"]
        if (go_step["reason"], go_step["message"]) != (py_step["reason"], py_step["message"]):
            differ(
                "reason",
                f"{uid}: kubelet {go_step['reason']}: {go_step['message']!r}; ours "
                f"{py_step['reason']}: {py_step['message']!r}",
            )
        for go_c, py_c in zip(go_step["containers"], py_step["containers"], strict=True):
            tally.containers += 1
            if go_c["cpus"] != py_c["cpus"]:
                differ(
                    "cpus",
                    f"{uid}/{go_c['name']}: kubelet {go_c['cpus']!r}; ours {py_c['cpus']!r}",
                )
    else:
        if theirs["allocatable"] != mine["allocatable"]:
            differ("allocatable", f"kubelet {theirs['allocatable']}; ours {mine['allocatable']}")
        if theirs["checkpoint"] != mine["checkpoint"]:
            go_bytes = base64.b64decode(theirs["checkpoint"]).decode(errors="replace")
            py_bytes = base64.b64decode(mine["checkpoint"]).decode(errors="replace")
            differ("checkpoint", f"kubelet {go_bytes}; ours {py_bytes}")
    if len(tally.differences) == before:
        tally.agreements += 1


def run_harness(binary: str, cases: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    text = "".join(json.dumps(c) + "\n" for c in cases)
    done = subprocess.run(
        [binary], input=text, capture_output=True, text=True, check=False, timeout=3600
    )
    if done.returncode != 0:
        sys.exit(f"the harness failed (exit {done.returncode}): {done.stderr.strip()[-500:]}")
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--harness", help="the kubelet harness binary")
    parser.add_argument("--answers", help="read the harness' answers from this file instead")
    parser.add_argument("--cases-out", help="write the cases here (JSONL)")
    parser.add_argument("--cases-in", help="read the cases from this file (JSONL) instead")
    parser.add_argument("--steps", default="3-16", help="steps per case, MIN-MAX")
    parser.add_argument("--only", help="run only this case id")
    parser.add_argument("--limit", type=int, default=40, help="differences printed")
    args = parser.parse_args(argv)
    if args.cases_in:
        text = Path(args.cases_in).read_text()
        cases = [json.loads(line) for line in text.splitlines() if line.strip()]
        for case in cases:
            case["machine"].setdefault("shape", "given")
    else:
        low, _, high = args.steps.partition("-")
        cases = generate(args.seed, args.cases, (int(low), int(high or low)))
    if args.only:
        cases = [c for c in cases if c["id"] == args.only]
    if args.cases_out:
        Path(args.cases_out).write_text("".join(json.dumps(c) + "\n" for c in cases))
    start = time.monotonic()
    if args.answers:
        answers = [json.loads(x) for x in Path(args.answers).read_text().splitlines() if x.strip()]
    elif args.harness:
        answers = run_harness(args.harness, cases)
    else:
        parser.error("give --harness BIN or --answers FILE")
    go_seconds = time.monotonic() - start
    by_id = {a["id"]: a for a in answers}
    tally = Tally()
    start = time.monotonic()
    mine_of: Callable[[dict[str, Any]], dict[str, Any]] = ours
    for case in cases:
        theirs = by_id.get(case["id"])
        if theirs is None:
            sys.exit(f"the harness gave no answer for {case['id']}")
        try:
            mine = mine_of(case)
        except Exception as err:  # an internal error is a finding
            tally.cases += 1
            tally.kinds["internal-error"] += 1
            tally.differences.append(f"{case['id']} internal-error: {type(err).__name__}: {err}")
            continue
        compare(case, theirs, mine, tally)
    py_seconds = time.monotonic() - start
    print(
        f"seed {args.seed}: {tally.cases} cases ({tally.started} started, {tally.refused} refused "
        f"by both), {tally.pods} pods ({tally.admitted} admitted, {tally.rejected} rejected), "
        f"{tally.containers} containers, {tally.restarts} restarts ({tally.wrapped} refused by "
        "both, the kubelet's text inside ours); "
        f"{tally.agreements} cases agree "
        f"({tally.remedies} refusals: the kubelet's text and a remedy after it), "
        f"{len(tally.differences)} differences {dict(tally.kinds)}; "
        f"harness {go_seconds:.1f} s, ours {py_seconds:.1f} s"
    )
    for line in tally.differences[: args.limit]:
        print("  " + line)
    return 1 if tally.differences else 0


if __name__ == "__main__":
    sys.exit(main())
