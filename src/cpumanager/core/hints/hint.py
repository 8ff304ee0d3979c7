"""TopologyHint and the provider answer type.

The kubelet encodes "no preference" as a nil hint list and "no possible placement" as an
empty one; here both are named. ``NO_PREFERENCE`` merges as "any NUMA node, preferred";
``NO_PLACEMENT`` (an empty tuple) merges as "any NUMA node, not preferred" and blocks
restricted / single-numa-node admission.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Final, Literal

from cpumanager.core.bitmask import NUMAMask

__all__ = [
    "NO_PLACEMENT",
    "NO_PREFERENCE",
    "NoPreference",
    "ProviderHints",
    "ResourceHints",
    "TopologyHint",
]


@dataclass(frozen=True, slots=True)
class TopologyHint:
    """A NUMA affinity (None = any node) and whether the provider prefers it."""

    mask: NUMAMask | None
    preferred: bool

    def sort_key(self) -> tuple[int, int, int]:
        """Preferred first, then narrower (the kubelet's ``LessThan``); None masks last."""
        if self.mask is None:
            return (0 if self.preferred else 1, 1 << 30, 0)
        count, bits = self.mask.narrow_key()
        return (0 if self.preferred else 1, count, bits)

    def to_json(self) -> dict[str, object]:
        return {
            "affinity": None if self.mask is None else list(self.mask),
            "preferred": self.preferred,
        }


class NoPreference(Enum):
    """The provider does not care where the resource goes (kubelet: nil hint list)."""

    NO_PREFERENCE = "no-preference"


NO_PREFERENCE: Final = NoPreference.NO_PREFERENCE
NO_PLACEMENT: Final[tuple[TopologyHint, ...]] = ()

# One resource's answer: no preference, or the hints (an empty tuple = no placement).
ResourceHints = Literal[NoPreference.NO_PREFERENCE] | tuple[TopologyHint, ...]
# One provider's answer: resource name -> hints; an empty mapping = no preference at all.
ProviderHints = dict[str, ResourceHints]
