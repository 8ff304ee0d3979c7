"""One kubelet release's restore of a CPU, memory or device checkpoint (pure).

:func:`read_as` replays the release's reader order (core/versions.py) on the bytes, then the
checks ``restoreState`` makes after the read (the configured policy, every CPU list): the
format it lands on, what it drops (pod-level entries a reader skips or a gate leaves
unrestored) or the exact error it stops with. docs/versions.md has the rules per release.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from cpumanager.checkpoint import newer
from cpumanager.checkpoint.cpu import codec
from cpumanager.checkpoint.cpu.cpulist import CPUListError, parse_cpu_list
from cpumanager.checkpoint.cpu.model import CheckpointV2
from cpumanager.checkpoint.device import codec as device
from cpumanager.checkpoint.go import fastjson, gojson
from cpumanager.checkpoint.memory import codec as memory
from cpumanager.core import versions
from cpumanager.core.gocompat import go_quote
from cpumanager.core.versions import Release

__all__ = ["CheckpointKind", "Outcome", "keys_of", "pod_entries_in", "read_as"]

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


def keys_of(data: bytes) -> set[str]:
    try:
        tree = fastjson.parse(data)
    except gojson.GoJSONSyntaxError:
        return set()
    if not isinstance(tree, gojson.JSONObject):
        return set()
    return {gojson.fold_key(key) for key, _ in tree.members}


def pod_entries_in(data: bytes) -> int:
    v3 = newer.attempt_cpu_v3(data)
    if v3.checkpoint is not None:
        return len(v3.checkpoint.pod_entries or {})
    return 0


def _struct_named(error: str, written: str, release_name: str) -> str:
    """A type error as a release words it when its struct for the format has another name.

    From v1.36 the older formats have their own Go types (``CPUManagerCheckpointV1``/``V2``,
    ``MemoryManagerCheckpointV1``; from v1.37 also ``MemoryManagerCheckpointV2``), and Go
    names the outermost struct in ``json: cannot unmarshal ... into Go struct field
    <Struct>.<field>``.
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


def _cpu_v1v2_read(data: bytes, release: Release, *, v2_first: bool = False) -> _Read | str:
    """V1 then V2, V2's error when both fail (v1.18 .. v1.35); ``v2_first``: V2 then V1,
    V1's error (v1.36's ``loadAndMigrateCheckpointV2``)."""
    first, second = codec.attempts(data, order="v2-first" if v2_first else "v1-first")
    for result in (first, second):
        if result.ok and result.checkpoint is not None:
            dropped = pod_entries_in(data) if "podentries" in keys_of(data) else 0
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
        dropped = pod_entries_in(data) if "podentries" in keys_of(data) else 0
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
        elif fmt in ("v1", "v2"):
            found = _cpu_v1v2_read(data, release, v2_first=fmt == "v2")
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
        if release >= (1, 36):  # V1 has its own struct from v1.36 (V2 is the latest's alias)
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
    if kind == "memory" or (kind is None and "machinestate" in keys_of(data)):
        return _read_memory(data, release, on, policy)
    return _read_cpu(data, release, on, policy)
