"""The device manager's ``device-plugins/kubelet_internal_checkpoint``, byte for byte.

Source: ``pkg/kubelet/cm/devicemanager/checkpoint/{checkpoint.go,checkpointv1.go}``. The
structs carry no JSON tags, so the keys are the Go field names::

    {"Data":{"PodDeviceEntries":[{"PodUID":"..","ContainerName":"..","ResourceName":"..",
     "DeviceIDs":{"-1":["dev0"],"0":["dev1"]},"AllocResp":"<base64>"}],
     "RegisteredDevices":{"vendor.com/gpu":["dev0","dev1"]}},"Checksum":3660592824}

Two formats:

* **V2** (kubelet v1.20+): ``DeviceIDs`` maps a NUMA node to device ids (``-1``: a device
  without topology). The checksum hashes the ``checkpointData`` *value* (not a pointer):
  FNV-1a 32 of ``(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint.PodDevicesEntry)
  [{PodUID:(string).. DeviceIDs:(checkpoint.DevicesPerNUMA)map[-1:[dev0]] AllocResp:([]uint8)
  [10 31 ..]}] RegisteredDevices:(map[string][]string)map[..]}``. No stored value is exempt.
* **V1** (kubelet <= v1.19): ``DeviceIDs`` is a plain list. Its checksum is computed on the
  V1 structs and their type names are then replaced by the 1.19 ones (``checkpointDataV1`` →
  ``checkpointData`` once, ``PodDevicesEntryV1`` → ``PodDevicesEntry`` everywhere, as
  ``checkpointv1.go`` does, even inside names). Kubelets v1.20 .. v1.29 read a V1 file
  after V2 fails (PR #102882) and give its devices NUMA node 0; v1.30+ do not (PR #123398).

Reading pre-initialises ``PodDeviceEntries`` to an empty list and ``RegisteredDevices`` to
an empty map (``readCheckpoint``); ``AllocResp`` is standard base64. The newest development
line adds a ``BootID`` key outside ``Data``; released kubelets ignore it (see
:func:`unknown_device_keys`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from cpumanager.checkpoint.device.codec_fast import decode_device_plain, marshal_device, spew_device
from cpumanager.checkpoint.device.model import (
    CHECKPOINT_TYPE,
    CHECKPOINT_V1_TYPE,
    DATA_TYPE,
    DATA_V1_TYPE,
    NODE_WITHOUT_TOPOLOGY,
    AnyDeviceCheckpoint,
    DeviceCheckpointData,
    DeviceCheckpointDataV1,
    DeviceFormat,
    DeviceManagerCheckpoint,
    DeviceManagerCheckpointV1,
    DeviceOrder,
    PodDevicesEntry,
    PodDevicesEntryV1,
)
from cpumanager.checkpoint.go import fastjson, gojson
from cpumanager.checkpoint.go.fnv import fnv1a_32
from cpumanager.checkpoint.go.godecode import GoTypeError, unmarshal
from cpumanager.checkpoint.go.goencode import marshal
from cpumanager.checkpoint.go.gospew import spew
from cpumanager.errors import CheckpointCorruptError, CheckpointFormatError

__all__ = [
    "NODE_WITHOUT_TOPOLOGY",
    "DeviceAttempt",
    "DeviceCheckpointData",
    "DeviceCheckpointDataV1",
    "DeviceFormat",
    "DeviceManagerCheckpoint",
    "DeviceManagerCheckpointV1",
    "DeviceOrder",
    "PodDevicesEntry",
    "PodDevicesEntryV1",
    "attempt_device",
    "attempts_device",
    "checksum_of_device",
    "decode_device",
    "encode_device",
    "render_device",
    "unknown_device_keys",
    "v1_to_v2",
    "with_fresh_checksum",
]


def render_device(checkpoint: AnyDeviceCheckpoint) -> str:
    """The text the kubelet hashes for this checkpoint's ``Data``."""
    if isinstance(checkpoint, DeviceManagerCheckpoint):
        fast = spew_device(checkpoint)  # the usual shape, written directly
        return fast if fast is not None else spew(checkpoint.data, DATA_TYPE)
    text = spew(checkpoint.data, DATA_V1_TYPE)
    text = text.replace("checkpointDataV1", "checkpointData", 1)
    return text.replace("PodDevicesEntryV1", "PodDevicesEntry")


def checksum_of_device(checkpoint: AnyDeviceCheckpoint) -> int:
    """The checksum a kubelet computes for this content (the stored one is ignored)."""
    return fnv1a_32(render_device(checkpoint).encode("utf-8"))


def with_fresh_checksum(checkpoint: AnyDeviceCheckpoint) -> AnyDeviceCheckpoint:
    """The checkpoint as ``MarshalCheckpoint`` stores it: checksum recomputed."""
    return checkpoint.with_checksum(checksum_of_device(checkpoint))


def encode_device(checkpoint: AnyDeviceCheckpoint) -> bytes:
    """Go's ``json.Marshal`` of ``Data``/``DataV1``, the checksum exactly as stored."""
    if isinstance(checkpoint, DeviceManagerCheckpoint):
        fast = marshal_device(checkpoint)
        return fast if fast is not None else marshal(checkpoint, CHECKPOINT_TYPE)
    return marshal(checkpoint, CHECKPOINT_V1_TYPE)


def v1_to_v2(checkpoint: DeviceManagerCheckpointV1) -> DeviceManagerCheckpoint:
    """``GetData`` of a V1 file: every device on NUMA node 0 (nothing better is known).

    The checksum is recomputed: this is what the kubelet writes at its next checkpoint.
    """
    entries = tuple(
        PodDevicesEntry(
            entry.pod_uid,
            entry.container_name,
            entry.resource_name,
            {0: entry.device_ids},
            entry.alloc_resp,
        )
        for entry in checkpoint.data.pod_device_entries or ()
    )
    data = DeviceCheckpointData(
        entries if checkpoint.data.pod_device_entries is not None else None,
        checkpoint.data.registered_devices,
    )
    converted = DeviceManagerCheckpoint(data, 0)
    return converted.with_checksum(checksum_of_device(converted))


AttemptKind = Literal["ok", "syntax", "type", "corrupt"]


@dataclass(frozen=True, slots=True)
class DeviceAttempt:
    """The outcome of ``GetCheckpoint`` for one format, without raising."""

    format: DeviceFormat
    kind: AttemptKind
    checkpoint: AnyDeviceCheckpoint | None
    error: str = ""
    stored_checksum: int = 0
    computed_checksum: int = 0

    @property
    def ok(self) -> bool:
        return self.kind == "ok"


def attempt_tree(tree: gojson.JSONValue, fmt: DeviceFormat) -> DeviceAttempt:
    """Unmarshal an already parsed document as one format, then verify the checksum."""
    checkpoint: AnyDeviceCheckpoint
    try:
        if fmt == "v2":
            checkpoint = unmarshal(tree, CHECKPOINT_TYPE, DeviceManagerCheckpoint())
        else:
            checkpoint = unmarshal(tree, CHECKPOINT_V1_TYPE, DeviceManagerCheckpointV1())
    except GoTypeError as err:
        return DeviceAttempt(fmt, "type", None, str(err))
    computed = checksum_of_device(checkpoint)
    if checkpoint.checksum != computed:
        return DeviceAttempt(
            fmt, "corrupt", checkpoint, "checkpoint is corrupted", checkpoint.checksum, computed
        )
    return DeviceAttempt(fmt, "ok", checkpoint, "", computed, computed)


def attempts_device(data: bytes) -> tuple[DeviceAttempt, DeviceAttempt]:
    """Both formats, V2 first (the kubelet's order); never raises."""
    try:
        tree = fastjson.parse(data)
    except gojson.GoJSONSyntaxError as err:
        return (
            DeviceAttempt("v2", "syntax", None, err.message),
            DeviceAttempt("v1", "syntax", None, err.message),
        )
    return attempt_tree(tree, "v2"), attempt_tree(tree, "v1")


def attempt_device(
    data: bytes, *, order: DeviceOrder = "v2-then-v1", tree: gojson.JSONValue | None = None
) -> DeviceAttempt:
    """The kubelet's ``readCheckpoint``: V2, then (v1.20 .. v1.29) V1; V2's error when both fail."""
    if tree is None:
        plain = decode_device_plain(data)
        if plain is not None:  # the usual V2 file, verified: the same result, sooner
            return DeviceAttempt("v2", "ok", plain, "", plain.checksum, plain.checksum)
    else:
        v2 = attempt_tree(tree, "v2")
        if v2.ok or order == "v2-only":
            return v2
        v1 = attempt_tree(tree, "v1")
        return v1 if v1.ok else v2
    v2, v1 = attempts_device(data)
    if v2.ok or order == "v2-only":
        return v2
    return v1 if v1.ok else v2


def decode_device(
    data: bytes,
    *,
    source: str,
    order: DeviceOrder = "v2-then-v1",
    tree: gojson.JSONValue | None = None,
) -> AnyDeviceCheckpoint:
    """The checkpoint in ``data`` (``tree``: already parsed); typed error on any failure."""
    result = attempt_device(data, order=order, tree=tree)
    if result.kind == "corrupt":
        raise CheckpointCorruptError(source, result.stored_checksum, result.computed_checksum)
    if result.checkpoint is None:
        message = (
            f"device manager checkpoint {source!r} cannot be decoded: {result.error}; the "
            "kubelet would start without it (devices look free until their plugins "
            "re-register): fix the file and run 'cpumanager state rewrite'"
        )
        raise CheckpointFormatError(message)
    return result.checkpoint


_KNOWN_TOP = frozenset({"data", "checksum"})


def unknown_device_keys(data: bytes) -> tuple[str, ...]:
    """Top-level keys released kubelets ignore (e.g. the development line's ``BootID``)."""
    try:
        tree = fastjson.parse(data)
    except gojson.GoJSONSyntaxError:
        return ()
    if not isinstance(tree, gojson.JSONObject):
        return ()
    found = (key for key, _ in tree.members if gojson.fold_key(key) not in _KNOWN_TOP)
    return tuple(dict.fromkeys(found))
