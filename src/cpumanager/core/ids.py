"""Identifier types: V1 checkpoints key by container id, V2 by pod UID + container name.

Mixing the two is the classic bug, so each gets its own NewType.
"""

from __future__ import annotations

import re
from typing import NamedTuple, NewType

__all__ = [
    "MAX_POD_UID_LENGTH",
    "ContainerID",
    "ContainerKey",
    "ContainerName",
    "PodUID",
    "pod_uid_problem",
]

PodUID = NewType("PodUID", str)
ContainerName = NewType("ContainerName", str)
ContainerID = NewType("ContainerID", str)


class ContainerKey(NamedTuple):
    """A container as the V2 checkpoint names it."""

    pod_uid: PodUID
    container_name: ContainerName


MAX_POD_UID_LENGTH = 128
# What API servers assign (RFC 4122 UUIDs) and what static-pod sources derive (hex hashes)
# both fit: ASCII letters and digits, with '-', '_' and '.' inside.
_POD_UID = re.compile(r"[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?")


def pod_uid_problem(uid: str) -> str | None:
    """Why ``uid`` cannot name a pod in our state (None when it can).

    Checked before a uid reaches a checkpoint, so every later reader of stored ids sees
    only plain ASCII words: no digits from other scripts, separators or control characters.
    """
    if not uid:
        return "a pod uid must not be empty"
    if len(uid) > MAX_POD_UID_LENGTH:
        return f"a pod uid has at most {MAX_POD_UID_LENGTH} characters, this one {len(uid)}"
    if not uid.isascii() or _POD_UID.fullmatch(uid) is None:
        return (
            "a pod uid may hold only ASCII letters, digits, '-', '_' and '.', and must start "
            "and end with a letter or digit"
        )
    return None
