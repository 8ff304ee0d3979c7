"""CheckpointStore and InMemoryStore: kubelet bytes, last-good copies, refusal to clobber."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from cpumanager.adapters.checkpoint_store import CheckpointStore
from cpumanager.adapters.memory_store import InMemoryStore
from cpumanager.core.containermap import ContainerMap
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.ids import ContainerID, ContainerName, PodUID
from cpumanager.core.state import StateSnapshot
from cpumanager.errors import CheckpointCorruptError, StateValidationError, StoreError

STATE = StateSnapshot(
    "static", CPUSet.parse("0,3-7"), {PodUID("pod-uid-1"): {ContainerName("app"): CPUSet([1, 2])}}
)
V1_FILE = (
    b'{"policyName":"static","defaultCpuSet":"0,3-7","entries":{"cid-app":"1-2",'
    b'"cid-sidecar":"8"},"checksum":3102233326}'
)
CMAP = ContainerMap(
    [
        (ContainerID("cid-app"), PodUID("pod-uid-1"), ContainerName("app")),
        (ContainerID("cid-sidecar"), PodUID("pod-uid-1"), ContainerName("sidecar")),
    ]
)


def test_missing_file_loads_as_none_and_save_writes_kubelet_bytes(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path / "kubelet")
    assert store.load("static", ContainerMap()) is None
    store.save(StateSnapshot("none"))
    assert store.path.read_bytes() == (
        b'{"policyName":"none","defaultCpuSet":"","checksum":1353318690}'
    )
    assert store.path.name == "cpu_manager_state"
    assert store.read_last_good() is None
    store.save(STATE)
    assert store.read_last_good() == (
        b'{"policyName":"none","defaultCpuSet":"","checksum":1353318690}'
    )
    assert store.load("static", ContainerMap()) == STATE


def test_v1_file_is_migrated_on_load_and_rewritten_as_v2_on_save(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path)
    store.path.write_bytes(V1_FILE)
    loaded = store.load("static", CMAP)
    assert loaded is not None
    assert loaded.cpuset_of(PodUID("pod-uid-1"), ContainerName("sidecar")) == CPUSet([8])
    assert store.path.read_bytes() == V1_FILE  # restore never rewrites
    store.save(loaded)
    assert store.path.read_bytes().startswith(b'{"policyName":"static","defaultCpuSet":"0,3-7",')
    assert store.read_last_good() == V1_FILE


def test_a_file_that_failed_to_load_is_never_overwritten(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path)
    store.path.write_bytes(b'{"policyName":"static","checksum":1}')
    with pytest.raises(CheckpointCorruptError):
        store.load("static", ContainerMap())
    with pytest.raises(StoreError, match="refusing to overwrite"):
        store.save(STATE)
    assert store.path.read_bytes() == b'{"policyName":"static","checksum":1}'
    moved = store.set_aside()
    assert moved is not None
    assert moved.name == "cpu_manager_state.corrupt"
    store.save(STATE)
    assert store.load("static", ContainerMap()) == STATE
    assert moved.read_bytes() == b'{"policyName":"static","checksum":1}'


def test_policy_mismatch_also_blocks_saves(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path)
    store.save(STATE)
    with pytest.raises(StateValidationError):
        CheckpointStore(tmp_path).load("none", ContainerMap())
    fresh = CheckpointStore(tmp_path)
    with pytest.raises(StateValidationError):
        fresh.load("none", ContainerMap())
    with pytest.raises(StoreError):
        fresh.save(StateSnapshot("none"))


def test_save_without_load_checks_the_file_first(tmp_path: Path) -> None:
    (tmp_path / "cpu_manager_state").write_bytes(b"garbage")
    with pytest.raises(StoreError, match="refusing"):
        CheckpointStore(tmp_path).save(STATE)
    assert (tmp_path / "cpu_manager_state").read_bytes() == b"garbage"
    CheckpointStore(tmp_path, "other").save(STATE)


def test_failed_save_keeps_the_old_file(tmp_path: Path) -> None:
    def fail(step: str) -> None:
        if step == "fsync":
            raise OSError(errno.ENOSPC, "No space left on device")

    CheckpointStore(tmp_path).save(StateSnapshot("static"))
    before = (tmp_path / "cpu_manager_state").read_bytes()
    with pytest.raises(StoreError, match="No space left"):
        CheckpointStore(tmp_path, fault=fail).save(STATE)
    assert (tmp_path / "cpu_manager_state").read_bytes() == before


def test_bad_names_and_set_aside_without_file(tmp_path: Path) -> None:
    for name in ("", "a/b", ".."):
        with pytest.raises(StoreError):
            CheckpointStore(tmp_path, name)
    assert CheckpointStore(tmp_path).set_aside() is None


def test_in_memory_store_keeps_the_bytes() -> None:
    store = InMemoryStore()
    assert store.load("static", ContainerMap()) is None
    store.save(StateSnapshot("static", CPUSet.parse("0-63")))
    assert store.data == b'{"policyName":"static","defaultCpuSet":"0-63","checksum":1058907510}'
    store.save(STATE)
    assert len(store.history) == 2
    assert store.load("static", ContainerMap()) == STATE
    store.fail_saves = True
    with pytest.raises(StoreError):
        store.save(StateSnapshot("static"))
    assert store.load("static", ContainerMap()) == STATE
    assert InMemoryStore(V1_FILE).load("static", CMAP) is not None


def test_in_memory_saves_are_encoded_when_read_with_the_same_bytes() -> None:
    from cpumanager.checkpoint.cpu import codec

    first, second = StateSnapshot("static", CPUSet.parse("0-63")), STATE
    store = InMemoryStore(V1_FILE)
    store.save(first)
    store.save(second)
    assert store.data == codec.encode_v2(second)
    assert store.history == [codec.encode_v2(first), codec.encode_v2(second)]
    store.save(first)
    store.data = V1_FILE  # a later direct write wins over the pending save
    assert store.data == V1_FILE
    assert store.history[-1] == codec.encode_v2(first)
