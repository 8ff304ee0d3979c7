"""Every checkpoint on a node, recognised by its content: one entry point for the snapshot.

The kubelet keeps three checkpoints, each under its own name; a copied file loses its name,
so the kind is read from the top-level keys (case folded, as Go matches them):

* ``machineState`` → the memory manager's ``memory_manager_state``;
* ``defaultCpuSet`` → the CPU manager's ``cpu_manager_state``;
* ``Data`` holding an object → the device manager's ``kubelet_internal_checkpoint``;
* otherwise ``policyName``/``entries`` alone → ``cpu_manager_state`` (its oldest, sparsest
  shape). Anything else is refused with the list of keys found.

:func:`decode_any` returns ``(kind, checkpoint)`` in the released kubelets' reading order
for that kind (CPU: V1 then V2; devices: V2 then V1); :func:`encode_any` writes a decoded
checkpoint back, byte for byte.
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, Literal, TypeAlias

from cpumanager.checkpoint.cpu import codec
from cpumanager.checkpoint.go import fastjson, gojson
from cpumanager.core.gocompat import one_line
from cpumanager.errors import CheckpointFormatError

if TYPE_CHECKING:  # the memory and device codecs load when such a file is read (cold start)
    from cpumanager.checkpoint.cpu.model import CheckpointV1, CheckpointV2
    from cpumanager.checkpoint.device.codec import (
        DeviceManagerCheckpoint,
        DeviceManagerCheckpointV1,
    )
    from cpumanager.checkpoint.memory.codec import MemoryManagerCheckpoint

__all__ = [
    "KIND_FILE_NAMES",
    "AnyCheckpoint",
    "CheckpointKind",
    "decode_any",
    "detect_kind",
    "encode_any",
]

CheckpointKind = Literal["cpu", "memory", "device"]
AnyCheckpoint: TypeAlias = (
    "CheckpointV1 | CheckpointV2 | MemoryManagerCheckpoint | DeviceManagerCheckpoint"
    " | DeviceManagerCheckpointV1"
)
KIND_FILE_NAMES: dict[CheckpointKind, str] = {
    "cpu": "cpu_manager_state",
    "memory": "memory_manager_state",
    "device": "device-plugins/kubelet_internal_checkpoint",
}


def _kind_of_tree(tree: gojson.JSONValue) -> CheckpointKind | None:
    if not isinstance(tree, gojson.JSONObject):
        return None
    keys = {gojson.fold_key(key): value for key, value in tree.members}
    if "machinestate" in keys:
        return "memory"
    if "defaultcpuset" in keys:
        return "cpu"
    if isinstance(keys.get("data"), gojson.JSONObject):
        return "device"
    if "policyname" in keys or "entries" in keys:
        return "cpu"
    return None


def kind_of_name(name: str) -> CheckpointKind | None:
    """The kind a file's own name gives (``memory_manager_state``, ...), or None.

    A file the kubelet wrote keeps its name, and some contents do not tell the kind: a
    device checkpoint with ``Data`` omitted (``{"Checksum":2932075448}``) is one the device
    manager reads (``Data`` keeps its pre-initialised empty values).
    """
    for kind, file_name in KIND_FILE_NAMES.items():
        if name == file_name.rsplit("/", 1)[-1]:
            return kind
    return None


def detect_kind(data: bytes, *, source: str) -> CheckpointKind:
    """Which kubelet checkpoint ``data`` is; CheckpointFormatError when none fits."""
    return _detect(data, source)[0]


def _detect(data: bytes, source: str) -> tuple[CheckpointKind, gojson.JSONValue]:
    try:
        tree = fastjson.parse(data)
    except gojson.GoJSONSyntaxError as err:
        message = (
            f"{source!r} is not a kubelet checkpoint: {err.message}; give cpu_manager_state, "
            "memory_manager_state or device-plugins/kubelet_internal_checkpoint"
        )
        raise CheckpointFormatError(message) from None
    kind = _kind_of_tree(tree)
    if kind is None:
        found = []
        if isinstance(tree, gojson.JSONObject):
            found = [one_line(key) for key, _ in tree.members][:8]
        shown = ", ".join(found) if found else "no keys"
        message = (
            f"{source!r} is none of the kubelet's checkpoints (top-level keys: {shown}); "
            "expected policyName/defaultCpuSet (CPU), machineState (memory) or Data (devices)"
        )
        raise CheckpointFormatError(message)
    return kind, tree


def decode_any(data: bytes, *, source: str = "<bytes>") -> tuple[CheckpointKind, AnyCheckpoint]:
    """``(kind, checkpoint)`` for any of the three files, verified as the kubelet verifies it.

    Raises CheckpointFormatError (not a checkpoint, syntax or type error) or
    CheckpointCorruptError (checksum mismatch), each one line with a remedy. The document is
    parsed once for the memory and device files.
    """
    fast = _decode_plain(data)
    if fast is not None:
        return fast
    kind, tree = _detect(data, source)
    if kind == "memory":
        from cpumanager.checkpoint.memory import codec as memory

        return kind, memory.decode_memory(data, source=source, tree=tree)
    if kind == "device":
        from cpumanager.checkpoint.device import codec as device

        return kind, device.decode_device(data, source=source, tree=tree)
    return kind, codec.decode(data, source=source)


def _decode_plain(data: bytes) -> tuple[CheckpointKind, AnyCheckpoint] | None:
    """A usual memory or device file through the fast readers; None: the faithful path."""
    if b'"machineState"' not in data and b'"Data"' not in data:
        return None  # a CPU file (the codec has its own fast path) or something unusual
    plainjson = _fast_readers()[0]
    return plainjson.without_cycle_collection(_read_plain, data)  # type: ignore[no-any-return]


def _read_plain(data: bytes) -> tuple[CheckpointKind, AnyCheckpoint] | None:
    plainjson, memory_read, device_fast = _fast_readers()
    document = plainjson.load_plain(data)
    if document is None:
        return None
    if "machineState" in document.tree:
        found = memory_read.decode_memory_tree(document)
        return None if found is None else ("memory", found)
    if "Data" in document.tree:
        device = device_fast.decode_device_tree(document)
        return None if device is None else ("device", device)
    return None


_readers: tuple[ModuleType, ModuleType, ModuleType] | None = None


def _fast_readers() -> tuple[ModuleType, ModuleType, ModuleType]:
    """plainjson, memory_read and device_fast, imported on the first memory or device file
    (not at start: most commands never read one) and kept (no import statement per call)."""
    global _readers  # noqa: PLW0603 - resolved once, lazily
    if _readers is None:
        from cpumanager.checkpoint.device import codec_fast as device_fast
        from cpumanager.checkpoint.go import plainjson
        from cpumanager.checkpoint.memory import codec_fast_read as memory_read

        _readers = (plainjson, memory_read, device_fast)
    return _readers


def encode_any(checkpoint: AnyCheckpoint) -> bytes:
    """The bytes the kubelet writes for ``checkpoint`` (its stored checksum kept as is)."""
    from cpumanager.checkpoint.device import codec as device
    from cpumanager.checkpoint.device.codec import (
        DeviceManagerCheckpoint,
        DeviceManagerCheckpointV1,
    )
    from cpumanager.checkpoint.memory import codec as memory
    from cpumanager.checkpoint.memory.codec import MemoryManagerCheckpoint

    if isinstance(checkpoint, MemoryManagerCheckpoint):
        return memory.encode_memory(checkpoint)
    if isinstance(checkpoint, DeviceManagerCheckpoint | DeviceManagerCheckpointV1):
        return device.encode_device(checkpoint)
    return codec.encode_checkpoint(checkpoint)
