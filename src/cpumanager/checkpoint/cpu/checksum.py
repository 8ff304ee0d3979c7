"""The kubelet's checkpoint checksum: FNV-1a 32 over go-spew's ``%#v`` rendering.

The hash covers the decoded struct, not the file bytes, rendered as go-spew v1.1.1 prints a
pointer to it with ``SortKeys`` (see spec §2.2)::

    (*state.CPUManagerCheckpoint){PolicyName:(string)P DefaultCPUSet:(string)D
     Entries:(map[string]map[string]string)map[pod:map[c:S ...] ...] Checksum:(checksum.Checksum)0}

(one line; the break above is for reading). Strings are raw (no quotes, no escapes), map
keys sort bytewise (code-point order of a ``str`` is the same order), entries are separated
by one space, a nil map prints ``<nil>`` and an empty one ``map[]``. The ``Checksum`` field is
zero while hashing.

V1 files hash under the type name ``CPUManagerCheckpoint`` too: that was the struct's name
before v1.18, and the kubelet's V1 verifier substitutes it back (PR #86689). So both formats
render the same prefix and differ only in the entries' type. A stored checksum of 0 means
"not checked" (the checksum-less file backend of the first releases).
"""

from __future__ import annotations

from cpumanager.checkpoint.cpu.model import CheckpointV1, CheckpointV2, EntriesV1, EntriesV2
from cpumanager.checkpoint.go.fnv import clean_text as _clean
from cpumanager.checkpoint.go.fnv import fnv1a_32

__all__ = ["checksum_of", "render", "verifies"]

TYPE_NAME = "CPUManagerCheckpoint"


def _render_v2_entries(entries: EntriesV2 | None) -> str:
    if entries is None:
        return "<nil>"
    pods = []
    for pod in sorted(entries, key=_clean):
        inner = entries[pod]
        if inner is None:
            rendered = "<nil>"
        else:
            rendered = (
                "map["
                + " ".join(f"{_clean(name)}:{_clean(inner[name])}" for name in sorted(inner))
                + "]"
            )
        pods.append(f"{_clean(pod)}:{rendered}")
    return "map[" + " ".join(pods) + "]"


def _render_v1_entries(entries: EntriesV1 | None) -> str:
    if entries is None:
        return "<nil>"
    return (
        "map[" + " ".join(f"{_clean(cid)}:{_clean(entries[cid])}" for cid in sorted(entries)) + "]"
    )


def render(checkpoint: CheckpointV2 | CheckpointV1, *, type_name: str = TYPE_NAME) -> str:
    """go-spew's ``%#v`` of ``&checkpoint`` with ``Checksum`` zeroed."""
    if isinstance(checkpoint, CheckpointV2):
        entry_type = "map[string]map[string]string"
        entries = _render_v2_entries(checkpoint.entries)
    else:
        entry_type = "map[string]string"
        entries = _render_v1_entries(checkpoint.entries)
    return (
        f"(*state.{type_name}){{PolicyName:(string){_clean(checkpoint.policy_name)}"
        f" DefaultCPUSet:(string){_clean(checkpoint.default_cpu_set)}"
        f" Entries:({entry_type}){entries}"
        " Checksum:(checksum.Checksum)0}"
    )


def checksum_of(checkpoint: CheckpointV2 | CheckpointV1, *, type_name: str = TYPE_NAME) -> int:
    """The checksum a kubelet computes for this content (the stored one is ignored)."""
    return fnv1a_32(render(checkpoint, type_name=type_name).encode("utf-8"))


def verifies(checkpoint: CheckpointV2 | CheckpointV1) -> bool:
    """Whether the kubelet accepts the stored checksum: 0 (unchecked) or an exact match."""
    return checkpoint.checksum == 0 or checkpoint.checksum == checksum_of(checkpoint)
