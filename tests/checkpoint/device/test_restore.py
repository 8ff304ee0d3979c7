"""The device manager's restore: a bad file is logged and ignored, bad AllocResp entries dropped."""

from __future__ import annotations

from pathlib import Path

import pytest

from cpumanager.adapters.checkpoint_files import load_device_state
from cpumanager.checkpoint.device.codec import (
    DeviceCheckpointData,
    DeviceManagerCheckpoint,
    PodDevicesEntry,
    encode_device,
    with_fresh_checksum,
)
from cpumanager.checkpoint.device.restore import (
    CONTINUE_LOG,
    alloc_resp_error,
    restore_device_state,
)

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "device"


def test_no_file() -> None:
    restored = restore_device_state(None)
    assert restored.read
    assert restored.entries == ()


def test_real_file_restores_every_entry() -> None:
    restored = restore_device_state((GOLDEN / "two-pods-two-numa.json").read_bytes())
    assert (restored.read, restored.format, len(restored.entries)) == (True, "v2", 2)
    assert restored.registered == ("nvidia.com/gpu",)


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (b"{", "unexpected end of JSON input"),
        (b'{"Data":{},"Checksum":1}', "checkpoint is corrupted"),
    ],
)
def test_unreadable_file_means_no_allocations_not_a_refusal(data: bytes, error: str) -> None:
    restored = restore_device_state(data)
    assert (restored.read, restored.entries, restored.error) == (False, (), error)
    assert restored.log == f"{CONTINUE_LOG}: {error}"


def test_v1_file_only_before_130() -> None:
    data = (GOLDEN / "generated-v1-pre120.json").read_bytes()
    assert not restore_device_state(data).read
    old = restore_device_state(data, order="v2-then-v1")
    assert (old.read, old.format) == (True, "v1")
    assert old.entries[0].device_ids == {0: ("nic0", "nic1")}


ALLOC = [
    (b"", None),
    (b"\x0a\x00", None),
    (b"\x0a\x05ab", "unexpected EOF"),
    (b"\x08\x01", "proto: wrong wireType = 0 for field 1 of ContainerAllocateResponse"),
    (b"\x12\x02\x18\x01", None),  # a Mount with read_only = true
    (b"\x12\x02\x1a\x01", "proto: wrong wireType = 2 for field 3 of Mount"),
    (b"\x00", "proto: ContainerAllocateResponse: illegal tag 0 (wire type 0)"),
    (b"\x4e", "proto: illegal wireType 6"),
]


@pytest.mark.parametrize(("raw", "error"), ALLOC, ids=[repr(a[0]) for a in ALLOC])
def test_alloc_resp_wire_check(raw: bytes, error: str | None) -> None:
    assert alloc_resp_error(raw) == error


def test_entries_with_bad_alloc_resp_are_skipped() -> None:
    good = PodDevicesEntry("p", "c", "r", {0: ("d0",)}, b"")
    bad = PodDevicesEntry("p", "d", "r", {0: ("d1",)}, b"\x0a\x09")
    checkpoint = with_fresh_checksum(
        DeviceManagerCheckpoint(DeviceCheckpointData((good, bad), {"r": ("d0", "d1")}))
    )
    restored = restore_device_state(encode_device(checkpoint))
    assert restored.entries == (good,)
    assert restored.skipped == ((bad, "unexpected EOF"),)


def test_adapter_reads_files_as_the_device_manager(tmp_path: Path) -> None:
    target = tmp_path / "kubelet_internal_checkpoint"
    assert load_device_state(target).read
    target.write_bytes((GOLDEN / "one-gpu-numa0.json").read_bytes())
    assert len(load_device_state(target).entries) == 1


FLAVORS = [
    (b"\x08\x01", "proto: wrong wireType = 0 for field 1 of ContainerAllocateResponse", None),
    (b"\x0a\x04\x0a\x02\xff\xfe", None, "string field 1 of entry contains invalid UTF-8"),
    (b"\x1a\x03\x0a\x01a", None, None),
]


@pytest.mark.parametrize(("raw", "gogo", "protobuf_go"), FLAVORS, ids=["wiretype", "utf8", "ok"])
def test_the_two_protobuf_decoders(raw: bytes, gogo: str | None, protobuf_go: str | None) -> None:
    assert alloc_resp_error(raw) == gogo
    assert alloc_resp_error(raw, flavor="protobuf-go") == protobuf_go
