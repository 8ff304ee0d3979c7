"""The kubelet's checkpoint structs, field for field, with Go's nil-versus-empty maps kept.

Values are the raw strings of the file (CPU lists are parsed later, as the kubelet parses
them after the checksum check). ``entries is None`` is Go's nil map (the file said
``"entries": null``); an empty mapping is a non-nil empty map (no ``entries`` key, or
``{}``). The two decode to the same state but hash differently (``<nil>`` vs ``map[]``), so
a faithful checksum needs the distinction. In V2 an inner ``None`` is likewise a nil
container map (``"pod": null``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

__all__ = ["CheckpointV1", "CheckpointV2", "EntriesV1", "EntriesV2", "FormatName"]

FormatName = Literal["v1", "v2"]
EntriesV1 = Mapping[str, str]
EntriesV2 = Mapping[str, Mapping[str, str] | None]


def _freeze_v2(entries: EntriesV2 | None) -> EntriesV2 | None:
    if entries is None:
        return None
    return MappingProxyType(
        {
            pod: None if inner is None else MappingProxyType(dict(inner))
            for pod, inner in entries.items()
        }
    )


def _freeze_v1(entries: EntriesV1 | None) -> EntriesV1 | None:
    return None if entries is None else MappingProxyType(dict(entries))


def _plain_v2(entries: EntriesV2 | None) -> dict[str, dict[str, str] | None] | None:
    if entries is None:
        return None
    return {pod: None if inner is None else dict(inner) for pod, inner in entries.items()}


class _ValueEquality:
    """Equality by value over plain entries, so two files that decode alike compare equal.

    Only objects of the same class compare (a V1 never equals a V2). The hash leaves the
    entries out: they are mappings, and equal objects still hash equal.
    """

    __slots__ = ()

    policy_name: str
    default_cpu_set: str
    checksum: int

    def plain_entries(self) -> object:
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, type(self)):
            return NotImplemented
        return (
            self.policy_name == other.policy_name
            and self.default_cpu_set == other.default_cpu_set
            and self.plain_entries() == other.plain_entries()
            and self.checksum == other.checksum
        )

    def __hash__(self) -> int:
        return hash((self.policy_name, self.default_cpu_set, self.checksum))


@dataclass(frozen=True, slots=True, eq=False)
class CheckpointV2(_ValueEquality):
    """``CPUManagerCheckpointV2``: entries keyed by pod UID, then container name (v1.18+)."""

    policy_name: str = ""
    default_cpu_set: str = ""
    entries: EntriesV2 | None = field(default_factory=lambda: MappingProxyType({}))
    checksum: int = 0

    format: FormatName = field(default="v2", init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "entries", _freeze_v2(self.entries))

    def plain_entries(self) -> dict[str, dict[str, str] | None] | None:
        return _plain_v2(self.entries)

    def with_checksum(self, checksum: int) -> CheckpointV2:
        return CheckpointV2(self.policy_name, self.default_cpu_set, self.entries, checksum)


@dataclass(frozen=True, slots=True, eq=False)
class CheckpointV1(_ValueEquality):
    """``CPUManagerCheckpointV1``: entries keyed by container ID (written before v1.18)."""

    policy_name: str = ""
    default_cpu_set: str = ""
    entries: EntriesV1 | None = field(default_factory=lambda: MappingProxyType({}))
    checksum: int = 0

    format: FormatName = field(default="v1", init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "entries", _freeze_v1(self.entries))

    def plain_entries(self) -> dict[str, str] | None:
        return None if self.entries is None else dict(self.entries)

    def with_checksum(self, checksum: int) -> CheckpointV1:
        return CheckpointV1(self.policy_name, self.default_cpu_set, self.entries, checksum)
