"""The memory manager's restore refusals (state_checkpoint_test.go, policy_static_test.go)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cpumanager.adapters.checkpoint_files import load_memory_state
from cpumanager.checkpoint.memory.codec import (
    Block,
    MemoryManagerCheckpoint,
    MemoryTable,
    NUMANodeState,
    encode_memory,
    with_fresh_checksum,
)
from cpumanager.checkpoint.memory.restore import (
    MISMATCH,
    default_machine_state,
    restore_memory_state,
    validate_memory_state,
)
from cpumanager.errors import CheckpointCorruptError, CheckpointFormatError, StateValidationError

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "memory"
VALID = (GOLDEN / "kubelet-test-restore-valid.json").read_bytes()
GB = 1 << 30
SOURCE = "/var/lib/kubelet/memory_manager_state"
SUFFIX = (
    ", please drain this node and delete the memory manager checkpoint file "
    '"/var/lib/kubelet/memory_manager_state" before restarting Kubelet'
)


def test_no_file_restores_nothing() -> None:
    assert restore_memory_state(None, source=SOURCE, configured_policy="Static") is None


REFUSALS = [
    (VALID, "none", StateValidationError,
     '[memorymanager] configured policy "none" differs from state checkpoint policy "static"'),
    ((GOLDEN / "kubelet-test-invalid-checksum.json").read_bytes(), "static",
     CheckpointCorruptError, "checkpoint is corrupted"),
    (b"{", "static", CheckpointFormatError, "unexpected end of JSON input"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("data", "policy", "error", "reason"), REFUSALS, ids=["policy", "sum", "json"]
)
def test_refusals_in_the_kubelets_words(
    data: bytes, policy: str, error: type[Exception], reason: str
) -> None:
    with pytest.raises(error) as caught:
        restore_memory_state(data, source=SOURCE, configured_policy=policy)
    assert str(caught.value) == f"could not restore state from checkpoint: {reason}{SUFFIX}"


def test_valid_file_restores() -> None:
    restored = restore_memory_state(VALID, source=SOURCE, configured_policy="static")
    assert restored is not None
    assert restored.entries == {"pod": {"container1": (Block((0,), "memory", 512),)}}


# Two nodes of 2 GiB, 512 MiB reserved on node 0 (policy_static_test.go's shapes).
DEFAULT = default_machine_state({0: 2 * GB, 1: 2 * GB}, system_reserved={0: {"memory": GB // 2}})


def _state(
    entries: dict[str, dict[str, tuple[Block, ...] | None] | None],
    machine: dict[int, NUMANodeState | None],
) -> MemoryManagerCheckpoint:
    return MemoryManagerCheckpoint("Static", machine, entries)


def _node(
    free: int, reserved: int, total: int, sys_reserved: int, *, count: int, cells: tuple[int, ...]
) -> NUMANodeState:
    table = MemoryTable(total, sys_reserved, total - sys_reserved, reserved, free)
    return NUMANodeState(count, {"memory": table}, cells)


ONE_GB_ON_0 = {"p": {"c": (Block((0,), "memory", GB),)}}
GOOD_MACHINE = {
    0: _node(GB // 2, GB, 2 * GB, GB // 2, count=1, cells=(0,)),
    1: _node(2 * GB, 0, 2 * GB, 0, count=0, cells=(1,)),
}
VALIDATE = [
    ("fresh state fits", _state({}, dict(DEFAULT)), ()),
    ("empty machine state, no assignments", _state({}, {}), ()),
    ("empty machine state with assignments", _state(ONE_GB_ON_0, {}),
     ("[memorymanager] machine state can not be empty when it has memory assignments",)),
    ("one block charged as the kubelet does", _state(ONE_GB_ON_0, GOOD_MACHINE), ()),
    ("reservedMemory changed since", _state({}, {
        0: _node(2 * GB, 0, 2 * GB, 0, count=0, cells=(0,)), 1: DEFAULT[1]}), (MISMATCH,)),
    ("block on a node the machine lacks", _state({"p": {"c": (Block((3,), "memory", 1),)}},
     GOOD_MACHINE), ("[memorymanager] (pod: p, container: c) the memory assignment uses the "
                     "NUMA that does not exist",)),
    ("block of a type the node lacks", _state({"p": {"c": (Block((0,), "hugepages-1Gi", 1),)}},
     GOOD_MACHINE), ("[memorymanager] (pod: p, container: c) the memory assignment uses memory "
                     "resource that does not exist",)),
    ("assignment count differs", _state({}, GOOD_MACHINE), (MISMATCH,)),
]  # fmt: skip


@pytest.mark.parametrize(("name", "checkpoint", "reasons"), VALIDATE, ids=[v[0] for v in VALIDATE])
def test_validate_state(
    name: str, checkpoint: MemoryManagerCheckpoint, reasons: tuple[str, ...]
) -> None:
    assert validate_memory_state(checkpoint, DEFAULT) == reasons


def test_spilled_block_compares_free_over_the_group() -> None:
    # 2 GiB over nodes {0,1}: node 0 gives its 1.5 GiB, node 1 the rest; a file that
    # distributes it the other way round has the same sums over the group and is accepted.
    block = {"p": {"c": (Block((0, 1), "memory", 2 * GB),)}}
    kubelet = {
        0: _node(0, GB + GB // 2, 2 * GB, GB // 2, count=1, cells=(0, 1)),
        1: _node(GB + GB // 2, GB // 2, 2 * GB, 0, count=1, cells=(1, 0)),
    }
    swapped = {
        0: _node(GB // 2, GB, 2 * GB, GB // 2, count=1, cells=(0, 1)),
        1: _node(GB, GB, 2 * GB, 0, count=1, cells=(0, 1)),
    }
    assert validate_memory_state(_state(block, kubelet), DEFAULT) == ()
    assert validate_memory_state(_state(block, swapped), DEFAULT) == ()


def test_hugepages_come_out_of_regular_memory() -> None:
    state = default_machine_state({0: 4 * GB}, hugepages={0: {"hugepages-1Gi": GB}})
    node = state[0]
    assert node is not None
    assert node.memory_map is not None
    assert node.memory_map["memory"] == MemoryTable(4 * GB, 0, 3 * GB, 0, 3 * GB)
    assert node.memory_map["hugepages-1Gi"] == MemoryTable(GB, 0, GB, 0, GB)
    written = encode_memory(with_fresh_checksum(MemoryManagerCheckpoint("Static", state, {})))
    assert restore_memory_state(written, source=SOURCE, configured_policy="Static") is not None


def test_adapter_reads_files_as_the_memory_manager(tmp_path: Path) -> None:
    target = tmp_path / "memory_manager_state"
    assert load_memory_state(target, policy="Static") is None
    target.write_bytes(VALID)
    with pytest.raises(StateValidationError, match=r'policy "Static" differs'):
        load_memory_state(target, policy="Static")
    assert load_memory_state(target, policy="static") is not None
