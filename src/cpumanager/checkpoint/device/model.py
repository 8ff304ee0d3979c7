"""The device manager checkpoint's structs and their Go types (``kubelet_internal_checkpoint``).

The readers and writers are in :mod:`codec` (faithful) and :mod:`codec_fast` (fast
paths); both import these definitions from here.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import ClassVar, Literal

from cpumanager.checkpoint.go.gotypes import GoBytes, GoField, GoMap, GoScalar, GoSlice, GoStruct

__all__ = [
    "CHECKPOINT_TYPE",
    "CHECKPOINT_V1_TYPE",
    "DATA_TYPE",
    "DATA_V1_TYPE",
    "ENTRY_TYPE",
    "ENTRY_V1_TYPE",
    "NODE_WITHOUT_TOPOLOGY",
    "AnyDeviceCheckpoint",
    "DeviceCheckpointData",
    "DeviceCheckpointDataV1",
    "DeviceFormat",
    "DeviceManagerCheckpoint",
    "DeviceManagerCheckpointV1",
    "DeviceOrder",
    "PodDevicesEntry",
    "PodDevicesEntryV1",
]

NODE_WITHOUT_TOPOLOGY = -1
DeviceFormat = Literal["v1", "v2"]
DeviceOrder = Literal["v2-only", "v2-then-v1"]


@dataclass(frozen=True, slots=True)
class PodDevicesEntry:
    """``checkpoint.PodDevicesEntry``: devices of one resource held by one container."""

    pod_uid: str = ""
    container_name: str = ""
    resource_name: str = ""
    device_ids: dict[int, tuple[str, ...] | None] | None = None
    alloc_resp: bytes | None = None


@dataclass(frozen=True, slots=True)
class DeviceCheckpointData:
    """``checkpoint.checkpointData``: what the checksum covers."""

    pod_device_entries: tuple[PodDevicesEntry, ...] | None = ()
    registered_devices: dict[str, tuple[str, ...] | None] | None = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class DeviceManagerCheckpoint:
    """``checkpoint.Data`` (V2)."""

    data: DeviceCheckpointData = field(default_factory=DeviceCheckpointData)
    checksum: int = 0

    kind: ClassVar[Literal["device"]] = "device"
    format: ClassVar[DeviceFormat] = "v2"

    def with_checksum(self, checksum: int) -> DeviceManagerCheckpoint:
        return replace(self, checksum=checksum)


@dataclass(frozen=True, slots=True)
class PodDevicesEntryV1:
    """``checkpoint.PodDevicesEntryV1``: devices without NUMA nodes (kubelet <= v1.19)."""

    pod_uid: str = ""
    container_name: str = ""
    resource_name: str = ""
    device_ids: tuple[str, ...] | None = None
    alloc_resp: bytes | None = None


@dataclass(frozen=True, slots=True)
class DeviceCheckpointDataV1:
    pod_device_entries: tuple[PodDevicesEntryV1, ...] | None = ()
    registered_devices: dict[str, tuple[str, ...] | None] | None = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class DeviceManagerCheckpointV1:
    """``checkpoint.DataV1``."""

    data: DeviceCheckpointDataV1 = field(default_factory=DeviceCheckpointDataV1)
    checksum: int = 0

    kind: ClassVar[Literal["device"]] = "device"
    format: ClassVar[DeviceFormat] = "v1"

    def with_checksum(self, checksum: int) -> DeviceManagerCheckpointV1:
        return replace(self, checksum=checksum)


AnyDeviceCheckpoint = DeviceManagerCheckpoint | DeviceManagerCheckpointV1

_STRING = GoScalar("string", "string")
_STRINGS = GoSlice(_STRING, "[]string")
_REGISTERED = GoMap(_STRING, _STRINGS, "map[string][]string")
_CHECKSUM = GoScalar("uint64", "checksum.Checksum")


def _entry_fields(device_ids: GoMap | GoSlice) -> tuple[GoField, ...]:
    return (
        GoField("PodUID", "PodUID", _STRING),
        GoField("ContainerName", "ContainerName", _STRING),
        GoField("ResourceName", "ResourceName", _STRING),
        GoField("DeviceIDs", "DeviceIDs", device_ids),
        GoField("AllocResp", "AllocResp", GoBytes()),
    )


ENTRY_TYPE = GoStruct(
    "checkpoint",
    "PodDevicesEntry",
    PodDevicesEntry,
    _entry_fields(GoMap(GoScalar("int64", "int64"), _STRINGS, "checkpoint.DevicesPerNUMA")),
)
DATA_TYPE = GoStruct(
    "checkpoint",
    "checkpointData",
    DeviceCheckpointData,
    (
        GoField(
            "PodDeviceEntries",
            "PodDeviceEntries",
            GoSlice(ENTRY_TYPE, "[]checkpoint.PodDevicesEntry"),
        ),
        GoField("RegisteredDevices", "RegisteredDevices", _REGISTERED),
    ),
)
CHECKPOINT_TYPE = GoStruct(
    "checkpoint",
    "Data",
    DeviceManagerCheckpoint,
    (GoField("Data", "Data", DATA_TYPE), GoField("Checksum", "Checksum", _CHECKSUM)),
)
ENTRY_V1_TYPE = GoStruct(
    "checkpoint", "PodDevicesEntryV1", PodDevicesEntryV1, _entry_fields(_STRINGS)
)
DATA_V1_TYPE = GoStruct(
    "checkpoint",
    "checkpointDataV1",
    DeviceCheckpointDataV1,
    (
        GoField(
            "PodDeviceEntries",
            "PodDeviceEntries",
            GoSlice(ENTRY_V1_TYPE, "[]checkpoint.PodDevicesEntryV1"),
        ),
        GoField("RegisteredDevices", "RegisteredDevices", _REGISTERED),
    ),
)
CHECKPOINT_V1_TYPE = GoStruct(
    "checkpoint",
    "DataV1",
    DeviceManagerCheckpointV1,
    (GoField("Data", "Data", DATA_V1_TYPE), GoField("Checksum", "Checksum", _CHECKSUM)),
)
