"""Which kubelet releases read a checkpoint, and what each one makes of it (pure).

:func:`identify` names the format a file was written in (the newest one its bytes verify
as). :func:`read_as` (from :mod:`reads`) replays one release's restore order on the bytes:
the format it lands on, what it drops (pod-level entries an older reader ignores) or the
exact error it stops with. :func:`readers` folds that over every release, gate on and off.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from cpumanager.checkpoint import newer
from cpumanager.checkpoint.cpu import codec
from cpumanager.checkpoint.cpu.checksum import checksum_of
from cpumanager.checkpoint.cpu.model import CheckpointV2
from cpumanager.checkpoint.memory import codec as memory
from cpumanager.checkpoint.reads import CheckpointKind, Outcome, keys_of, read_as
from cpumanager.core import versions
from cpumanager.core.versions import Release

__all__ = [
    "FORMAT_NAMES",
    "CheckpointKind",
    "Content",
    "Outcome",
    "Plan",
    "content_of",
    "encode_for",
    "identify",
    "plan",
    "read_as",
    "readers",
]

FORMAT_NAMES = {
    "cpu-v1": "CPU V1 (container-ID keys, kubelet <= 1.17)",
    "cpu-v2": "CPU V2 (pod UID/container keys)",
    "cpu-v3": "CPU V3 (podEntries, PodLevelResourceManagers)",
    "cpu-v4": "CPU V4 (inline V3 fields + data/dataChecksum)",
    "cpu-data-137820": (
        "CPU data/checksum layout of PR #137820 (reverted in #139077, never released)"
    ),
    "memory-v1": "memory V1",
    "memory-v2": "memory V2 (podEntries, PodLevelResourceManagers)",
    "memory-v3": "memory V3 (inline V1 fields + data/dataChecksum)",
    "device-v1": "device V1 (DeviceIDs a list, kubelet <= 1.19)",
    "device-v2": "device V2 (DeviceIDs per NUMA node)",
}


def _cpu_v1v2(data: bytes) -> tuple[str, str]:
    first, second = codec.attempts(data, order="v1-first")
    for result in (first, second):
        if result.ok:
            return f"cpu-{result.format}", ""
    return "", second.error or first.error


def identify(data: bytes) -> str:
    """The format these bytes verify as, newest first; '' when none verifies."""
    keys = keys_of(data)
    if "machinestate" in keys:
        if "data" in keys and newer.attempt_memory_v3(data).ok:
            return "memory-v3"
        if "podentries" in keys and newer.attempt_memory_v2(data).ok:
            return "memory-v2"
        if memory.attempt_memory(data).ok:
            return "memory-v1"
        # written with the gate on but no pod entries: no podEntries key, V2's checksum
        return "memory-v2" if newer.attempt_memory_v2(data).ok else ""
    if "datachecksum" in keys and newer.attempt_cpu_v4(data).ok:
        return "cpu-v4"
    if "data" in keys and "defaultcpuset" not in keys and _data_137820(data):
        return "cpu-data-137820"
    if "podentries" in keys and newer.attempt_cpu_v3(data).ok:
        return "cpu-v3"
    found, _ = _cpu_v1v2(data)
    if not found and newer.attempt_cpu_v3(data).ok:
        return "cpu-v3"  # written with the gate on but no pod entries (no podEntries key)
    return found


def _data_137820(data: bytes) -> bool:
    attempt = newer.attempt_cpu_v4(data)
    return attempt.data is not None and attempt.checkpoint.checksum == newer.data_checksum(
        attempt.checkpoint.data
    )


def readers(data: bytes) -> tuple[str, str]:
    """``(without the gate, with it)``: release ranges that restore every entry of the file."""
    off: dict[Release, bool] = {}
    on: dict[Release, bool] = {}
    for release in versions.RELEASES:
        plain = read_as(data, release, gate=False)
        off[release] = plain.ok and plain.dropped_pod_entries == 0
        has_gate = versions.profile(release).gate_levels.get("PodLevelResourceManagers", "absent")
        if has_gate != "absent":
            gated = read_as(data, release, gate=True)
            on[release] = gated.ok and gated.dropped_pod_entries == 0
    return versions.readers_of(off), versions.readers_of(on)


def fresh_v2(checkpoint: CheckpointV2) -> CheckpointV2:
    """A V2 checkpoint with the checksum a v1.18+ kubelet writes."""
    bare = checkpoint.with_checksum(0)
    return bare.with_checksum(checksum_of(bare))


# --- migration to a release -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Content:
    """A checkpoint's assignments, whatever format held them."""

    kind: str  # "cpu" | "memory"
    policy: str
    default_cpu_set: str = ""
    entries: Any = None
    pod_entries: Any = None
    machine: Any = None


def content_of(data: bytes) -> Content | None:
    """The assignments of a verified CPU V2/V3/V4 or memory V1/V2/V3 file (None otherwise)."""
    fmt = identify(data)
    if fmt == "cpu-v4":
        inner = newer.attempt_cpu_v4(data).data
        pods = {p: (e.cpu_set if e else "") for p, e in (inner.pod_entries or {}).items()}
        return Content("cpu", inner.policy_name, inner.default_cpu_set, inner.entries or {}, pods)
    if fmt == "cpu-v3":
        cp = newer.attempt_cpu_v3(data).checkpoint
        pods = {p: (e.cpu_set if e else "") for p, e in (cp.pod_entries or {}).items()}
        return Content("cpu", cp.policy_name, cp.default_cpu_set, cp.entries or {}, pods)
    if fmt == "cpu-v2":
        v2 = codec.attempt(data, "v2").checkpoint
        assert isinstance(v2, CheckpointV2)
        return Content("cpu", v2.policy_name, v2.default_cpu_set, v2.plain_entries() or {}, {})
    if fmt == "memory-v3":
        mem3 = newer.attempt_memory_v3(data).data
        return Content(
            "memory", mem3.policy_name, "", mem3.entries or {}, mem3.pod_entries or {},
            mem3.machine_state,
        )  # fmt: skip
    if fmt == "memory-v2":
        mem2 = newer.attempt_memory_v2(data).checkpoint
        return Content(
            "memory", mem2.policy_name, "", mem2.entries or {}, mem2.pod_entries or {},
            mem2.machine_state,
        )  # fmt: skip
    if fmt == "memory-v1":
        mem1 = memory.attempt_memory(data).checkpoint
        assert mem1 is not None
        return Content("memory", mem1.policy_name, "", mem1.entries or {}, {}, mem1.machine_state)
    return None


def encode_for(content: Content, fmt: str) -> bytes:
    """``content`` in the bytes a kubelet writing ``fmt`` (v1..v4 of its kind) produces."""
    if content.kind == "cpu":
        entries = content.entries
        if fmt == "v2":
            bare = CheckpointV2(content.policy, content.default_cpu_set, entries, 0)
            return codec.encode_checkpoint(fresh_v2(bare))
        if fmt == "v3":
            return newer.encode_cpu_v3(
                content.policy, content.default_cpu_set, entries, content.pod_entries
            )
        return newer.encode_cpu_v4(
            content.policy, content.default_cpu_set, entries, content.pod_entries
        )
    if fmt == "v1":
        bare_memory = memory.MemoryManagerCheckpoint(
            content.policy, content.machine, content.entries, 0
        )
        return memory.encode_memory(memory.with_fresh_checksum(bare_memory))
    encode = newer.encode_memory_v2 if fmt == "v2" else newer.encode_memory_v3
    return encode(content.policy, content.machine, content.entries, content.pod_entries)


Verdict = Literal["as-is", "convert", "drain", "refuse"]


@dataclass(frozen=True, slots=True)
class Plan:
    """What to do before ``release`` starts on this file."""

    release: Release
    gate: bool
    verdict: Verdict
    now: Outcome
    target_format: str = ""
    data: bytes = b""
    drain: tuple[str, ...] = ()
    reason: str = ""


def plan(data: bytes, release: Release, *, gate: bool | None = None) -> Plan:
    """Will ``release`` read the file and keep every assignment; if not, convert or drain."""
    profile = versions.profile(release, {} if gate is None else {"PodLevelResourceManagers": gate})
    on = profile.gates.get("PodLevelResourceManagers", False)
    now = read_as(data, release, gate=on)
    if now.ok and now.dropped_pod_entries == 0:
        return Plan(release, on, "as-is", now)
    content = content_of(data)
    if content is None:
        why = now.error or "the file is in no format this tool can convert"
        return Plan(release, on, "refuse", now, reason=why)
    target = profile.cpu_write if content.kind == "cpu" else profile.memory_write
    if target == "none":
        return Plan(release, on, "refuse", now, reason="this release has no memory manager")
    pods = tuple(sorted(content.pod_entries or {}))
    flat = "v2" if content.kind == "cpu" else "v1"  # the formats without pod entries
    if pods and target == flat:
        kept = Content(content.kind, content.policy, content.default_cpu_set,
                       content.entries, {}, content.machine)  # fmt: skip
        converted = encode_for(kept, target)
        level = profile.gate_levels.get("PodLevelResourceManagers", "absent")
        state = "not in this release" if level == "absent" else "off"
        why = (
            f"kubelet {profile.name} keeps no pod-level assignments "
            f"(PodLevelResourceManagers {state}): drain {', '.join(pods)} first"
        )
        return Plan(release, on, "drain", now, target, converted, pods, why)
    converted = encode_for(content, target)
    after = read_as(converted, release, gate=on)
    if not after.ok or after.dropped_pod_entries:
        return Plan(release, on, "refuse", now, target, reason=after.error or "entries dropped")
    return Plan(release, on, "convert", now, target, converted)
