"""The ``state`` commands' workflow on checkpoint bytes: read leniently, convert, compare.

Pure functions from bytes (and an optional container map) to results; reading and writing
files is the caller's job (``adapters/checkpoint_files.py``). Every refusal is a typed
:class:`~cpumanager.errors.CheckpointError` that says nothing was written, because the
caller writes only what these functions return.

Two readings of a file, on purpose:

* **lenient** (``inspect``, ``diff``, ``rewrite``): the first format, V2 first, that decodes,
  even with a wrong checksum, since showing or fixing a hand-edited file is their job;
* **strict** (``migrate``): the kubelet's own decode, checksum included.

A conversion is split in two steps, :func:`read_for_conversion` then :func:`convert`, so the
caller can read the container map in between, as the command always has (a bad input file is
reported before a bad map).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from cpumanager.checkpoint.cpu import codec
from cpumanager.checkpoint.cpu.codec import Attempt
from cpumanager.checkpoint.cpu.migrate import v1_to_v2, v2_to_v1
from cpumanager.checkpoint.cpu.model import CheckpointV1, CheckpointV2
from cpumanager.checkpoint.cpu.restore import V1_PSEUDO_POD
from cpumanager.core.containermap import ContainerMap
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.gocompat import go_quote
from cpumanager.core.ids import ContainerID, ContainerName, PodUID
from cpumanager.core.state import StateSnapshot
from cpumanager.errors import CheckpointFormatError, ContainerMapRequiredError

__all__ = [
    "TARGET_FORMATS",
    "Change",
    "Conversion",
    "Reading",
    "StateDiff",
    "TargetFormat",
    "checksum_status",
    "convert",
    "diff_states",
    "read_for_conversion",
    "read_lenient",
]

TargetFormat = Literal["v1", "v2"]
TARGET_FORMATS: tuple[TargetFormat, ...] = ("v1", "v2")
Checkpoint = CheckpointV1 | CheckpointV2


# --- reading --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Reading:
    """A file read leniently: the attempt that decoded it and its state as a snapshot."""

    attempt: Attempt
    checkpoint: Checkpoint
    snapshot: StateSnapshot


def _lenient_attempt(data: bytes, source: str) -> Attempt:
    """The first format (V2 first) that decodes, checksum good or not; error if none does."""
    attempts = codec.attempts(data, order="v2-first")
    for result in attempts:
        if result.ok:
            return result
    for result in attempts:
        if result.checkpoint is not None:
            return result
    reasons = "; ".join(dict.fromkeys(f"as {r.format.upper()}: {r.error}" for r in attempts))
    message = f"{source!r} is not a kubelet checkpoint ({reasons}); nothing was written"
    raise CheckpointFormatError(message)


def _to_v2(checkpoint: Checkpoint, cmap: ContainerMap | None, source: str) -> CheckpointV2:
    """V2 content of any checkpoint; a V1 file without a map shows container IDs as pods."""
    if isinstance(checkpoint, CheckpointV2):
        return checkpoint
    if cmap is None:
        cmap = ContainerMap(
            (ContainerID(cid), PodUID(V1_PSEUDO_POD), ContainerName(cid))
            for cid in checkpoint.entries or {}
        )
    return v1_to_v2(checkpoint, cmap, source=source)


def read_lenient(data: bytes, *, source: str, container_map: ContainerMap | None) -> Reading:
    """Decode ``data`` as ``inspect`` and ``diff`` show it (wrong checksums allowed)."""
    attempt = _lenient_attempt(data, source)
    assert attempt.checkpoint is not None
    v2 = _to_v2(attempt.checkpoint, container_map, source)
    snapshot = codec.snapshot_from_v2(v2, source=source)
    return Reading(attempt, attempt.checkpoint, snapshot)


def checksum_status(attempt: Attempt) -> str:
    """``ok``, ``unchecked (stored 0)`` or ``MISMATCH (computed N)``, as ``inspect`` says it."""
    if attempt.stored_checksum == 0:
        return "unchecked (stored 0)"
    if attempt.ok:
        return "ok"
    return f"MISMATCH (computed {attempt.computed_checksum})"


# --- migrate / rewrite ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Conversion:
    """The bytes to write, already decoded again and found equal to what was meant."""

    source_format: str
    target_format: TargetFormat
    data: bytes
    checksum: int


def read_for_conversion(data: bytes, *, source: str, strict_checksum: bool) -> Checkpoint:
    """The checkpoint to convert; refuses files with keys the kubelet's formats do not know."""
    if strict_checksum:
        checkpoint: Checkpoint = codec.decode(data, source=source, order="v2-first")
    else:
        attempt = _lenient_attempt(data, source)
        assert attempt.checkpoint is not None
        checkpoint = attempt.checkpoint
    extra = codec.unknown_keys(data)
    if extra:
        keys = ", ".join(go_quote(key) for key in extra)
        message = (
            f"{source!r} has keys the kubelet's V1/V2 formats do not know ({keys}); "
            "it may be a newer format: refusing to drop them, nothing was written"
        )
        raise CheckpointFormatError(message)
    return checkpoint


def _canonical_v1(checkpoint: CheckpointV1, source: str) -> CheckpointV1:
    default = codec.parse_cpu_list(checkpoint.default_cpu_set)
    entries = {}
    for cid, text in (checkpoint.entries or {}).items():
        try:
            entries[cid] = str(codec.parse_cpu_list(text))
        except codec.CPUListError as err:
            message = (
                f"{source!r}: could not parse cpuset {go_quote(text)} of container "
                f"{go_quote(cid)}: {err}"
            )
            raise CheckpointFormatError(message) from None
    return CheckpointV1(checkpoint.policy_name, str(default), entries)


def _encode_as(
    checkpoint: Checkpoint, target: TargetFormat, cmap: ContainerMap | None, source: str
) -> bytes:
    """Kubelet-canonical bytes of ``checkpoint`` in ``target`` format (CPU lists normalised)."""
    if isinstance(checkpoint, CheckpointV1) and target == "v1":
        try:
            return codec.encode_v1(_canonical_v1(checkpoint, source))
        except codec.CPUListError as err:
            message = f"{source!r}: could not parse the default cpu set: {err}"
            raise CheckpointFormatError(message) from None
    if isinstance(checkpoint, CheckpointV1):
        if cmap is None:
            message = "a V1 file needs --containers MAP.json to become V2 (it is keyed by ID)"
            raise ContainerMapRequiredError(message)
        checkpoint = v1_to_v2(checkpoint, cmap, source=source)
    snapshot = codec.snapshot_from_v2(checkpoint, source=source)
    if target == "v2":
        return codec.encode_v2(snapshot)
    if cmap is None:
        message = "a V1 file is keyed by container ID: give --containers MAP.json"
        raise ContainerMapRequiredError(message)
    return codec.encode_v1(v2_to_v1(codec.checkpoint_v2_from_snapshot(snapshot), cmap))


def convert(
    checkpoint: Checkpoint,
    *,
    target: TargetFormat | None,
    container_map: ContainerMap | None,
    source: str,
    destination: str,
) -> Conversion:
    """``checkpoint`` re-encoded as ``target`` (default: its own format), checked by decoding.

    Changing a V1 file to V2, or anything to V1, needs the container map; without it this
    raises :class:`ContainerMapRequiredError`.
    """
    goal: TargetFormat = target or checkpoint.format
    data = _encode_as(checkpoint, goal, container_map, source)
    again = codec.decode_as(data, goal, source=destination)
    if codec.encode_checkpoint(again) != data:  # pragma: no cover - codec invariant
        message = "internal check failed: the re-encoded file does not decode to itself"
        raise CheckpointFormatError(message)
    return Conversion(checkpoint.format, goal, data, again.checksum)


# --- diff -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Change:
    """One container whose exclusive CPUs were added, removed or changed."""

    pod: str
    container: str
    change: Literal["added", "removed", "changed"]
    before: CPUSet | None
    after: CPUSet | None


@dataclass(frozen=True, slots=True)
class StateDiff:
    """What moved between two states: policy, shared pool, containers (sorted by key)."""

    before: StateSnapshot
    after: StateSnapshot
    changes: tuple[Change, ...]

    @property
    def same(self) -> bool:
        return self.before == self.after

    @property
    def shared_gained(self) -> CPUSet:
        return self.after.default_cpuset - self.before.default_cpuset

    @property
    def shared_lost(self) -> CPUSet:
        return self.before.default_cpuset - self.after.default_cpuset


def _flat(snapshot: StateSnapshot) -> dict[tuple[str, str], CPUSet]:
    return {
        (pod, name): cpus
        for pod, containers in snapshot.assignments.items()
        for name, cpus in containers.items()
    }


def diff_states(before: StateSnapshot, after: StateSnapshot) -> StateDiff:
    """Every container whose assignment differs between ``before`` and ``after``."""
    old, new = _flat(before), _flat(after)
    changes = []
    for key in sorted(old.keys() | new.keys()):
        was, now = old.get(key), new.get(key)
        if was == now:
            continue
        kind: Literal["added", "removed", "changed"] = (
            "added" if was is None else "removed" if now is None else "changed"
        )
        changes.append(Change(key[0], key[1], kind, was, now))
    return StateDiff(before, after, tuple(changes))
