"""A pushed node restored once, and the key of everything its admissions read.

:func:`prepare` runs the restore of ``node whatif`` (``nodeanswers.restore``) once per
pushed snapshot and keeps its result as values (:class:`RestoredState`), the node's
allocatable (the fit predicate's) and the rule-out summary (``summary.py``). Each verdict
then starts a copy from those values instead of parsing the machine, the configuration and
the checkpoints again.

The **admission key** is a digest of everything an admission of a new pod reads on the
node, with the identities of the pods running there left out:

* the machine (the snapshot's machine document) and the hugepage pools;
* the kubelet configuration, as the typed value the managers are built from;
* the CPU manager's state: policy name, default set, and the assigned sets as a sorted
  list (not who holds them: the static policy reads a new pod's own entries and the
  default set only);
* the memory manager's per-NUMA tables and the blocks held (sorted, without owners), and
  the device manager's devices and the ids held (sorted, without owners);
* the fit predicate's inputs: the active pods' summed requests, their number, and the
  node's allocatable and capacity;
* the node's kubelet release.

After a start every entry in those states belongs to an active pod, and admitting a pod
whose uid is not among them never reads or releases another pod's entry, so two nodes with
one key give one verdict for a pod that runs on neither (a property test builds pairs of
nodes that differ in pod names, uids and container ids only). Pods that do run on a node
(:attr:`PreparedNode.held`) are judged on that node alone.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass

from cpumanager.core.cpuset import CPUSet
from cpumanager.core.ids import PodUID
from cpumanager.errors import CpuManagerError
from cpumanager.extender.summary import (
    NO_TABLE,
    AdmissionTable,
    NodeSummary,
    probe_pod,
    score,
    summarise,
)
from cpumanager.manager.node import NodeState
from cpumanager.nodeanswers.fit import Allocatable, node_allocatable
from cpumanager.nodeanswers.restore import Restored, RestoredState, restore_node
from cpumanager.nodeanswers.whatif import admitted_quietly, exclusive_cpus
from cpumanager.nodeview.snapshot import NodeSnapshot

__all__ = ["PreparedNode", "admission_key", "prepare", "try_prepare"]


@dataclass(frozen=True, slots=True)
class PreparedNode:
    """One pushed snapshot, restored: what every verdict on the node starts from."""

    restored: RestoredState
    allocatable: Allocatable
    key: str
    summary: NodeSummary
    held: frozenset[PodUID]  # pods active on the node or holding CPUs, memory or devices
    reserved: CPUSet  # reservedSystemCPUs, which the prioritize score leaves out
    base: Restored  # started once from ``restored``; verdicts run on its forks
    table: AdmissionTable = NO_TABLE  # verdicts of the common shape (``summary.py``)


def _sorted_repr(values: object) -> list[str]:
    assert isinstance(values, Mapping)
    return sorted(repr(v) for v in values.values())


def _state_part(state: NodeState) -> list[object]:
    cpu = state.cpu
    part: list[object] = [
        cpu.policy_name,
        str(cpu.default_cpuset),
        sorted(str(cpus) for held in cpu.assignments.values() for cpus in held.values()),
    ]
    memory = state.memory
    if memory is None:
        part.append(None)
    else:
        nodes = [repr((n, memory.nodes[n])) for n in sorted(memory.nodes)]
        part.append([nodes, _sorted_repr(memory.blocks), repr(memory.reusable_pod)])
    devices = state.devices
    if devices is None:
        part.append(None)
    else:
        listed = [repr((r, sorted(devices.devices[r].items()))) for r in sorted(devices.devices)]
        held = sorted(repr(sorted((r, sorted(ids)) for r, ids in a.items())) for a in
                      devices.allocations.values())  # fmt: skip
        part.append([repr(devices.numa_node_ids), listed, held, repr(devices.reusable_pod)])
    return part


def admission_key(snapshot: NodeSnapshot, restored: RestoredState, allocatable: Allocatable) -> str:
    """The digest described in the module docstring."""
    usage = restored.usage
    parts: list[object] = [
        json.dumps(snapshot.machine, sort_keys=True, default=str),
        repr(sorted((n, sorted(p.items())) for n, p in restored.hugepages.items())),
        repr(restored.kubelet),
        _state_part(restored.state),
        sorted(usage.items()),
        len(restored.active),
        sorted(allocatable.allocatable.items()),
        sorted(allocatable.capacity.items()),
        snapshot.kubelet_version,
    ]
    text = json.dumps(parts, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _held(restored: RestoredState) -> frozenset[PodUID]:
    state = restored.state
    uids = {p.uid for p in restored.active} | set(state.cpu.assignments)
    if state.memory is not None:
        uids |= {k.pod_uid for k in state.memory.blocks}
    if state.devices is not None:
        uids |= {k.pod_uid for k in state.devices.allocations}
    return frozenset(uids)


# The admission table's bounds: machines of at most this many NUMA nodes, probes of at most
# this many CPUs (larger pods go to the exact check); a push probes at most TABLE_COUNTS pods.
TABLE_NUMA_LIMIT = 8
TABLE_COUNTS = 64


def admission_table(
    base: Restored, allocatable: Allocatable, summary: NodeSummary, reserved: CPUSet
) -> AdmissionTable:
    """The exact check's verdicts on the probe pods (``summary.py``): one admission of a
    probe of each exclusive CPU count up to the free exclusive CPUs, on copies of ``base``."""
    if base.kubelet.memory_manager_policy == "Static":
        return NO_TABLE  # memory hints would read the pod's memory too
    topology = base.topology
    if len(topology.numa_nodes) > TABLE_NUMA_LIMIT:
        return NO_TABLE  # each probe merges over every NUMA node: such pushes stay cheap
    shared = score(topology, base.node.cpu_state.default_cpuset - reserved, CPUSet())
    scores: list[int] = []
    group = summary.smt_group
    one_node = max(summary.numa_free, default=0) if summary.numa_free is not None else None
    # beyond the free exclusive CPUs rule 2 refuses, beyond the CPU headroom rule 1 does
    top = min(summary.exclusive_free or 0, summary.free.get("cpu", 0) // 1000, TABLE_COUNTS)
    for count in range(1, top + 1):
        if (group and count % group) or (one_node is not None and count > one_node):
            scores.append(-1)  # the summary's rules refuse such pods before the table is read
            continue
        probe = probe_pod(count)
        try:
            restored = base.fork(explained=False)
            if not admitted_quietly(restored, [probe], allocatable):
                scores.append(-1)
                continue
        except CpuManagerError:
            scores.append(-1)
            continue
        state = restored.node.cpu_state
        held = exclusive_cpus(restored, probe, state=state)
        scores.append(score(topology, state.default_cpuset - reserved, held))
    return AdmissionTable(tuple(scores), shared)


def prepare(snapshot: NodeSnapshot) -> PreparedNode:
    """Restore the node once; the kubelet's refusal to start is raised (CpuManagerError)."""
    topology = snapshot.topology()
    restored = restore_node(snapshot)
    frozen = restored.freeze(snapshot.hugepages)
    state = frozen.state
    allocatable = node_allocatable(
        topology, frozen.kubelet, hugepages=snapshot.hugepages, devices=state.devices
    )
    summary = summarise(frozen, allocatable)
    reserved = frozen.kubelet.reserved_cpus or CPUSet()
    base = frozen.start()
    key = admission_key(snapshot, frozen, allocatable)
    table = _TABLES.get(key)
    if table is None:
        if len(_TABLES) >= TABLES_LIMIT:
            del _TABLES[next(iter(_TABLES))]  # the oldest
        table = _TABLES[key] = admission_table(base, allocatable, summary, reserved)
    return PreparedNode(frozen, allocatable, key, summary, _held(frozen), reserved, base, table)


# Admission tables by admission key: nodes with one key admit a new pod alike (module
# docstring), so they share one table; pushes of nodes in a state seen before skip the probes.
_TABLES: dict[str, AdmissionTable] = {}
TABLES_LIMIT = 20_000


def try_prepare(snapshot: NodeSnapshot) -> PreparedNode | CpuManagerError:
    """:func:`prepare`, with the refusal returned (it becomes the node's verdict)."""
    try:
        return prepare(snapshot)
    except CpuManagerError as exc:
        return exc
