"""The checkpoint formats written after v1.35: pod-level entries and the data/dataChecksum layout.

Source (merged code, ``pkg/kubelet/cm/{cpu,memory}manager/state/{checkpoint,state}.go``;
see docs/state.md for the PRs). Names follow the kubelet's own version numbers:

* CPU **V3** (v1.36, ``PodLevelResourceManagers`` on, PR #134768): V2's fields plus
  ``podEntries`` (``map[pod]{"cpuSet":"0-3"}``, ``cpuSet`` omitted when empty) and a
  ``checksum`` over go-spew of the struct under the name ``CPUManagerCheckpoint``; no
  "0 means unchecked" exemption.
* CPU **V4** (development line after v1.36, PR #139102 redoing the reverted #137820): V3's
  fields inline with ``checksum`` 0 (so v1.18+ kubelets read it as V2), then ``data`` (the
  JSON of ``CPUManagerCheckpointData``) and ``dataChecksum`` = FNV-1a 32 of
  ``(string)`` + data (go-spew of a string).
* memory **V2** (v1.36, gate on, PR #134768/#137751): V1's fields plus ``podEntries``
  (``map[pod]{"memoryBlocks":[...]}``), checksum under the name ``MemoryManagerCheckpoint``.
* memory **V3** (development line, PR #139626): V1's fields inline with V1's own checksum
  (released kubelets read it as V1), then ``data`` and ``dataChecksum``.

The CPU formats live in ``cpu/v3_v4``, the memory formats in ``memory/v2_v3``, what
they share in :mod:`newer_common`; this module names them all. Pure: bytes in, models and
bytes out.
"""

from __future__ import annotations

from cpumanager.checkpoint.cpu.v3_v4 import (
    CPU_DATA_TYPE,
    CPU_V3_TYPE,
    CPU_V4_TYPE,
    CPUCheckpointData,
    CPUCheckpointV3,
    CPUCheckpointV4,
    CPUEntries,
    CPUPodEntry,
    attempt_cpu_v3,
    attempt_cpu_v4,
    cpu_v3_checksum,
    encode_cpu_v3,
    encode_cpu_v4,
    render_cpu_v3,
)
from cpumanager.checkpoint.memory.v2_v3 import (
    MEMORY_DATA_TYPE,
    MEMORY_V2_TYPE,
    MEMORY_V3_TYPE,
    MemoryCheckpointData,
    MemoryCheckpointV2,
    MemoryCheckpointV3,
    MemoryEntries,
    MemoryPodEntries,
    MemoryPodEntry,
    attempt_memory_v2,
    attempt_memory_v3,
    encode_memory_v2,
    encode_memory_v3,
    memory_v2_checksum,
)
from cpumanager.checkpoint.newer_common import (
    AttemptKind,
    NewerAttempt,
    NewerFormat,
    data_checksum,
    data_fields_set,
)

__all__ = [
    "CPU_DATA_TYPE",
    "CPU_V3_TYPE",
    "CPU_V4_TYPE",
    "MEMORY_DATA_TYPE",
    "MEMORY_V2_TYPE",
    "MEMORY_V3_TYPE",
    "AttemptKind",
    "CPUCheckpointData",
    "CPUCheckpointV3",
    "CPUCheckpointV4",
    "CPUEntries",
    "CPUPodEntry",
    "MemoryCheckpointData",
    "MemoryCheckpointV2",
    "MemoryCheckpointV3",
    "MemoryEntries",
    "MemoryPodEntries",
    "MemoryPodEntry",
    "NewerAttempt",
    "NewerFormat",
    "attempt_cpu_v3",
    "attempt_cpu_v4",
    "attempt_memory_v2",
    "attempt_memory_v3",
    "cpu_v3_checksum",
    "data_checksum",
    "data_fields_set",
    "encode_cpu_v3",
    "encode_cpu_v4",
    "encode_memory_v2",
    "encode_memory_v3",
    "memory_v2_checksum",
    "render_cpu_v3",
]
