"""The checkpoint formats written after v1.35: pod-level entries and the data/dataChecksum layout.

Source (merged code, ``pkg/kubelet/cm/{cpu,memory}manager/state/{checkpoint,state}.go``;
see docs/state.md for the PRs). Names follow the kubelet's own version numbers:

* CPU **V3** (v1.36, ``PodLevelResourceManagers`` on, PR #134768): V2's fields plus
  ``podEntries`` (``map[pod]{"cpuSet":"0-3"}``, ``cpuSet`` omitted when empty) and a
  ``checksum`` over go-spew of the struct under the name ``CPUManagerCheckpoint``; no
  "0 means unchecked" exemption.
* CPU **V4** (development line after v1.36, PR #139102 redoing the reverted #137820): V3's
  fields inline with ``checksum`` 0 (so v1.18+ kubelets read it as V2), then ``data`` (the
  JSON of ``CPUManagerCheckpointData``) and ``dataChecksum`` = FNV-1a 32 of
  ``(string)`` + data (go-spew of a string).
* memory **V2** (v1.36, gate on, PR #134768/#137751): V1's fields plus ``podEntries``
  (``map[pod]{"memoryBlocks":[...]}``), checksum under the name ``MemoryManagerCheckpoint``.
* memory **V3** (development line, PR #139626): V1's fields inline with V1's own checksum
  (released kubelets read it as V1), then ``data`` and ``dataChecksum``.

Pure: bytes in, models and bytes out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from cpumanager.checkpoint import fastjson, gojson
from cpumanager.checkpoint.checksum import _render_v2_entries, clean_text, fnv1a_32
from cpumanager.checkpoint.cpulist import CPUListError, parse_cpu_list
from cpumanager.checkpoint.godecode import GoTypeError, unmarshal
from cpumanager.checkpoint.goencode import marshal
from cpumanager.checkpoint.gospew import spew
from cpumanager.checkpoint.gotypes import GoField, GoMap, GoScalar, GoSlice, GoStruct
from cpumanager.checkpoint.memory import BLOCK_TYPE, Block, MachineState, MemoryManagerCheckpoint
from cpumanager.checkpoint.memory import CHECKPOINT_TYPE as MEMORY_V1_TYPE

__all__ = [
    "CPUCheckpointV3",
    "CPUCheckpointV4",
    "MemoryCheckpointV2",
    "MemoryCheckpointV3",
    "NewerAttempt",
    "attempt_cpu_v3",
    "attempt_cpu_v4",
    "attempt_memory_v2",
    "attempt_memory_v3",
    "cpu_v3_checksum",
    "data_checksum",
    "encode_cpu_v3",
    "encode_cpu_v4",
    "encode_memory_v2",
    "encode_memory_v3",
    "memory_v2_checksum",
]

CPUEntries = dict[str, dict[str, str] | None]


@dataclass(frozen=True, slots=True)
class CPUPodEntry:
    """``podEntryJSON``: the pod-level CPU set as written (``cpuSet`` omitted when empty)."""

    cpu_set: str = ""


@dataclass(frozen=True, slots=True)
class CPUCheckpointV3:
    """``CPUManagerCheckpointV3``; also the inline part of V4."""

    policy_name: str = ""
    default_cpu_set: str = ""
    entries: CPUEntries | None = field(default_factory=dict)
    pod_entries: dict[str, CPUPodEntry | None] | None = field(default_factory=dict)
    checksum: int = 0


@dataclass(frozen=True, slots=True)
class CPUCheckpointData:
    """``CPUManagerCheckpointData``: what V4's ``data`` string holds."""

    policy_name: str = ""
    default_cpu_set: str = ""
    entries: CPUEntries | None = field(default_factory=dict)
    pod_entries: dict[str, CPUPodEntry | None] | None = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CPUCheckpointV4:
    """``CPUManagerCheckpointV4``: inline V3 fields, ``data``, ``dataChecksum``."""

    policy_name: str = ""
    default_cpu_set: str = ""
    entries: CPUEntries | None = field(default_factory=dict)
    pod_entries: dict[str, CPUPodEntry | None] | None = field(default_factory=dict)
    checksum: int = 0
    data: str = ""
    data_checksum: int = 0


@dataclass(frozen=True, slots=True)
class MemoryPodEntry:
    """``state.PodEntry`` of the memory manager."""

    memory_blocks: tuple[Block, ...] | None = None


MemoryPodEntries = dict[str, MemoryPodEntry | None]
MemoryEntries = dict[str, dict[str, "tuple[Block, ...] | None"] | None]


@dataclass(frozen=True, slots=True)
class MemoryCheckpointV2:
    """``MemoryManagerCheckpointV2`` (v1.36 with the gate)."""

    policy_name: str = ""
    machine_state: MachineState | None = field(default_factory=dict)
    entries: MemoryEntries | None = field(default_factory=dict)
    pod_entries: MemoryPodEntries | None = field(default_factory=dict)
    checksum: int = 0


@dataclass(frozen=True, slots=True)
class MemoryCheckpointData:
    """``MemoryManagerCheckpointData``: what memory V3's ``data`` string holds."""

    policy_name: str = ""
    machine_state: MachineState | None = field(default_factory=dict)
    entries: MemoryEntries | None = field(default_factory=dict)
    pod_entries: MemoryPodEntries | None = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class MemoryCheckpointV3:
    """``MemoryManagerCheckpointV3``: inline V1 fields (own checksum), data, dataChecksum."""

    policy_name: str = ""
    machine_state: MachineState | None = field(default_factory=dict)
    entries: MemoryEntries | None = field(default_factory=dict)
    checksum: int = 0
    data: str = ""
    data_checksum: int = 0


_STRING = GoScalar("string", "string")
_CHECKSUM = GoScalar("uint64", "checksum.Checksum")
_CPU_POD_ENTRY = GoStruct(
    "state", "podEntryJSON", CPUPodEntry, (GoField("CPUSet", "cpuSet", _STRING, omitempty=True),)
)
_CPU_ENTRIES = GoMap(
    _STRING, GoMap(_STRING, _STRING, "map[string]string"), "map[string]map[string]string"
)
_CPU_POD_ENTRIES = GoMap(_STRING, _CPU_POD_ENTRY, "state.PodCPUAssignments")
_CPU_HEAD = (
    GoField("PolicyName", "policyName", _STRING),
    GoField("DefaultCPUSet", "defaultCpuSet", _STRING),
    GoField("Entries", "entries", _CPU_ENTRIES, omitempty=True),
    GoField("PodEntries", "podEntries", _CPU_POD_ENTRIES, omitempty=True),
)
CPU_V3_TYPE = GoStruct(
    "state",
    "CPUManagerCheckpointV3",
    CPUCheckpointV3,
    (*_CPU_HEAD, GoField("Checksum", "checksum", _CHECKSUM)),
)
CPU_DATA_TYPE = GoStruct("state", "CPUManagerCheckpointData", CPUCheckpointData, _CPU_HEAD)
CPU_V4_TYPE = GoStruct(
    "state",
    "CPUManagerCheckpoint",
    CPUCheckpointV4,
    (
        *_CPU_HEAD,
        GoField("Checksum", "checksum", _CHECKSUM),
        GoField("Data", "data", _STRING),
        GoField("DataChecksum", "dataChecksum", _CHECKSUM),
    ),
)

_MEMORY_V1_FIELDS = MEMORY_V1_TYPE.fields  # PolicyName, MachineState, Entries, Checksum
_MEMORY_POD_ENTRY = GoStruct(
    "state",
    "PodEntry",
    MemoryPodEntry,
    (
        GoField(
            "MemoryBlocks", "memoryBlocks", GoSlice(BLOCK_TYPE, "[]state.Block"), omitempty=True
        ),
    ),
)
_MEMORY_POD_ENTRIES = GoField(
    "PodEntries",
    "podEntries",
    GoMap(_STRING, _MEMORY_POD_ENTRY, "state.PodMemoryAssignments"),
    omitempty=True,
)
MEMORY_V2_TYPE = GoStruct(
    "state",
    "MemoryManagerCheckpoint",
    MemoryCheckpointV2,
    (*_MEMORY_V1_FIELDS[:3], _MEMORY_POD_ENTRIES, _MEMORY_V1_FIELDS[3]),
)
MEMORY_DATA_TYPE = GoStruct(
    "state",
    "MemoryManagerCheckpointData",
    MemoryCheckpointData,
    (*_MEMORY_V1_FIELDS[:3], _MEMORY_POD_ENTRIES),
)
MEMORY_V3_TYPE = GoStruct(
    "state",
    "MemoryManagerCheckpoint",
    MemoryCheckpointV3,
    (
        *_MEMORY_V1_FIELDS,
        GoField("Data", "data", _STRING),
        GoField("DataChecksum", "dataChecksum", _CHECKSUM),
    ),
)


# --- checksums ------------------------------------------------------------------------------


def data_checksum(data: str) -> int:
    """``checksum.New(data)`` for a string: FNV-1a 32 of go-spew's ``(string)`` + the raw text."""
    return fnv1a_32(("(string)" + clean_text(data)).encode("utf-8"))


def _render_cpuset(text: str) -> str:
    """go-spew of a parsed ``cpuset.CPUSet`` (its one unexported field, a set as a map)."""
    cpus = sorted(parse_cpu_list(text)) if text else []
    members = " ".join(f"{cpu}:{{}}" for cpu in cpus)
    return f"(cpuset.CPUSet){{elems:(map[int]struct {{}})map[{members}]}}"


def _render_cpu_pod_entries(pod_entries: dict[str, CPUPodEntry | None] | None) -> str:
    if pod_entries is None:
        return "<nil>"
    parts = []
    for pod in sorted(pod_entries, key=clean_text):
        entry = pod_entries[pod] or CPUPodEntry()
        parts.append(f"{clean_text(pod)}:{{CPUSet:{_render_cpuset(entry.cpu_set)}}}")
    return "map[" + " ".join(parts) + "]"


def render_cpu_v3(checkpoint: CPUCheckpointV3, *, type_name: str = "CPUManagerCheckpoint") -> str:
    """go-spew's ``%#v`` of ``&checkpoint`` with ``Checksum`` zeroed."""
    return (
        f"(*state.{type_name}){{PolicyName:(string){clean_text(checkpoint.policy_name)}"
        f" DefaultCPUSet:(string){clean_text(checkpoint.default_cpu_set)}"
        f" Entries:(map[string]map[string]string){_render_v2_entries(checkpoint.entries)}"
        f" PodEntries:(state.PodCPUAssignments){_render_cpu_pod_entries(checkpoint.pod_entries)}"
        " Checksum:(checksum.Checksum)0}"
    )


def cpu_v3_checksum(checkpoint: CPUCheckpointV3, *, type_name: str = "CPUManagerCheckpoint") -> int:
    """The checksum written (legacy name) or also accepted (``CPUManagerCheckpointV3``)."""
    return fnv1a_32(render_cpu_v3(checkpoint, type_name=type_name).encode("utf-8"))


def memory_v2_checksum(checkpoint: MemoryCheckpointV2) -> int:
    """FNV-1a 32 of go-spew's ``&checkpoint`` named ``MemoryManagerCheckpoint``, checksum 0."""
    bare = MemoryCheckpointV2(
        checkpoint.policy_name, checkpoint.machine_state, checkpoint.entries, checkpoint.pod_entries
    )
    return fnv1a_32(spew(bare, MEMORY_V2_TYPE, pointer=True).encode("utf-8"))


def _memory_v1_checksum(policy: str, machine: Any, entries: Any) -> int:
    bare = MemoryManagerCheckpoint(policy, machine, entries, 0)
    return fnv1a_32(spew(bare, MEMORY_V1_TYPE, pointer=True).encode("utf-8"))


# --- encoding -------------------------------------------------------------------------------


def _cpu_data(policy: str, default: str, entries: Any, pods: Any) -> CPUCheckpointData:
    return CPUCheckpointData(policy, default, entries, pods)


def encode_cpu_v3(
    policy: str,
    default: str,
    entries: CPUEntries,
    pod_entries: dict[str, str],
) -> bytes:
    """The bytes a v1.36 kubelet with PodLevelResourceManagers writes."""
    pods: dict[str, CPUPodEntry | None] = {
        pod: CPUPodEntry(cpus) for pod, cpus in pod_entries.items()
    }
    bare = CPUCheckpointV3(policy, default, entries, pods, 0)
    stored = CPUCheckpointV3(policy, default, entries, pods, cpu_v3_checksum(bare))
    return marshal(stored, CPU_V3_TYPE)


def encode_cpu_v4(
    policy: str,
    default: str,
    entries: CPUEntries,
    pod_entries: dict[str, str],
) -> bytes:
    """The bytes PR #139102's kubelet writes: checksum 0, data, dataChecksum."""
    pods: dict[str, CPUPodEntry | None] = {
        pod: CPUPodEntry(cpus) for pod, cpus in pod_entries.items()
    }
    data = marshal(_cpu_data(policy, default, entries, pods), CPU_DATA_TYPE).decode("utf-8")
    stored = CPUCheckpointV4(policy, default, entries, pods, 0, data, data_checksum(data))
    return marshal(stored, CPU_V4_TYPE)


def encode_memory_v2(
    policy: str, machine: MachineState, entries: MemoryEntries, pod_entries: MemoryPodEntries
) -> bytes:
    """The bytes a v1.36 kubelet with PodLevelResourceManagers writes for the memory manager."""
    bare = MemoryCheckpointV2(policy, machine, entries, pod_entries, 0)
    stored = MemoryCheckpointV2(policy, machine, entries, pod_entries, memory_v2_checksum(bare))
    return marshal(stored, MEMORY_V2_TYPE)


def encode_memory_v3(
    policy: str, machine: MachineState, entries: MemoryEntries, pod_entries: MemoryPodEntries
) -> bytes:
    """The bytes of PR #139626's layout: V1 fields with their checksum, data, dataChecksum."""
    payload = MemoryCheckpointData(policy, machine, entries, pod_entries)
    data = marshal(payload, MEMORY_DATA_TYPE).decode("utf-8")
    stored = MemoryCheckpointV3(
        policy,
        machine,
        entries,
        _memory_v1_checksum(policy, machine, entries),
        data,
        data_checksum(data),
    )
    return marshal(stored, MEMORY_V3_TYPE)


# --- decoding -------------------------------------------------------------------------------

AttemptKind = Literal["ok", "syntax", "type", "corrupt"]
NewerFormat = Literal["cpu-v3", "cpu-v4", "memory-v2", "memory-v3"]


@dataclass(frozen=True, slots=True)
class NewerAttempt:
    """One format's read of the bytes, as the kubelet's ``GetCheckpoint`` does it."""

    format: NewerFormat
    kind: AttemptKind
    checkpoint: Any = None
    data: Any = None
    error: str = ""
    stored_checksum: int = 0
    computed_checksum: int = 0

    @property
    def ok(self) -> bool:
        return self.kind == "ok"


def _parse(data: bytes) -> gojson.JSONValue:
    return fastjson.parse(data)


def _check_pod_cpusets(pods: dict[str, CPUPodEntry | None] | None) -> str:
    for pod in sorted(pods or {}):
        entry = pods[pod] if pods else None
        text = entry.cpu_set if entry else ""
        try:
            parse_cpu_list(text)
        except CPUListError as err:
            return f"failed to parse cpuset: {err}"
    return ""


def attempt_cpu_v3(data: bytes) -> NewerAttempt:
    """Read as ``CPUManagerCheckpointV3``: both checksum names accepted, 0 is not exempt."""
    try:
        tree = _parse(data)
        checkpoint = unmarshal(tree, CPU_V3_TYPE, CPUCheckpointV3())
    except gojson.GoJSONSyntaxError as err:
        return NewerAttempt("cpu-v3", "syntax", error=err.message)
    except GoTypeError as err:
        return NewerAttempt("cpu-v3", "type", error=str(err))
    bad = _check_pod_cpusets(checkpoint.pod_entries)
    if bad:
        return NewerAttempt("cpu-v3", "type", error=bad)
    computed = cpu_v3_checksum(checkpoint)
    alternative = cpu_v3_checksum(checkpoint, type_name="CPUManagerCheckpointV3")
    if checkpoint.checksum not in (computed, alternative):
        return NewerAttempt(
            "cpu-v3",
            "corrupt",
            checkpoint,
            None,
            "checkpoint is corrupted",
            checkpoint.checksum,
            computed,
        )
    return NewerAttempt("cpu-v3", "ok", checkpoint, None, "", checkpoint.checksum, computed)


def attempt_cpu_v4(data: bytes) -> NewerAttempt:
    """Read as ``CPUManagerCheckpointV4``: unmarshal, unmarshal data, verify dataChecksum."""
    try:
        tree = _parse(data)
        checkpoint = unmarshal(tree, CPU_V4_TYPE, CPUCheckpointV4())
    except gojson.GoJSONSyntaxError as err:
        return NewerAttempt("cpu-v4", "syntax", error=err.message)
    except GoTypeError as err:
        return NewerAttempt(
            "cpu-v4", "type", error=f"failed to deserialize cpu manager checkpoint: {err}"
        )
    try:
        inner = unmarshal(
            _parse(checkpoint.data.encode("utf-8")), CPU_DATA_TYPE, CPUCheckpointData()
        )
    except gojson.GoJSONSyntaxError as err:
        message = f"failed to deserialize cpu manager checkpoint data: {err.message}"
        return NewerAttempt("cpu-v4", "type", checkpoint, error=message)
    except GoTypeError as err:
        message = f"failed to deserialize cpu manager checkpoint data: {err}"
        return NewerAttempt("cpu-v4", "type", checkpoint, error=message)
    bad = _check_pod_cpusets(inner.pod_entries)
    if bad:
        return NewerAttempt("cpu-v4", "type", checkpoint, error=bad)
    computed = data_checksum(checkpoint.data)
    if checkpoint.data_checksum != computed:
        return NewerAttempt(
            "cpu-v4",
            "corrupt",
            checkpoint,
            inner,
            "checkpoint is corrupted",
            checkpoint.data_checksum,
            computed,
        )
    return NewerAttempt("cpu-v4", "ok", checkpoint, inner, "", computed, computed)


def attempt_memory_v2(data: bytes) -> NewerAttempt:
    """Read as ``MemoryManagerCheckpointV2`` (checksum verified exactly, 0 not exempt)."""
    try:
        checkpoint = unmarshal(_parse(data), MEMORY_V2_TYPE, MemoryCheckpointV2())
    except gojson.GoJSONSyntaxError as err:
        return NewerAttempt("memory-v2", "syntax", error=err.message)
    except GoTypeError as err:
        return NewerAttempt("memory-v2", "type", error=str(err))
    computed = memory_v2_checksum(checkpoint)
    if checkpoint.checksum != computed:
        return NewerAttempt(
            "memory-v2",
            "corrupt",
            checkpoint,
            None,
            "checkpoint is corrupted",
            checkpoint.checksum,
            computed,
        )
    return NewerAttempt("memory-v2", "ok", checkpoint, None, "", computed, computed)


def attempt_memory_v3(data: bytes) -> NewerAttempt:
    """Read as ``MemoryManagerCheckpointV3``: ``dataChecksum`` over ``data`` is authoritative."""
    try:
        checkpoint = unmarshal(_parse(data), MEMORY_V3_TYPE, MemoryCheckpointV3())
    except gojson.GoJSONSyntaxError as err:
        return NewerAttempt("memory-v3", "syntax", error=err.message)
    except GoTypeError as err:
        message = f"failed to deserialize memory manager checkpoint: {err}"
        return NewerAttempt("memory-v3", "type", error=message)
    try:
        inner = unmarshal(
            _parse(checkpoint.data.encode("utf-8")), MEMORY_DATA_TYPE, MemoryCheckpointData()
        )
    except gojson.GoJSONSyntaxError as err:
        message = f"failed to deserialize memory manager checkpoint data: {err.message}"
        return NewerAttempt("memory-v3", "type", checkpoint, error=message)
    except GoTypeError as err:
        message = f"failed to deserialize memory manager checkpoint data: {err}"
        return NewerAttempt("memory-v3", "type", checkpoint, error=message)
    computed = data_checksum(checkpoint.data)
    if checkpoint.data_checksum != computed:
        return NewerAttempt(
            "memory-v3",
            "corrupt",
            checkpoint,
            inner,
            "checkpoint is corrupted",
            checkpoint.data_checksum,
            computed,
        )
    return NewerAttempt("memory-v3", "ok", checkpoint, inner, "", computed, computed)
