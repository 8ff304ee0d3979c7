"""Which kubelet releases read a checkpoint, and what each one makes of it (pure).

:func:`identify` names the format a file was written in (the newest one its bytes verify
as). :func:`read_as` replays one release's restore order (core/versions.py) on the bytes:
the format it lands on, what it drops (pod-level entries an older reader ignores) or the
exact error it stops with. :func:`readers` folds that over every release, gate on and off.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from cpumanager.checkpoint import newer
from cpumanager.checkpoint.cpu import codec
from cpumanager.checkpoint.cpu.checksum import checksum_of
from cpumanager.checkpoint.cpu.cpulist import CPUListError, parse_cpu_list
from cpumanager.checkpoint.cpu.model import CheckpointV2
from cpumanager.checkpoint.device import codec as device
from cpumanager.checkpoint.go import fastjson, gojson
from cpumanager.checkpoint.memory import codec as memory
from cpumanager.core import versions
from cpumanager.core.gocompat import go_quote
from cpumanager.core.versions import Release

__all__ = [
    "FORMAT_NAMES",
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


@dataclass(frozen=True, slots=True)
class Outcome:
    """One release's restore of the bytes: ``format`` read, or ``error`` (the kubelet's text)."""

    release: Release
    gate: bool
    format: str = ""
    error: str = ""
    dropped_pod_entries: int = 0

    @property
    def ok(self) -> bool:
        return not self.error


def _keys(data: bytes) -> set[str]:
    try:
        tree = fastjson.parse(data)
    except gojson.GoJSONSyntaxError:
        return set()
    if not isinstance(tree, gojson.JSONObject):
        return set()
    return {gojson.fold_key(key) for key, _ in tree.members}


def _cpu_v1v2(data: bytes) -> tuple[str, str]:
    first, second = codec.attempts(data, order="v1-first")
    for result in (first, second):
        if result.ok:
            return f"cpu-{result.format}", ""
    return "", second.error or first.error


def _cpu_v2_pod_entries(data: bytes) -> int:
    v3 = newer.attempt_cpu_v3(data)
    if v3.checkpoint is not None:
        return len(v3.checkpoint.pod_entries or {})
    return 0


def identify(data: bytes) -> str:
    """The format these bytes verify as, newest first; '' when none verifies."""
    keys = _keys(data)
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


def _struct_named(error: str, written: str, release_name: str) -> str:
    """A type error as a release words it when its struct for the format has another name.

    From v1.37 each format has its own Go type (``CPUManagerCheckpointV2``,
    ``MemoryManagerCheckpointV1`` ...), and Go names the outermost struct in
    ``json: cannot unmarshal ... into Go struct field <Struct>.<field>``.
    """
    return error.replace(f"Go struct field {written}.", f"Go struct field {release_name}.", 1)


@dataclass(frozen=True, slots=True)
class _Read:
    """What a release's reader landed on: the format, the fields checked after it, the drop."""

    format: str
    policy: str
    default_cpu_set: str = ""
    entries: Any = None
    dropped_pod_entries: int = 0


def _cpu_v1v2_read(data: bytes, release: Release) -> _Read | str:
    """V1 then V2 (v1.18 .. v1.36), V2's error when both fail."""
    first, second = codec.attempts(data, order="v1-first")
    for result in (first, second):
        if result.ok and result.checkpoint is not None:
            dropped = _cpu_v2_pod_entries(data) if "podentries" in _keys(data) else 0
            cp = result.checkpoint
            entries = cp.plain_entries() if isinstance(cp, CheckpointV2) else None
            fmt = f"cpu-{result.format}"
            return _Read(fmt, cp.policy_name, cp.default_cpu_set, entries, dropped)
    return second.error or first.error


def _cpu_v4_read(data: bytes, gate: bool) -> _Read | str:
    """v1.37: V4, else (no data, no dataChecksum stored) V3, else V2; no V1 reader."""
    v4 = newer.attempt_cpu_v4(data)
    if v4.ok:
        inner = v4.data
        pods = 0 if gate else len(inner.pod_entries or {})
        return _Read("cpu-v4", inner.policy_name, inner.default_cpu_set, inner.entries, pods)
    if newer.data_fields_set(data, pod_cpusets=True):
        return f"could not load v4 checkpoint: {v4.error}"
    v3 = newer.attempt_cpu_v3(data)
    if v3.ok:
        cp = v3.checkpoint
        pods = 0 if gate else len(cp.pod_entries or {})
        return _Read("cpu-v3", cp.policy_name, cp.default_cpu_set, cp.entries, pods)
    v2 = codec.attempt(data, "v2")
    if v2.ok and isinstance(v2.checkpoint, CheckpointV2):
        cp2 = v2.checkpoint
        dropped = _cpu_v2_pod_entries(data) if "podentries" in _keys(data) else 0
        return _Read("cpu-v2", cp2.policy_name, cp2.default_cpu_set, cp2.plain_entries(), dropped)
    return _struct_named(v2.error, "CPUManagerCheckpoint", "CPUManagerCheckpointV2")


def _read_cpu_format(data: bytes, release: Release, gate: bool) -> _Read | str:
    order = versions.cpu_formats_read(release, gate=gate)
    if "v4" in order:
        return _cpu_v4_read(data, gate)
    last_error = ""
    for fmt in order:
        if fmt == "v3":
            result = newer.attempt_cpu_v3(data)
            accepted = result.ok
            if accepted:
                # v1.36 hashes only under the struct's own name, CPUManagerCheckpoint.
                accepted = result.checkpoint.checksum == newer.cpu_v3_checksum(result.checkpoint)
            if accepted:
                cp = result.checkpoint
                return _Read("cpu-v3", cp.policy_name, cp.default_cpu_set, cp.entries)
            last_error = result.error or "checkpoint is corrupted"
        elif fmt == "v1":
            found = _cpu_v1v2_read(data, release)
            return found if isinstance(found, _Read) else (found or last_error)
    return last_error


def _cpu_checks(found: _Read, release: Release, policy: str | None) -> str:
    """``restoreState`` after the read: the configured policy, then every CPU list parses."""
    if policy is not None and policy != found.policy:
        return (
            f"configured policy {go_quote(policy)} differs from state checkpoint policy "
            f"{go_quote(found.policy)}"
        )
    what = "default CPU set" if release >= (1, 37) else "default cpu set"
    try:
        parse_cpu_list(found.default_cpu_set)
    except CPUListError as err:
        return f"could not parse {what} {go_quote(found.default_cpu_set)}: {err}"
    for pod in sorted(found.entries or {}):
        containers = found.entries[pod] or {}
        for name in sorted(containers):
            try:
                parse_cpu_list(containers[name])
            except CPUListError as err:
                return (
                    f"could not parse cpuset {go_quote(containers[name])} for container "
                    f"{go_quote(name)} in pod {go_quote(pod)}: {err}"
                )
    return ""


def _read_cpu(data: bytes, release: Release, gate: bool, policy: str | None) -> Outcome:
    found = _read_cpu_format(data, release, gate)
    if isinstance(found, str):
        return Outcome(release, gate, error=found)
    error = _cpu_checks(found, release, policy)
    if error:
        return Outcome(release, gate, error=error)
    return Outcome(release, gate, found.format, dropped_pod_entries=found.dropped_pod_entries)


def _memory_v1_zero(data: bytes) -> bool:
    result = memory.attempt_memory(data)
    return result.kind == "corrupt" and result.stored_checksum == 0


def _memory_v1_read(data: bytes, release: Release) -> _Read | str:
    result = memory.attempt_memory(data)
    zero_ok = release >= (1, 36) and _memory_v1_zero(data)
    if not (result.ok or zero_ok) or result.checkpoint is None:
        if release >= (1, 37):
            name = "MemoryManagerCheckpointV1"
            return _struct_named(result.error, "MemoryManagerCheckpoint", name)
        return result.error
    dropped = 0
    v2 = newer.attempt_memory_v2(data)
    if v2.checkpoint is not None:
        dropped = len(v2.checkpoint.pod_entries or {})
    return _Read("memory-v1", result.checkpoint.policy_name, dropped_pod_entries=dropped)


def _read_memory_format(data: bytes, release: Release, gate: bool) -> _Read | str:
    order = versions.memory_formats_read(release, gate=gate)
    if not order:
        return "no memory manager in this release"
    last_error = ""
    for fmt in order:
        if fmt == "v3":
            result = newer.attempt_memory_v3(data)
            if result.ok:
                pods = 0 if gate else len(result.data.pod_entries or {})
                return _Read("memory-v3", result.data.policy_name, dropped_pod_entries=pods)
            if newer.data_fields_set(data):
                return f"could not load v3 checkpoint: {result.error}"
            last_error = result.error
        elif fmt == "v2":
            result = newer.attempt_memory_v2(data)
            if result.ok:
                pods = 0 if gate else len(result.checkpoint.pod_entries or {})
                return _Read("memory-v2", result.checkpoint.policy_name, dropped_pod_entries=pods)
            last_error = result.error
            if release >= (1, 37):
                last_error = _struct_named(
                    last_error, "MemoryManagerCheckpoint", "MemoryManagerCheckpointV2"
                )
        else:
            found = _memory_v1_read(data, release)
            if isinstance(found, _Read):
                return found
            last_error = found
    return last_error


def _read_memory(data: bytes, release: Release, gate: bool, policy: str | None) -> Outcome:
    found = _read_memory_format(data, release, gate)
    if isinstance(found, str):
        return Outcome(release, gate, error=found)
    if policy is not None and policy != found.policy:
        error = (
            f"[memorymanager] configured policy {go_quote(policy)} differs from state "
            f"checkpoint policy {go_quote(found.policy)}"
        )
        return Outcome(release, gate, error=error)
    return Outcome(release, gate, found.format, dropped_pod_entries=found.dropped_pod_entries)


def _read_device(data: bytes, release: Release) -> Outcome:
    """The device manager's read: V1 only before v1.20, V2 then V1 to v1.29, V2 only after."""
    v2, v1 = device.attempts_device(data)
    order = (v1,) if release < (1, 20) else (v2, v1) if release < (1, 30) else (v2,)
    for result in order:
        if result.ok:
            return Outcome(release, False, f"device-{result.format}")
    return Outcome(release, False, error=order[0].error)


CheckpointKind = Literal["cpu", "memory", "device"]


def read_as(
    data: bytes,
    release: Release,
    *,
    gate: bool | None = None,
    policy: str | None = None,
    kind: CheckpointKind | None = None,
) -> Outcome:
    """What ``release`` does with the bytes (PodLevelResourceManagers as given, else default).

    ``policy``: the configured policy (CPU ``none``/``static``, memory ``None``/``Static``),
    checked as the kubelet checks it after the read; None skips the check. ``kind``: the
    file's kind when known from its name (a ``null`` file has no keys to tell it by).
    """
    on = (
        versions.profile(release).gates.get("PodLevelResourceManagers", False)
        if gate is None
        else gate
    )
    if kind == "device":
        return _read_device(data, release)
    if kind == "memory" or (kind is None and "machinestate" in _keys(data)):
        return _read_memory(data, release, on, policy)
    return _read_cpu(data, release, on, policy)


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
