"""The device manager's restore at kubelet start, as a pure function: it never refuses.

Source: ``devicemanager/manager.go`` (``Start``, ``readCheckpoint``) and
``devicemanager/pod_devices.go`` (``fromCheckpointData``). Unlike the CPU and memory
managers, a bad ``kubelet_internal_checkpoint`` does not stop the kubelet:

* no file: nothing to restore;
* a syntax, type or checksum error (V2, then V1 on v1.20 .. v1.29): the kubelet logs
  ``Continue after failing to read checkpoint file. Device allocation info may NOT be
  up-to-date`` and starts with *no* allocations, so devices in use look free until the
  file is rewritten (its next checkpoint overwrites the bad file);
* otherwise each entry whose ``AllocResp`` does not unmarshal as a
  ``ContainerAllocateResponse`` is skipped (``Can't unmarshal allocResp``), the others are
  restored; every registered resource starts with zero healthy devices until its plugin
  registers again.

The ``AllocResp`` check is a protobuf wire-format walk of ``ContainerAllocateResponse``
(fields 1 envs, 2 mounts, 3 devices, 4 annotations, 5 cdi_devices, all length-delimited,
nested messages checked the same way): truncation, bad lengths and illegal wire types are
errors. Two decoders differ on the rest: the gogo-generated ``Unmarshal`` (``flavor="gogo"``,
the default) refuses a known field with another wire type and does not look inside strings;
``google.golang.org/protobuf`` (``flavor="protobuf-go"``) keeps such a field as unknown and
refuses a string field that is not valid UTF-8 (proto3). Which one a given kubelet links
depends on how its device plugin API was generated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from cpumanager.checkpoint.device.codec import (
    DeviceManagerCheckpointV1,
    DeviceOrder,
    PodDevicesEntry,
    attempt_device,
    v1_to_v2,
)

__all__ = [
    "CONTINUE_LOG",
    "DeviceRestore",
    "ProtoFlavor",
    "alloc_resp_error",
    "restore_device_state",
]

CONTINUE_LOG = (
    "Continue after failing to read checkpoint file. Device allocation info may NOT be up-to-date"
)

# message -> field number -> (wire type, nested message or None)
_Schema = dict[int, tuple[int, str | None]]
_MESSAGES: dict[str, _Schema] = {
    "ContainerAllocateResponse": {
        1: (2, "entry"), 2: (2, "Mount"), 3: (2, "DeviceSpec"), 4: (2, "entry"),
        5: (2, "CDIDevice"),
    },
    "entry": {1: (2, None), 2: (2, None)},
    "Mount": {1: (2, None), 2: (2, None), 3: (0, None)},
    "DeviceSpec": {1: (2, None), 2: (2, None), 3: (2, None)},
    "CDIDevice": {1: (2, None)},
}  # fmt: skip
_MAX_DEPTH = 8


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data):
            message = "unexpected EOF"
            raise ValueError(message)
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7
        if shift >= 64:
            message = "proto: integer overflow"
            raise ValueError(message)


ProtoFlavor = Literal["gogo", "protobuf-go"]


def _walk(data: bytes, message: str, depth: int, flavor: ProtoFlavor = "gogo") -> None:
    schema = _MESSAGES[message]
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if number <= 0:
            text = f"proto: {message}: illegal tag {number} (wire type {wire})"
            raise ValueError(text)
        expected = schema.get(number)
        if expected is not None and expected[0] != wire:
            if flavor == "gogo":
                text = f"proto: wrong wireType = {wire} for field {number} of {message}"
                raise ValueError(text)
            expected = None  # protobuf-go keeps it as an unknown field
        if wire == 0:
            _, pos = _varint(data, pos)
        elif wire in {1, 5}:
            pos += 8 if wire == 1 else 4
            if pos > len(data):
                text = "unexpected EOF"
                raise ValueError(text)
        elif wire == 2:
            length, pos = _varint(data, pos)
            if length >= 1 << 63:
                text = "proto: negative length found during unmarshaling"
                raise ValueError(text)
            end = pos + length
            if end > len(data):
                text = "unexpected EOF"
                raise ValueError(text)
            nested = expected[1] if expected is not None else None
            if nested is not None and depth < _MAX_DEPTH:
                _walk(data[pos:end], nested, depth + 1, flavor)
            elif expected is not None and flavor == "protobuf-go":
                try:
                    data[pos:end].decode("utf-8")
                except UnicodeDecodeError:
                    text = f"string field {number} of {message} contains invalid UTF-8"
                    raise ValueError(text) from None
            pos = end
        else:
            text = f"proto: illegal wireType {wire}"
            raise ValueError(text)


def alloc_resp_error(alloc_resp: bytes | None, *, flavor: ProtoFlavor = "gogo") -> str | None:
    """Why ``ContainerAllocateResponse`` unmarshalling fails on these bytes; None if it works."""
    try:
        _walk(alloc_resp or b"", "ContainerAllocateResponse", 0, flavor)
    except ValueError as err:
        return str(err)
    return None


@dataclass(frozen=True, slots=True)
class DeviceRestore:
    """What the device manager holds after ``Start``.

    ``read`` is False when the file could not be used (``error`` says why, ``log`` is the
    kubelet's line); ``format`` is the format read; ``skipped`` pairs each dropped entry with
    the unmarshal error; ``registered`` lists the resources that start with zero devices.
    """

    read: bool
    format: Literal["v1", "v2", ""]
    entries: tuple[PodDevicesEntry, ...]
    skipped: tuple[tuple[PodDevicesEntry, str], ...]
    registered: tuple[str, ...]
    error: str = ""
    log: str = ""


def restore_device_state(
    data: bytes | None, *, order: DeviceOrder = "v2-only", flavor: ProtoFlavor = "gogo"
) -> DeviceRestore:
    """The kubelet's ``readCheckpoint`` + ``fromCheckpointData`` on ``data`` (None: no file).

    ``order`` is ``v2-only`` for kubelets v1.30+ (the default: the newest releases) and
    ``v2-then-v1`` for v1.20 .. v1.29.
    """
    if data is None:
        return DeviceRestore(True, "", (), (), ())
    result = attempt_device(data, order=order)
    if not result.ok or result.checkpoint is None:
        return DeviceRestore(False, "", (), (), (), result.error, f"{CONTINUE_LOG}: {result.error}")
    checkpoint = result.checkpoint
    if isinstance(checkpoint, DeviceManagerCheckpointV1):
        checkpoint = v1_to_v2(checkpoint)
    kept: list[PodDevicesEntry] = []
    skipped: list[tuple[PodDevicesEntry, str]] = []
    for entry in checkpoint.data.pod_device_entries or ():
        problem = alloc_resp_error(entry.alloc_resp, flavor=flavor)
        if problem is None:
            kept.append(entry)
        else:
            skipped.append((entry, problem))
    registered = tuple(sorted(checkpoint.data.registered_devices or {}))
    return DeviceRestore(True, result.format, tuple(kept), tuple(skipped), registered)
