"""Each release's read of the CPU, memory and device checkpoints, from the kubelet's code.

Sources (kubernetes/kubernetes): ``pkg/kubelet/cm/cpumanager/state/{checkpoint,
state_checkpoint}.go`` and ``memorymanager/state/{checkpoint,state_checkpoint}.go`` at v1.32
(vendored), at v1.36 and on the 1.37 line; the 1.37 memory expectations are the rows of
``TestCheckpointStateRestore`` there. The last test is the version matrix: every release in
``core/versions.py`` x every checkpoint kind and format x accept or refuse.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cpumanager.checkpoint import compat, newer
from cpumanager.checkpoint.cpu import codec
from cpumanager.checkpoint.cpu.model import CheckpointV1, CheckpointV2
from cpumanager.checkpoint.memory import codec as memory
from cpumanager.checkpoint.memory.model import (
    Block,
    MemoryManagerCheckpoint,
    MemoryTable,
    NUMANodeState,
)
from cpumanager.core import versions
from cpumanager.core.versions import Release

GOLDEN = Path(__file__).parent / "golden"
R132, R135, R136, R137 = (1, 32), (1, 35), (1, 36), (1, 37)

# --- memory_manager_state: the 1.37 test table's documents, rebuilt ---------------------------

_TABLE = {"total": 2048, "systemReserved": 512, "allocatable": 1536, "reserved": 512, "free": 1024}
_MACHINE = {"0": {"numberOfAssignments": 0, "memoryMap": {"memory": _TABLE}, "cells": []}}
_ENTRIES = {"pod": {"container1": [{"numaAffinity": [0], "type": "memory", "size": 512}]}}
_DATA = json.dumps(
    {"policyName": "static", "machineState": _MACHINE, "entries": _ENTRIES}, separators=(",", ":")
)
_STALE_V1 = {  # the inline V1 part the table corrupts on purpose: it must not be used
    "policyName": "other",
    "machineState": {
        "0": {
            "numberOfAssignments": 5,
            "memoryMap": {
                "memory": {
                    "total": 1024,
                    "systemReserved": 256,
                    "allocatable": 768,
                    "reserved": 256,
                    "free": 512,
                }
            },
            "cells": [],
        }
    },
    "entries": {"pod": {"containerX": [{"numaAffinity": [0], "type": "memory", "size": 128}]}},
    "checksum": 1234,
}
_V1 = {"policyName": "static", "machineState": _MACHINE, "entries": _ENTRIES}


def _doc(**fields: object) -> bytes:
    return json.dumps(fields).encode()


MEMORY_137 = [
    # (description, document, configured policy, error or "")
    ("no data", _doc(**_V1, checksum=4215593881, dataChecksum=1234), "none",
     "could not load v3 checkpoint: failed to deserialize memory manager checkpoint data: "
     "unexpected end of JSON input"),
    ("no dataChecksum", _doc(**_V1, checksum=4215593881, data=_DATA), "none",
     "could not load v3 checkpoint: checkpoint is corrupted"),
    ("valid data, stale inline part", _doc(**_STALE_V1, data=_DATA, dataChecksum=1849615440),
     "static", ""),
    ("wrong dataChecksum", _doc(**_V1, checksum=4215593881, data=_DATA, dataChecksum=1234),
     "none", "could not load v3 checkpoint: checkpoint is corrupted"),
    ("data not JSON", _doc(**_V1, checksum=4215593881, data="{", dataChecksum=1234), "none",
     "could not load v3 checkpoint: failed to deserialize memory manager checkpoint data: "
     "unexpected end of JSON input"),
    ("document not JSON", b"{", "none", "unexpected end of JSON input"),
    ("policy differs", _doc(**_STALE_V1, data=_DATA, dataChecksum=1849615440), "none",
     '[memorymanager] configured policy "none" differs from state checkpoint policy "static"'),
    ("V1", _doc(**_V1, checksum=4215593881), "static", ""),
    ("V1 with checksum 0", _doc(**_V1, checksum=0), "static", ""),
    ("V1 with a wrong checksum", _doc(**_V1, checksum=101010), "static",
     "checkpoint is corrupted"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("data", "policy", "error"), [c[1:] for c in MEMORY_137], ids=[c[0] for c in MEMORY_137]
)
def test_memory_at_137_as_its_test_table(data: bytes, policy: str, error: str) -> None:
    outcome = compat.read_as(data, R137, policy=policy, kind="memory")
    assert outcome.error == error


def test_memory_v3_with_data_falls_back_before_137() -> None:
    # 1.36 and older read the inline V1 fields; a stored data/dataChecksum means nothing there
    data = _doc(**_V1, checksum=4215593881, data="{", dataChecksum=1234)
    assert compat.read_as(data, R136).format == "memory-v1"
    assert compat.read_as(data, R132).format == "memory-v1"


def test_memory_checksum_zero_per_release() -> None:
    zero = _doc(**_V1, checksum=0)
    assert compat.read_as(zero, R132).error == "checkpoint is corrupted"
    assert compat.read_as(zero, R137).format == "memory-v1"
    # a "null" document: no field is set, the checksum 0 meets a computed one at 1.32
    assert compat.read_as(b"null", R132, kind="memory").error == "checkpoint is corrupted"
    assert compat.read_as(b"null", R137, kind="memory", policy="None").error == (
        '[memorymanager] configured policy "None" differs from state checkpoint policy ""'
    )


def test_memory_v2_with_checksum_zero_at_137_is_read_by_the_v1_reader() -> None:
    pods = {"pod": {"memoryBlocks": [{"numaAffinity": [0], "type": "memory", "size": 512}]}}
    data = _doc(**_V1, podEntries=pods, checksum=0)
    outcome = compat.read_as(data, R137, gate=False, policy="static")
    assert outcome.ok
    assert outcome.format == "memory-v1"


def test_memory_v1_type_error_names_the_release_struct() -> None:
    data = b'{"policyName":"Static","machineState":{"0":5},"checksum":1}'
    assert compat.read_as(data, R132).error == (
        "json: cannot unmarshal number into Go struct field MemoryManagerCheckpoint.machineState"
        " of type state.NUMANodeState"
    )
    v1_struct = (
        "json: cannot unmarshal number into Go struct field MemoryManagerCheckpointV1."
        "machineState of type state.NUMANodeState"
    )
    assert compat.read_as(data, R135).error == compat.read_as(data, R132).error
    assert compat.read_as(data, R136).error == v1_struct  # its own struct from 1.36
    assert compat.read_as(data, R137).error == v1_struct


# --- cpu_manager_state ---------------------------------------------------------------------


def _v4_doc(**changes: object) -> bytes:
    doc = json.loads(newer.encode_cpu_v4("static", "0,3-7", {"pod": {"c": "1-2"}}, {}))
    doc.update(changes)
    return json.dumps(doc).encode()


def _v4_with_data(data: dict[str, object]) -> bytes:
    text = json.dumps(data, separators=(",", ":"))
    return _v4_doc(data=text, dataChecksum=newer.data_checksum(text))


CPU_V4_137 = [
    ("wrong dataChecksum", _v4_doc(dataChecksum=1234),
     "could not load v4 checkpoint: checkpoint is corrupted"),
    ("no dataChecksum", _v4_doc(dataChecksum=0),
     "could not load v4 checkpoint: checkpoint is corrupted"),
    ("no data", _v4_doc(data=""),
     "could not load v4 checkpoint: failed to deserialize cpu manager checkpoint data: "
     "unexpected end of JSON input"),
    ("data cut short", _v4_doc(data='{"policyName":"static"'),
     "could not load v4 checkpoint: failed to deserialize cpu manager checkpoint data: "
     "unexpected end of JSON input"),
    ("data of the wrong type", _v4_doc(data=5, dataChecksum=77),
     "could not load v4 checkpoint: failed to deserialize cpu manager checkpoint: json: cannot "
     "unmarshal number into Go struct field CPUManagerCheckpoint.data of type string"),
    ("default CPU set unparsable",
     _v4_with_data({"policyName": "static", "defaultCpuSet": "0-x"}),
     'could not parse default CPU set "0-x": strconv.Atoi: parsing "x": invalid syntax'),
    ("container CPU set unparsable",
     _v4_with_data({"policyName": "static", "defaultCpuSet": "0", "entries": {"p": {"c": "9-1"}}}),
     'could not parse cpuset "9-1" for container "c" in pod "p": invalid range "9-1" (9 > 1)'),
]  # fmt: skip


@pytest.mark.parametrize(
    ("data", "error"), [c[1:] for c in CPU_V4_137], ids=[c[0] for c in CPU_V4_137]
)
def test_cpu_v4_at_137_does_not_fall_back(data: bytes, error: str) -> None:
    assert compat.read_as(data, R137, policy="static").error == error


@pytest.mark.parametrize("data", [c[1] for c in CPU_V4_137], ids=[c[0] for c in CPU_V4_137])
def test_cpu_v4_before_137_reads_the_inline_v2(data: bytes) -> None:
    # checksum 0 on the inline fields: v1.18 .. v1.36 read them as V2 and ignore the rest
    outcome = compat.read_as(data, R136, gate=False, policy="static")
    assert (outcome.format, outcome.error) == ("cpu-v2", "")


def test_cpu_v1_has_no_reader_at_137() -> None:
    data = codec.encode_v1(CheckpointV1("none", "0-7", {"cid": "1"}, 0))
    assert compat.read_as(data, R136).format == "cpu-v1"
    assert compat.read_as(data, R137).error == (
        "json: cannot unmarshal string into Go struct field CPUManagerCheckpointV2.entries of "
        "type map[string]string"
    )


def test_cpu_policy_is_checked_at_every_release() -> None:
    v2 = codec.encode_checkpoint(compat.fresh_v2(CheckpointV2("none", "0-7", {}, 0)))
    v4 = newer.encode_cpu_v4("static", "0-7", {}, {})
    v3 = newer.encode_cpu_v3("static", "0-7", {}, {"p": "1"})
    text = 'configured policy "{}" differs from state checkpoint policy "{}"'
    assert compat.read_as(v2, R132, policy="static").error == text.format("static", "none")
    assert compat.read_as(v4, R137, policy="none").error == text.format("none", "static")
    assert compat.read_as(v3, R136, gate=True, policy="none").error == text.format("none", "static")
    assert compat.read_as(v4, R137, policy="static").ok


def test_cpu_default_set_wording_per_release() -> None:
    bad = codec.encode_checkpoint(compat.fresh_v2(CheckpointV2("static", "x", {}, 0)))
    assert compat.read_as(bad, R136).error.startswith('could not parse default cpu set "x": ')
    assert compat.read_as(bad, R137).error.startswith('could not parse default CPU set "x": ')


def test_gate_written_files_without_pod_entries_are_named_and_read() -> None:
    cpu = newer.encode_cpu_v3("static", "0-7", {}, {})
    machine = {0: NUMANodeState(0, {"memory": MemoryTable(2048, 512, 1536, 0, 1536)}, (0,))}
    mem = newer.encode_memory_v2("Static", machine, {}, {})
    assert compat.identify(cpu) == "cpu-v3"
    assert compat.identify(mem) == "memory-v2"
    assert compat.read_as(cpu, R137).ok
    assert compat.read_as(mem, R137).ok
    assert not compat.read_as(cpu, R136, gate=False).ok


# --- the version matrix ----------------------------------------------------------------------


def _files() -> dict[str, tuple[bytes, compat.CheckpointKind]]:
    machine = {0: NUMANodeState(0, {"memory": MemoryTable(2048, 512, 1536, 512, 1024)}, (0,))}
    blocks = {"pod": {"c": (Block((0,), "memory", 512),)}}
    mem_v1 = memory.with_fresh_checksum(MemoryManagerCheckpoint("Static", machine, blocks))
    pods = {"pod": newer.MemoryPodEntry((Block((0,), "memory", 512),))}
    v4 = newer.encode_cpu_v4("static", "0,3-7", {"pod": {"c": "1-2"}}, {})
    mem_v3 = newer.encode_memory_v3("Static", machine, blocks, {})
    device = GOLDEN / "device"
    return {
        "cpu-v1": (codec.encode_v1(CheckpointV1("static", "0-7", {}, 0)), "cpu"),
        "cpu-v2": (codec.encode_checkpoint(compat.fresh_v2(CheckpointV2("static", "0-7"))), "cpu"),
        "cpu-v3": (newer.encode_cpu_v3("static", "0,3-7", {}, {"pod": "1-2"}), "cpu"),
        "cpu-v4": (v4, "cpu"),
        "cpu-v4-bad-dataChecksum": (v4.replace(b'"dataChecksum":', b'"dataChecksum":1'), "cpu"),
        "memory-v1": (memory.encode_memory(mem_v1), "memory"),
        "memory-v2": (newer.encode_memory_v2("Static", machine, blocks, pods), "memory"),
        "memory-v3": (mem_v3, "memory"),
        "memory-v3-bad-dataChecksum": (
            mem_v3.replace(b'"dataChecksum":', b'"dataChecksum":1'),
            "memory",
        ),
        "device-v1": ((device / "generated-v1-pre120.json").read_bytes(), "device"),
        "device-v2": ((device / "one-gpu-numa0.json").read_bytes(), "device"),
    }


def _span(first: str, last: str) -> frozenset[Release]:
    low, high = versions.parse_release(first), versions.parse_release(last)
    return frozenset(r for r in versions.RELEASES if low <= r <= high)


# The releases that read each file with their default gates (PodLevelResourceManagers off).
ACCEPTED_BY = {
    "cpu-v1": _span("1.18", "1.36"),
    "cpu-v2": _span("1.18", "1.37"),
    "cpu-v3": _span("1.37", "1.37"),  # 1.37 reads V3 whatever the gate (pod entries dropped)
    "cpu-v4": _span("1.18", "1.37"),
    "cpu-v4-bad-dataChecksum": _span("1.18", "1.36"),
    "memory-v1": _span("1.21", "1.37"),
    "memory-v2": _span("1.37", "1.37"),
    "memory-v3": _span("1.21", "1.37"),
    "memory-v3-bad-dataChecksum": _span("1.21", "1.36"),
    "device-v1": _span("1.18", "1.29"),
    "device-v2": _span("1.20", "1.37"),
}


@pytest.mark.parametrize("release", versions.RELEASES, ids=lambda r: f"{r[0]}.{r[1]}")
@pytest.mark.parametrize("name", sorted(ACCEPTED_BY))
def test_version_matrix(name: str, release: Release) -> None:
    data, kind = _files()[name]
    outcome = compat.read_as(data, release, kind=kind)
    assert outcome.ok == (release in ACCEPTED_BY[name]), outcome


def test_version_matrix_with_the_gate_on() -> None:
    files = _files()
    gated = [r for r in versions.RELEASES if r >= R136]
    for name in ("cpu-v3", "memory-v2"):
        data, kind = files[name]
        for release in gated:
            outcome = compat.read_as(data, release, gate=True, kind=kind)
            assert outcome.ok
            assert outcome.dropped_pod_entries == 0
    assert compat.read_as(files["cpu-v3"][0], R137, gate=False).dropped_pod_entries == 1
    assert not compat.read_as(files["cpu-v3"][0], R135, gate=True).ok


def test_cpu_136_tries_v2_before_v1_and_reports_v1s_error() -> None:
    data = codec.encode_checkpoint(CheckpointV2("none", "0-7", {"p": {"c": "1"}}, 12345))
    assert compat.read_as(data, R135).error == "checkpoint is corrupted"  # V1, then V2's error
    v1_error = (
        "json: cannot unmarshal object into Go struct field CPUManagerCheckpointV1.entries of "
        "type string"
    )
    assert compat.read_as(data, R136, gate=False).error == v1_error
    assert compat.read_as(data, R136, gate=True).error == v1_error
    assert compat.read_as(data, R137).error == "checkpoint is corrupted"  # no V1 reader
