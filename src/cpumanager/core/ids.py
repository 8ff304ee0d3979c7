"""Identifier types: V1 checkpoints key by container id, V2 by pod UID + container name.

Mixing the two is the classic bug, so each gets its own NewType.
"""

from __future__ import annotations

from typing import NamedTuple, NewType

__all__ = ["ContainerID", "ContainerKey", "ContainerName", "PodUID"]

PodUID = NewType("PodUID", str)
ContainerName = NewType("ContainerName", str)
ContainerID = NewType("ContainerID", str)


class ContainerKey(NamedTuple):
    """A container as the V2 checkpoint names it."""

    pod_uid: PodUID
    container_name: ContainerName
