"""``node recover``: what ``preflight`` proposes instead of a drain, as files (pure).

On a node the kubelet would not start on, ``restore_node(..., recover=True)`` repairs as
``cpumanager state recover`` does (docs/architecture.md §4): it keeps every assignment that
still fits the configuration and the machine and returns the rest to the shared pool. The
plan is the CPU manager checkpoint the repaired kubelet would write (the exact bytes), with
the assignments kept and returned; the CLI writes it (dry-run by default).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cpumanager.errors import CpuManagerError
from cpumanager.nodeanswers.preflight import preflight
from cpumanager.nodeanswers.restore import CPU_FILE, checkpoint_path, restore_node
from cpumanager.nodeview.snapshot import NodeSnapshot

__all__ = ["RecoverFile", "RecoverPlan", "plan_recover"]


@dataclass(frozen=True, slots=True)
class RecoverFile:
    """One checkpoint to replace: where, the bytes the snapshot saw, the bytes to write."""

    kind: str
    path: str
    before: bytes | None
    after: bytes


@dataclass(slots=True)
class RecoverPlan:
    """Nothing to do (``needed`` False), a plan, or why recovery cannot help (``blocked``)."""

    needed: bool
    refusal: str = ""
    keeps: list[str] = field(default_factory=list)
    returns: list[str] = field(default_factory=list)
    files: list[RecoverFile] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    blocked: str = ""

    def to_json(self) -> dict[str, object]:
        return {
            "needed": self.needed,
            "refusal": self.refusal,
            "keeps": list(self.keeps),
            "returns": list(self.returns),
            "files": [
                {
                    "kind": f.kind,
                    "path": f.path,
                    "bytesBefore": None if f.before is None else len(f.before),
                    "content": f.after.decode("utf-8", "replace"),
                }
                for f in self.files
            ],
            "notes": list(self.notes),
            "blocked": self.blocked,
        }


def plan_recover(snapshot: NodeSnapshot) -> RecoverPlan:
    """The files a recovering kubelet would keep on this node, with its own configuration."""
    try:
        config = snapshot.kubelet_config()
    except CpuManagerError as err:
        return RecoverPlan(True, err.message, blocked="fix the configuration first")
    answer = preflight(snapshot, config)
    if answer.safe:
        return RecoverPlan(False, notes=["the kubelet starts on this node as it is"])
    plan = RecoverPlan(True, answer.refusal, answer.recover_keeps, answer.recover_returns)
    try:
        restored = restore_node(snapshot, kubelet=config, recover=True)
    except CpuManagerError as err:
        plan.blocked = f"recover cannot help: {err.message}"
        return plan
    before = snapshot.checkpoint_bytes(CPU_FILE)
    after = restored.store.data
    if after is not None and after != before:
        plan.files.append(RecoverFile(CPU_FILE, checkpoint_path(snapshot, CPU_FILE), before, after))
    plan.notes.extend(restored.notes)
    if not plan.files:
        plan.blocked = "recover changes no file: " + answer.refusal
    return plan
