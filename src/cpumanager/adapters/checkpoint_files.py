"""Checkpoint and container-map files for the ``state`` commands: read whole, write checked.

The workflow itself is pure (:mod:`cpumanager.checkpoint.convert`); this module only turns
paths into bytes with one-line errors, and writes a conversion atomically, keeping
``<name>.last-good`` first when the input is replaced in place.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from cpumanager.adapters import filestore
from cpumanager.errors import CheckpointError, InputError

if TYPE_CHECKING:  # each reader loads its codec when called (short commands start fast)
    from cpumanager.checkpoint.convert import Conversion
    from cpumanager.checkpoint.device.codec import DeviceOrder
    from cpumanager.checkpoint.device.restore import DeviceRestore
    from cpumanager.checkpoint.memory.codec import MemoryManagerCheckpoint
    from cpumanager.core.containermap import ContainerMap
    from cpumanager.core.state import StateSnapshot

__all__ = [
    "load_device_state",
    "load_memory_state",
    "read_checkpoint",
    "read_container_map",
    "read_state_file",
    "write_checked",
    "write_conversion",
    "write_state_file",
]

LAST_GOOD_SUFFIX = ".last-good"


def read_checkpoint(path: Path) -> bytes:
    """The bytes of a checkpoint file; CheckpointError when it does not exist."""
    data = filestore.read_bytes(path)
    if data is None:
        message = f"{str(path)!r} does not exist; give the path of a cpu_manager_state file"
        raise CheckpointError(message)
    return data


def read_container_map(path: Path | None) -> ContainerMap | None:
    """The container map in a ``{"<containerID>": {"podUID", "containerName"}}`` file."""
    if path is None:
        return None
    data = filestore.read_bytes(path)
    if data is None:
        message = f"container map {str(path)!r} does not exist"
        raise InputError(message)
    from cpumanager.checkpoint.cpu.migrate import parse_container_map

    return parse_container_map(data, source=str(path))


def write_conversion(conversion: Conversion, dest: Path, *, in_place: bool) -> None:
    """Write the new bytes atomically; in place, keep the old file as ``<name>.last-good``."""
    write_checked(conversion.data, dest, in_place=in_place)


def write_checked(data: bytes, dest: Path, *, in_place: bool) -> None:
    """Write ``data`` atomically; in place, keep the old file as ``<name>.last-good``.

    In place, a symbolic link is followed to the file it names, which is the one replaced
    (replacing the link itself would leave the real file unchanged). An output path must be
    new or a regular file: devices, FIFOs, directories and links are refused.
    """
    if in_place:
        dest = Path(os.path.realpath(dest))
        filestore.check_replaceable(dest)
        filestore.preserve_copy(dest, dest.with_name(dest.name + LAST_GOOD_SUFFIX))
    filestore.write_atomic(dest, data)


def load_memory_state(path: Path, *, policy: str) -> MemoryManagerCheckpoint | None:
    """The memory manager's restore of ``path`` (None: no file); its refusal otherwise."""
    from cpumanager.checkpoint.memory.restore import restore_memory_state

    return restore_memory_state(
        filestore.read_bytes(path), source=str(path), configured_policy=policy
    )


def load_device_state(path: Path, *, order: DeviceOrder = "v2-only") -> DeviceRestore:
    """The device manager's restore of ``path``: never refuses, says what it dropped."""
    from cpumanager.checkpoint.device.restore import restore_device_state

    return restore_device_state(filestore.read_bytes(path), order=order)


def read_state_file(path: Path, *, container_map: ContainerMap | None = None) -> StateSnapshot:
    """The CPU manager state in a ``cpu_manager_state`` file, decoded as the kubelet does.

    V1 first, then V2, checksum checked; a V1 file with entries is migrated through
    ``container_map`` (the containers running at start), as the kubelet migrates it.
    """
    from cpumanager.checkpoint.cpu import codec
    from cpumanager.checkpoint.cpu.migrate import v1_to_v2
    from cpumanager.checkpoint.cpu.model import CheckpointV1
    from cpumanager.core.containermap import ContainerMap

    source = str(path)
    checkpoint = codec.decode(read_checkpoint(path), source=source)
    if isinstance(checkpoint, CheckpointV1):
        checkpoint = v1_to_v2(checkpoint, container_map or ContainerMap(), source=source)
    return codec.snapshot_from_v2(checkpoint, source=source)


def write_state_file(path: Path, snapshot: StateSnapshot) -> None:
    """Write ``snapshot`` as the kubelet's V2 bytes, atomically (the old file or the new)."""
    from cpumanager.checkpoint.cpu import codec

    filestore.write_atomic(path, codec.encode_v2(snapshot))
