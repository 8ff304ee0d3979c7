"""NUMA node counts at which hint generation changes form, in one place.

Hints are masks of NUMA nodes, so listing them walks up to 2^N masks. Up to
``IMPLICIT_AFTER`` nodes (the kubelet's own limit, ``defaultMaxAllowableNUMANodes``) every
provider lists its hints as the kubelet does; past it the CPU, memory and device providers
answer with a rule the fast merge searches instead. Some answers can only be listed (devices
attached to several nodes, ``cpumanager compute hints``): past ``ENUMERATE_LIMIT`` nodes
listing would take minutes, so those are refused with a one-line error instead.
"""

from __future__ import annotations

from typing import Final

__all__ = ["ENUMERATE_LIMIT", "IMPLICIT_AFTER", "implicit_for"]

IMPLICIT_AFTER: Final = 8
ENUMERATE_LIMIT: Final = 20


def implicit_for(node_count: int) -> bool:
    """Whether hints over ``node_count`` NUMA nodes are given as a rule rather than a list."""
    return node_count > IMPLICIT_AFTER
