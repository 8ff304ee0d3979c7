"""The memory manager's ``memory_manager_state``, byte for byte (kubelet v1.20 .. v1.35).

Source: ``pkg/kubelet/cm/memorymanager/state/{state.go,checkpoint.go}``. The file is Go's
``json.Marshal`` of ``MemoryManagerCheckpoint``::

    {"policyName":"Static","machineState":{"0":{"numberOfAssignments":1,"memoryMap":
     {"memory":{"total":..,"systemReserved":..,"allocatable":..,"reserved":..,"free":..}},
     "cells":[0]}},"entries":{"<pod uid>":{"<container>":[{"numaAffinity":[0],
     "type":"memory","size":1073741824}]}},"checksum":4215593881}

(one line). ``machineState`` is a ``map[int]*NUMANodeState``, so its keys are decimal
strings written in *string* order (``"10"`` before ``"2"``); ``entries`` is left out when
empty. Reading pre-initialises ``machineState`` and ``entries`` to empty maps, as
``NewMemoryManagerCheckpoint`` does.

The checksum is FNV-1a 32 over go-spew's ``%#v`` of ``*MemoryManagerCheckpoint`` with
``Checksum`` zeroed: ``(*state.MemoryManagerCheckpoint){PolicyName:(string)Static
MachineState:(state.NUMANodeMap)map[0:<*>{NumberOfAssignments:(int)0 MemoryMap:(map[v1.
ResourceName]*state.MemoryTable)map[memory:<*>{TotalMemSize:(uint64)2048 ...}] Cells:([]int)
[0]}] Entries:(state.ContainerMemoryAssignments)map[...] Checksum:(checksum.Checksum)0}``.
Pointers inside maps print ``<*>``, nil pointers/maps/slices ``<nil>``, empty ones ``[]`` or
``map[]``. Released kubelets verify it exactly (a stored 0 is *not* accepted, unlike the CPU
file); the development line's V1/V2 split (``podEntries``) and data/dataChecksum layout are
not read here: their extra keys are ignored and the checksum does not match, as in a
released kubelet.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from cpumanager.checkpoint.go import fastjson, gojson
from cpumanager.checkpoint.go.fnv import fnv1a_32
from cpumanager.checkpoint.go.godecode import GoTypeError, unmarshal
from cpumanager.checkpoint.go.goencode import marshal
from cpumanager.checkpoint.go.gospew import spew
from cpumanager.checkpoint.memory import codec_fast_write as memory_fast
from cpumanager.checkpoint.memory.codec_fast_read import decode_memory_plain
from cpumanager.checkpoint.memory.model import (
    BLOCK_TYPE,
    CHECKPOINT_TYPE,
    MEMORY_TABLE_TYPE,
    NUMA_NODE_STATE_TYPE,
    Block,
    Entries,
    MachineState,
    MemoryManagerCheckpoint,
    MemoryMap,
    MemoryTable,
    NUMANodeState,
)
from cpumanager.errors import CheckpointCorruptError, CheckpointFormatError

__all__ = [
    "BLOCK_TYPE",
    "CHECKPOINT_TYPE",
    "MEMORY_TABLE_TYPE",
    "NUMA_NODE_STATE_TYPE",
    "Block",
    "Entries",
    "MachineState",
    "MemoryMap",
    "MemoryAttempt",
    "MemoryManagerCheckpoint",
    "MemoryTable",
    "NUMANodeState",
    "attempt_memory",
    "checksum_of_memory",
    "decode_memory",
    "encode_memory",
    "encode_memory_exact",
    "render_memory",
    "render_memory_exact",
    "with_fresh_checksum",
]

def render_memory(checkpoint: MemoryManagerCheckpoint) -> str:
    """go-spew's ``%#v`` of ``&checkpoint`` with ``Checksum`` zeroed (what the kubelet hashes)."""
    fast = memory_fast.spew_memory(checkpoint)  # the usual shape, written directly
    if fast is not None:
        return fast
    return render_memory_exact(checkpoint)


def render_memory_exact(checkpoint: MemoryManagerCheckpoint) -> str:
    """:func:`render_memory` through the type walk (the reference the fast path is tested on)."""
    return spew(checkpoint.with_checksum(0), CHECKPOINT_TYPE, pointer=True)


def checksum_of_memory(checkpoint: MemoryManagerCheckpoint) -> int:
    """The checksum a kubelet computes for this content (the stored one is ignored)."""
    return fnv1a_32(render_memory(checkpoint).encode("utf-8"))


def with_fresh_checksum(checkpoint: MemoryManagerCheckpoint) -> MemoryManagerCheckpoint:
    """The checkpoint as ``MarshalCheckpoint`` stores it: checksum recomputed."""
    return checkpoint.with_checksum(checksum_of_memory(checkpoint))


def encode_memory(checkpoint: MemoryManagerCheckpoint) -> bytes:
    """Go's ``json.Marshal`` of the struct, with the checksum exactly as stored."""
    fast = memory_fast.marshal_memory(checkpoint)
    if fast is not None:
        return fast
    return encode_memory_exact(checkpoint)


def encode_memory_exact(checkpoint: MemoryManagerCheckpoint) -> bytes:
    """:func:`encode_memory` through the type walk (the reference the fast path is tested on)."""
    return marshal(checkpoint, CHECKPOINT_TYPE)


AttemptKind = Literal["ok", "syntax", "type", "corrupt"]


@dataclass(frozen=True, slots=True)
class MemoryAttempt:
    """The outcome of the kubelet's ``GetCheckpoint`` on these bytes, without raising."""

    kind: AttemptKind
    checkpoint: MemoryManagerCheckpoint | None
    error: str = ""
    stored_checksum: int = 0
    computed_checksum: int = 0

    @property
    def ok(self) -> bool:
        return self.kind == "ok"


def attempt_tree(tree: gojson.JSONValue) -> MemoryAttempt:
    """Unmarshal an already parsed document, then verify the checksum."""
    try:
        checkpoint = unmarshal(tree, CHECKPOINT_TYPE, MemoryManagerCheckpoint())
    except GoTypeError as err:
        return MemoryAttempt("type", None, str(err))
    computed = checksum_of_memory(checkpoint)
    if checkpoint.checksum != computed:
        return MemoryAttempt(
            "corrupt", checkpoint, "checkpoint is corrupted", checkpoint.checksum, computed
        )
    return MemoryAttempt("ok", checkpoint, "", computed, computed)


def attempt_memory(data: bytes) -> MemoryAttempt:
    """Read ``data`` as the kubelet reads ``memory_manager_state``; never raises."""
    plain = decode_memory_plain(data)
    if plain is not None:  # the usual file, verified: the same result as below, sooner
        return MemoryAttempt("ok", plain, "", plain.checksum, plain.checksum)
    try:
        tree = fastjson.parse(data)
    except gojson.GoJSONSyntaxError as err:
        return MemoryAttempt("syntax", None, err.message)
    return attempt_tree(tree)


def decode_memory(
    data: bytes, *, source: str, tree: gojson.JSONValue | None = None
) -> MemoryManagerCheckpoint:
    """The checkpoint in ``data`` (``tree``: already parsed); typed error on any failure."""
    result = attempt_memory(data) if tree is None else attempt_tree(tree)
    if result.kind == "corrupt":
        raise CheckpointCorruptError(source, result.stored_checksum, result.computed_checksum)
    if result.checkpoint is None:
        message = (
            f"memory manager checkpoint {source!r} cannot be decoded: {result.error}; the "
            "kubelet would refuse to start: drain the node and delete the file, or fix it and "
            "run 'cpumanager state rewrite'"
        )
        raise CheckpointFormatError(message)
    return result.checkpoint
