"""CPU manager checkpoints after v1.35: V3 (``podEntries``) and V4 (``data``/``dataChecksum``).

The kubelet's ``pkg/kubelet/cm/cpumanager/state/checkpoint.go``; the formats are described
in :mod:`cpumanager.checkpoint.newer`. Pure: bytes in, models and bytes out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cpumanager.checkpoint.cpu.checksum import _render_v2_entries
from cpumanager.checkpoint.cpu.cpulist import CPUListError, parse_cpu_list
from cpumanager.checkpoint.go import gojson
from cpumanager.checkpoint.go.fnv import clean_text, fnv1a_32
from cpumanager.checkpoint.go.godecode import GoTypeError, unmarshal
from cpumanager.checkpoint.go.goencode import marshal
from cpumanager.checkpoint.go.gotypes import GoField, GoMap, GoStruct
from cpumanager.checkpoint.newer_common import CHECKSUM as _CHECKSUM
from cpumanager.checkpoint.newer_common import STRING as _STRING
from cpumanager.checkpoint.newer_common import NewerAttempt, attempt_wrapped, data_checksum
from cpumanager.checkpoint.newer_common import parse as _parse

__all__ = [
    "CPU_DATA_TYPE",
    "CPU_V3_TYPE",
    "CPU_V4_TYPE",
    "CPUCheckpointData",
    "CPUCheckpointV3",
    "CPUCheckpointV4",
    "CPUEntries",
    "CPUPodEntry",
    "attempt_cpu_v3",
    "attempt_cpu_v4",
    "cpu_v3_checksum",
    "encode_cpu_v3",
    "encode_cpu_v4",
    "render_cpu_v3",
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
    return attempt_wrapped(
        data,
        "cpu-v4",
        "cpu",
        (CPU_V4_TYPE, CPUCheckpointV4()),
        (CPU_DATA_TYPE, CPUCheckpointData()),
        check=lambda inner: _check_pod_cpusets(inner.pod_entries),
    )
