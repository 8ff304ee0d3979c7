"""kubelet_internal_checkpoint: real kubelets' bytes and checksums, V2 then V1."""

from __future__ import annotations

from pathlib import Path

import pytest

from cpumanager.checkpoint.device import codec as device
from cpumanager.checkpoint.device.codec import (
    DeviceManagerCheckpoint,
    DeviceManagerCheckpointV1,
    attempt_device,
    attempts_device,
    checksum_of_device,
    decode_device,
    encode_device,
    unknown_device_keys,
)
from cpumanager.errors import CheckpointCorruptError, CheckpointFormatError

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "device"
REAL = {
    "no-entries-one-gpu.json": 3952659280,
    "no-topology-minus-one.json": 3660592824,
    "one-gpu-numa0.json": 133412836,
    "two-gpus-numa1.json": 2530956716,
    "two-pods-two-numa.json": 3082069630,
}
V1_FILE = (GOLDEN / "generated-v1-pre120.json").read_bytes()


def test_every_golden_file_is_listed() -> None:
    assert {p.name for p in GOLDEN.glob("*.json")} == {*REAL, "generated-v1-pre120.json"}


@pytest.mark.parametrize(("name", "checksum"), sorted(REAL.items()))
def test_real_kubelet_files_verify_and_round_trip(name: str, checksum: int) -> None:
    data = (GOLDEN / name).read_bytes()
    checkpoint = decode_device(data, source=name)
    assert isinstance(checkpoint, DeviceManagerCheckpoint)
    assert checkpoint.checksum == checksum == checksum_of_device(checkpoint)
    assert encode_device(checkpoint) == data


def test_device_without_topology_is_numa_minus_one() -> None:
    checkpoint = decode_device((GOLDEN / "no-topology-minus-one.json").read_bytes(), source="f")
    assert isinstance(checkpoint, DeviceManagerCheckpoint)
    entries = checkpoint.data.pod_device_entries
    assert entries is not None
    assert entries[0].device_ids == {device.NODE_WITHOUT_TOPOLOGY: ("tegra",)}
    assert entries[0].alloc_resp is not None
    assert entries[0].alloc_resp.startswith(b"\n\x1f")


def test_v1_is_read_after_v2_fails_with_the_error_of_pr_102882() -> None:
    v2, v1 = attempts_device(V1_FILE)
    assert v2.error == (
        "json: cannot unmarshal array into Go struct field "
        "PodDevicesEntry.Data.PodDeviceEntries.DeviceIDs of type checkpoint.DevicesPerNUMA"
    )
    assert v1.ok
    chosen = attempt_device(V1_FILE)
    assert isinstance(chosen.checkpoint, DeviceManagerCheckpointV1)
    assert encode_device(chosen.checkpoint) == V1_FILE


def test_v1_hash_uses_the_119_type_names() -> None:
    checkpoint = decode_device(V1_FILE, source="f")
    rendered = device.render_device(checkpoint)
    assert rendered.startswith(
        "(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint.PodDevicesEntry)"
    )
    assert "V1" not in rendered
    assert "DeviceIDs:([]string)[nic0 nic1]" in rendered


def test_kubelets_from_130_refuse_v1() -> None:
    result = attempt_device(V1_FILE, order="v2-only")
    assert result.kind == "type"
    with pytest.raises(CheckpointFormatError, match="DevicesPerNUMA"):
        decode_device(V1_FILE, source="f", order="v2-only")


def test_v1_to_v2_puts_devices_on_node_zero() -> None:
    checkpoint = decode_device(V1_FILE, source="f")
    assert isinstance(checkpoint, DeviceManagerCheckpointV1)
    converted = device.v1_to_v2(checkpoint)
    entries = converted.data.pod_device_entries
    assert entries is not None
    assert entries[0].device_ids == {0: ("nic0", "nic1")}
    assert decode_device(encode_device(converted), source="f") == converted


def test_bad_checksum_is_corruption() -> None:
    data = (GOLDEN / "one-gpu-numa0.json").read_bytes().replace(b"133412836", b"133412837")
    with pytest.raises(CheckpointCorruptError) as caught:
        decode_device(data, source="kubelet_internal_checkpoint")
    assert (caught.value.stored, caught.value.computed) == (133412837, 133412836)


def test_boot_id_of_the_development_line_is_ignored_and_reported() -> None:
    data = (GOLDEN / "one-gpu-numa0.json").read_bytes()
    with_boot = data[:-1] + b',"BootID":"abc"}'
    assert decode_device(with_boot, source="f") == decode_device(data, source="f")
    assert unknown_device_keys(with_boot) == ("BootID",)


def test_pre_initialised_values_survive_missing_keys() -> None:
    result = attempt_device(b'{"Data":{}}')
    assert result.checkpoint is not None
    assert result.checkpoint.data.pod_device_entries == ()
    assert result.checkpoint.data.registered_devices == {}
