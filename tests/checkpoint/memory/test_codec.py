"""memory_manager_state: the kubelet's bytes, checksums and verdicts (state_checkpoint_test.go)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cpumanager.checkpoint.memory import codec as memory
from cpumanager.checkpoint.memory.codec import (
    Block,
    MemoryManagerCheckpoint,
    MemoryTable,
    NUMANodeState,
    attempt_memory,
    checksum_of_memory,
    decode_memory,
    encode_memory,
)
from cpumanager.errors import CheckpointCorruptError, CheckpointFormatError

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "memory"
VALID = (GOLDEN / "kubelet-test-restore-valid.json").read_bytes()
CANONICAL = (GOLDEN / "kubelet-test-restore-valid.canonical.json").read_bytes()

# The state the kubelet's test expects after restoring VALID.
EXPECTED = MemoryManagerCheckpoint(
    "static",
    {0: NUMANodeState(0, {"memory": MemoryTable(2048, 512, 1536, 512, 1024)}, ())},
    {"pod": {"container1": (Block((0,), "memory", 512),)}},
    4215593881,
)


def test_kubelet_test_file_restores_to_the_expected_state() -> None:
    assert decode_memory(VALID, source="memory_manager_state") == EXPECTED


def test_checksum_is_the_kubelets() -> None:
    assert checksum_of_memory(EXPECTED) == 4215593881


def test_rendering_is_go_spew_of_the_pointer() -> None:
    assert memory.render_memory(EXPECTED) == (
        "(*state.MemoryManagerCheckpoint){PolicyName:(string)static "
        "MachineState:(state.NUMANodeMap)map[0:<*>{NumberOfAssignments:(int)0 "
        "MemoryMap:(map[v1.ResourceName]*state.MemoryTable)map[memory:<*>{"
        "TotalMemSize:(uint64)2048 SystemReserved:(uint64)512 Allocatable:(uint64)1536 "
        "Reserved:(uint64)512 Free:(uint64)1024}] "
        "Cells:([]int)[]}] Entries:(state.ContainerMemoryAssignments)map[pod:map[container1:"
        "[{NUMAAffinity:([]int)[0] Type:(v1.ResourceName)memory Size:(uint64)512}]]] "
        "Checksum:(checksum.Checksum)0}"
    )


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.json")), ids=lambda p: p.name)
def test_golden_files_round_trip_or_fail_as_the_kubelet(path: Path) -> None:
    data = path.read_bytes()
    result = attempt_memory(data)
    if path.name.startswith("kubelet-test-invalid-checksum"):
        assert (result.kind, result.error) == ("corrupt", "checkpoint is corrupted")
        assert result.stored_checksum == 101010
    elif path.name.startswith("kubelet-test-invalid-json"):
        assert (result.kind, result.error) == ("syntax", "unexpected end of JSON input")
    else:
        assert result.ok, result.error
        assert result.checkpoint is not None
        expected = CANONICAL if path.name == "kubelet-test-restore-valid.json" else data
        assert encode_memory(result.checkpoint) == expected


def test_integer_keys_are_written_in_string_order() -> None:
    data = (GOLDEN / "generated-twelve-nodes-hugepages.json").read_bytes()
    text = data.decode()
    assert text.index('"10":') < text.index('"2":') < text.index('"9":')
    assert '"sidecar":[]' in text


def test_a_stored_zero_is_not_accepted() -> None:
    zeroed = VALID.replace(b"4215593881", b"0")
    with pytest.raises(CheckpointCorruptError) as caught:
        decode_memory(zeroed, source="memory_manager_state")
    assert (caught.value.stored, caught.value.computed) == (0, 4215593881)


def test_nil_and_empty_hash_differently() -> None:
    empty = MemoryManagerCheckpoint("Static", {}, {})
    nil = MemoryManagerCheckpoint("Static", None, None)
    assert checksum_of_memory(empty) != checksum_of_memory(nil)
    assert encode_memory(nil) == b'{"policyName":"Static","machineState":null,"checksum":0}'
    assert encode_memory(empty) == b'{"policyName":"Static","machineState":{},"checksum":0}'


def test_development_pod_entries_fail_the_released_checksum() -> None:
    # kubelet PR #134768 adds "podEntries"; a released kubelet ignores the key and the
    # stored checksum (which covers PodEntries) no longer matches.
    dev = VALID.replace(
        b'"checksum": 4215593881',
        b'"podEntries":{"pod":{"memoryBlocks":[]}},"checksum": 1278640530',
    )
    result = attempt_memory(dev)
    assert result.kind == "corrupt"


ERRORS = [
    (b"{", "unexpected end of JSON input"),
    (b'{"machineState":{"zero":{}}}', "json: cannot unmarshal number zero into Go struct field "
     "MemoryManagerCheckpoint.machineState of type int"),
    (b'{"machineState":{"0":{"cells":[0.5]}}}', "json: cannot unmarshal number 0.5 into Go struct "
     "field NUMANodeState.machineState.cells of type int"),
    (b'{"entries":{"p":{"c":[{"size":-1}]}}}', "json: cannot unmarshal number -1 into Go struct "
     "field Block.entries.size of type uint64"),
    (b'{"checksum":"1"}', "json: cannot unmarshal string into Go struct field "
     "MemoryManagerCheckpoint.checksum of type checksum.Checksum"),
]  # fmt: skip


@pytest.mark.parametrize(("data", "message"), ERRORS, ids=[e[1][:40] for e in ERRORS])
def test_decoding_errors_in_gos_words(data: bytes, message: str) -> None:
    assert attempt_memory(data).error == message
    with pytest.raises(CheckpointFormatError) as caught:
        decode_memory(data, source="memory_manager_state")
    assert message in caught.value.message
    assert "\n" not in caught.value.message
