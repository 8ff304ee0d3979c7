"""Post-1.35 checkpoint formats: the kubelet's own test files verify, our bytes round-trip."""

from __future__ import annotations

from pathlib import Path

import pytest

from cpumanager.checkpoint import compat, newer
from cpumanager.checkpoint.cpu import codec
from cpumanager.checkpoint.memory import codec as memory
from cpumanager.checkpoint.memory.codec import Block, MemoryTable, NUMANodeState

GOLDEN = Path(__file__).parent / "golden" / "newer"


def golden(name: str) -> bytes:
    return (GOLDEN / name).read_bytes()


def test_cpu_v3_file_from_the_kubelet_tests_verifies() -> None:
    # state_checkpoint_test.go "Restore checkpoint from v3 (migration)": checksum 2284712151.
    result = newer.attempt_cpu_v3(golden("cpu-v3-kubelet-test.json"))
    assert result.ok
    assert result.checkpoint.pod_entries == {"pod2": newer.CPUPodEntry("7-9")}


def test_cpu_v3_checksum_names() -> None:
    checkpoint = newer.attempt_cpu_v3(golden("cpu-v3-kubelet-test.json")).checkpoint
    named = newer.cpu_v3_checksum(checkpoint, type_name="CPUManagerCheckpointV3")
    assert named == 2284712151
    assert newer.cpu_v3_checksum(checkpoint) != named  # the legacy name hashes differently


def test_cpu_v3_tampered_is_corrupt() -> None:
    data = golden("cpu-v3-kubelet-test.json").replace(b'"7-9"', b'"7-8"')
    result = newer.attempt_cpu_v3(data)
    assert result.kind == "corrupt"
    assert result.error == "checkpoint is corrupted"


def test_memory_v2_file_from_the_kubelet_tests_verifies() -> None:
    # memorymanager state_checkpoint_test.go "Restore checkpoint from v2": 1278640530.
    result = newer.attempt_memory_v2(golden("memory-v2-kubelet-test.json"))
    assert result.ok
    assert result.computed_checksum == 1278640530
    # a released kubelet's V1 reader ignores podEntries and the hash no longer matches
    assert memory.attempt_memory(golden("memory-v2-kubelet-test.json")).kind == "corrupt"


def test_memory_v3_file_from_the_kubelet_tests_verifies_by_data_checksum() -> None:
    # Its inline V1 part is corrupted on purpose (checksum 1234): data is authoritative.
    result = newer.attempt_memory_v3(golden("memory-v3-kubelet-test.json"))
    assert result.ok
    assert result.computed_checksum == 637296054
    assert result.data.policy_name == "static"
    assert memory.attempt_memory(golden("memory-v3-kubelet-test.json")).kind == "corrupt"


def test_data_checksum_of_the_reverted_layout() -> None:
    # PR #137820's test file: checksum over the data string, 2328898362.
    attempt = newer.attempt_cpu_v4(golden("cpu-data-reverted-137820-kubelet-test.json"))
    assert newer.data_checksum(attempt.checkpoint.data) == 2328898362
    assert attempt.kind == "corrupt"  # the merged V4 reads dataChecksum, absent here
    assert compat.identify(golden("cpu-data-reverted-137820-kubelet-test.json")) == (
        "cpu-data-137820"
    )


ENTRIES = {"pod1": {"c1": "1-2"}}
PODS = {"pod1": "1-2"}


def test_cpu_v4_round_trip_and_forward_compatibility() -> None:
    data = newer.encode_cpu_v4("static", "0,3-7", ENTRIES, PODS)
    result = newer.attempt_cpu_v4(data)
    assert result.ok
    assert result.data.pod_entries == {"pod1": newer.CPUPodEntry("1-2")}
    assert b'"checksum":0,"data":' in data
    # a v1.18+ kubelet reads it as V2 (checksum 0 is unchecked) and ignores podEntries
    older = codec.decode(data, source="x")
    assert older.entries == {"pod1": {"c1": "1-2"}}
    assert compat.read_as(data, (1, 35)).dropped_pod_entries == 1


def test_cpu_v3_round_trip() -> None:
    data = newer.encode_cpu_v3("static", "0,3-7", ENTRIES, PODS)
    assert newer.attempt_cpu_v3(data).ok
    assert compat.identify(data) == "cpu-v3"
    assert codec.attempts(data)[1].kind == "corrupt"  # a 1.35 kubelet refuses it


def test_cpu_v4_empty_pod_entry_and_broken_data() -> None:
    data = newer.encode_cpu_v4("static", "0-7", {}, {"p": ""})
    assert b'"podEntries":{"p":{}}' in data
    assert newer.attempt_cpu_v4(data).ok
    broken = newer.attempt_cpu_v4(b'{"policyName":"none","defaultCpuSet":"","checksum":0}')
    assert broken.kind == "type"
    assert broken.error.startswith("failed to deserialize cpu manager checkpoint data: ")


def _memory_parts() -> tuple[dict[int, NUMANodeState | None], dict[str, object]]:
    machine: dict[int, NUMANodeState | None] = {
        0: NUMANodeState(1, {"memory": MemoryTable(2048, 0, 2048, 1024, 1024)}, (0,))
    }
    return machine, {"pod1": {"c1": (Block((0,), "memory", 1024),)}}


def test_memory_v3_round_trip_is_read_by_released_kubelets_as_v1() -> None:
    machine, entries = _memory_parts()
    pods = {"pod1": newer.MemoryPodEntry((Block((0,), "memory", 1024),))}
    data = newer.encode_memory_v3("Static", machine, entries, pods)  # type: ignore[arg-type]
    assert newer.attempt_memory_v3(data).ok
    assert memory.attempt_memory(data).ok  # V1 checksum kept inline
    assert compat.read_as(data, (1, 30)).dropped_pod_entries == 0  # V1 has no pod entries
    assert compat.identify(data) == "memory-v3"


def test_memory_v2_round_trip() -> None:
    machine, entries = _memory_parts()
    pods = {"pod1": newer.MemoryPodEntry((Block((0,), "memory", 1024),))}
    data = newer.encode_memory_v2("Static", machine, entries, pods)  # type: ignore[arg-type]
    assert newer.attempt_memory_v2(data).ok
    assert compat.identify(data) == "memory-v2"


@pytest.mark.parametrize(
    ("name", "gate", "release", "expected"),
    [
        ("cpu-v3-kubelet-test.json", True, (1, 37), "cpu-v3"),
        ("cpu-v3-kubelet-test.json", False, (1, 35), "checkpoint is corrupted"),
        ("memory-v2-kubelet-test.json", True, (1, 36), "memory-v2"),
        ("memory-v2-kubelet-test.json", False, (1, 36), "checkpoint is corrupted"),
        ("memory-v3-kubelet-test.json", False, (1, 35), "checkpoint is corrupted"),
        ("memory-v3-kubelet-test.json", False, (1, 37), "memory-v3"),
    ],
)
def test_read_as_per_release(
    name: str, gate: bool, release: tuple[int, int], expected: str
) -> None:
    outcome = compat.read_as(golden(name), release, gate=gate)
    assert (outcome.format or outcome.error) == expected


def test_readers_of_a_v2_file() -> None:
    data = (Path(__file__).parent / "golden" / "v2-one-pod-two-containers.json").read_bytes()
    assert compat.readers(data) == ("1.18-1.37", "1.36-1.37")
