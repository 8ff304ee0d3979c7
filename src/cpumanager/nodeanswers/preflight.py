"""``node preflight``: would the kubelet start with a new configuration on this node (pure).

The kubelet's container manager starts the CPU manager, then the memory manager; either
refusing stops the kubelet (``Failed to start ContainerManager``) with the manager's error:

* CPU: ``start cpu manager error: could not restore state from checkpoint: <why>, please
  drain this node and delete the CPU manager checkpoint file "<path>" before restarting
  Kubelet`` when the file does not decode or its policy differs (``configured policy "X"
  differs from state checkpoint policy "Y"``); ``start cpu manager error: <validateState
  error>`` when the static policy's state does not fit the new reservation or the CPUs
  online (``not all reserved cpus: ...``, ``current set of available CPUs ... doesn't
  match with CPUs in state ...``).
* memory: ``start memory manager error: could not restore state from checkpoint: ...`` or
  the Static policy's ``[memorymanager] the expected machine state is different from the
  real one``.

The remedy the kubelet names is a drain and a deleted checkpoint: every pod holding
exclusive CPUs (or pinned memory) loses them, so those pods are the ones to drain.
``recover`` (docs/architecture.md §4) keeps the assignments that still fit instead; the
answer lists what it would keep and return.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from cpumanager.checkpoint.cpu.restore import restore_state
from cpumanager.core.containermap import ContainerMap
from cpumanager.core.gocompat import go_quote
from cpumanager.core.ids import ContainerName, PodUID
from cpumanager.core.restore import validation_problems
from cpumanager.errors import CheckpointError, ConfigError, CpuManagerError
from cpumanager.formats.kubelet_config import KubeletConfig
from cpumanager.manager.node import build_cpu_policy
from cpumanager.nodeanswers.restore import (
    CPU_FILE,
    MEMORY_FILE,
    checkpoint_path,
    restore_memory,
    restore_node,
)
from cpumanager.nodeview.snapshot import NodeSnapshot

__all__ = ["Preflight", "preflight"]

# Our validation messages add what differs in parentheses; the kubelet's text ends before.
_DETAIL = re.compile(r" \((missing|shared|online but|in the state)[^()]*\)$")


@dataclass(slots=True)
class Preflight:
    """The verdict: safe to restart, or the kubelet's refusal with what to do."""

    safe: bool
    refusal: str = ""  # the error the kubelet would log and stop with
    reasons: list[str] = field(default_factory=list)  # every reason (the kubelet stops at one)
    drain: list[str] = field(default_factory=list)  # pods to drain (namespace/name)
    recover_keeps: list[str] = field(default_factory=list)
    recover_returns: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {
            "safe": self.safe,
            "refusal": self.refusal,
            "reasons": list(self.reasons),
            "drain": list(self.drain),
            "recover": {"keeps": list(self.recover_keeps), "returns": list(self.recover_returns)},
            "notes": list(self.notes),
        }


def _restore_refusal(why: str, path: str, manager: str) -> str:
    return (
        f"could not restore state from checkpoint: {why}, please drain this node and delete "
        f"the {manager} checkpoint file {go_quote(path)} before restarting Kubelet"
    )


def _cpu_refusal(snapshot: NodeSnapshot, kubelet: KubeletConfig) -> tuple[str, list[str]]:
    """The CPU manager's start: (the kubelet's error or "", every reason)."""
    topology = snapshot.topology()
    policy = build_cpu_policy(topology, kubelet)  # ConfigError: the kubelet's own refusal
    data = snapshot.checkpoint_bytes(CPU_FILE)
    path = checkpoint_path(snapshot, CPU_FILE)
    container_map = ContainerMap()
    for container_id, pod_uid, name in snapshot.running_containers():
        container_map = container_map.add(pod_uid, name, container_id)
    try:
        state = restore_state(
            data, source=path, configured_policy=policy.name, container_map=container_map
        )
    except CheckpointError as err:
        reasons = list(getattr(err, "reasons", ()))
        why = reasons[0] if reasons else _why(err)
        return "start cpu manager error: " + _restore_refusal(why, path, "CPU manager"), [why]
    if state is None or policy.name != "static":
        return "", []
    problems = validation_problems(
        state,
        all_cpus=topology.all_cpus,
        reserved=policy.reserved_cpus,
        strict_reservation=policy.strict_reservation,
    )
    kubelet_words = [_DETAIL.sub("", p) for p in problems]
    if not kubelet_words:
        return "", []
    return f"start cpu manager error: {kubelet_words[0]}", list(problems)


def _why(err: CpuManagerError) -> str:
    if "corrupt" in err.message:
        return "checkpoint is corrupted"
    return err.message


def _memory_refusal(snapshot: NodeSnapshot, kubelet: KubeletConfig) -> tuple[str, list[str]]:
    try:
        restore_memory(snapshot, snapshot.topology(), kubelet, [])
    except CheckpointError as err:
        reasons = list(getattr(err, "reasons", ())) or [err.message]
        message = err.message
        if "could not restore state" not in message:
            message = _restore_refusal(
                reasons[0], checkpoint_path(snapshot, MEMORY_FILE), "memory manager"
            )
        return f"start memory manager error: {message}", reasons
    return "", []


def _entries(snapshot: NodeSnapshot) -> dict[str, dict[str, str]]:
    """The checkpoint's exclusive assignments as the snapshot shows them (also when the
    kubelet refuses the file): pod uid -> container -> CPU list."""
    entry = snapshot.checkpoints.get(CPU_FILE)
    decoded = entry.decoded if entry is not None else None
    raw = decoded.get("entries") if decoded is not None else None
    if not isinstance(raw, dict):
        return {}
    return {
        str(uid): {str(name): str(cpus) for name, cpus in containers.items()}
        for uid, containers in raw.items()
        if isinstance(containers, dict)
    }


def _names(snapshot: NodeSnapshot) -> dict[str, str]:
    return {str(p.pod.uid): p.pod.display_name for p in snapshot.pods or ()}


def _recover(snapshot: NodeSnapshot, kubelet: KubeletConfig, answer: Preflight) -> None:
    names = _names(snapshot)
    try:
        restored = restore_node(snapshot, kubelet=kubelet, recover=True)
    except CpuManagerError as err:
        answer.notes.append(f"recover cannot help either: {err.message}")
        return
    after = restored.node.snapshot().cpu
    for uid, containers in _entries(snapshot).items():
        for name, cpus in containers.items():
            who = f"{names.get(uid, uid)} container {name} (CPUs {cpus})"
            kept = after.cpuset_of(PodUID(uid), ContainerName(name))
            if kept is not None and str(kept) == cpus:
                answer.recover_keeps.append(who)
            else:
                answer.recover_returns.append(who)
    answer.notes.extend(restored.notes)


def preflight(snapshot: NodeSnapshot, kubelet: KubeletConfig) -> Preflight:
    """Would a plain restart with ``kubelet`` succeed on this node?"""
    try:
        refusal, reasons = _cpu_refusal(snapshot, kubelet)
    except ConfigError as err:
        return Preflight(False, err.message, [err.message], notes=["fix the configuration"])
    if not refusal:
        refusal, reasons = _memory_refusal(snapshot, kubelet)
    if not refusal:
        answer = Preflight(True)
        try:
            restored = restore_node(snapshot, kubelet=kubelet)
        except CpuManagerError as err:
            return Preflight(False, err.message, [err.message])
        answer.notes.extend(restored.notes)
        answer.notes.append("A plain restart is safe: every manager restores its checkpoint.")
        return answer
    answer = Preflight(False, refusal, reasons)
    names = _names(snapshot)
    answer.drain = sorted({names.get(uid, uid) for uid in _entries(snapshot)})
    _recover(snapshot, kubelet, answer)
    return answer
