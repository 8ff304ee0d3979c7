"""Every cap on input size, in one place (docs/limits.md holds the table).

The same caps hold whatever carries the input: a machine file, a node snapshot (read from a
file, pushed to the extender, or one of a fleet's), a pod list, ``node whatif`` and the
extender's requests. A cap is a refusal with a one-line reason, never a truncation: a value
past it is answered as bad input by the reader that meets it first.

Each figure is far above what a real node or cluster has (the reason is beside it), and
low enough that the work one input can cause stays bounded: the costliest paths (a restore,
an admission) are polynomial in these figures.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from cpumanager.errors import InputError

__all__ = [
    "MAX_BUFFERED_BODY_BYTES",
    "MAX_CONTAINERS_PER_POD",
    "MAX_CPUS",
    "MAX_DEPTH",
    "MAX_EXTENDER_NODES",
    "MAX_FILTER_BODY_BYTES",
    "MAX_HEARTBEAT_BYTES",
    "MAX_NAME_LENGTH",
    "MAX_NODE_NAMES",
    "MAX_NUMA_NODES",
    "MAX_PODS",
    "MAX_PUSH_BYTES",
    "MAX_QUANTITY_DIGITS",
    "MAX_READ_BYTES",
    "MAX_SYSFS_FILE_BYTES",
    "MAX_YAML_DEPTH",
    "check_count",
    "check_depth",
    "check_node_name",
    "depth_of",
    "is_node_name",
]

# --- one machine ----------------------------------------------------------------------------
MAX_CPUS: Final = 65_536
"""Logical CPUs of one machine (the largest Linux configures, NR_CPUS, is 8,192 on most
distributions; 65,536 is the kernel's own ceiling for CONFIG_NR_CPUS)."""
MAX_NUMA_NODES: Final = 1_024
"""NUMA nodes of one machine (the kernel's MAX_NUMNODES at its largest NODES_SHIFT of 10)."""

# --- pods -----------------------------------------------------------------------------------
MAX_PODS: Final = 10_000
"""Pods of one node (the kubelet's --max-pods defaults to 110 and is rarely past 500)."""
MAX_CONTAINERS_PER_POD: Final = 1_000
"""Containers in each of a pod's lists, init and app (a pod's 1.5 MiB object limit holds a
few thousand tiny ones; real pods have a handful)."""
MAX_NAME_LENGTH: Final = 253
"""Any Kubernetes object name: a node, a pod, a namespace (DNS-1123 subdomain)."""
MAX_QUANTITY_DIGITS: Final = 1_000
"""Decimal digits of a resource quantity's integer part, or of its mantissa: far past int64
(19 digits), and every such value prints (Python refuses to print ints past 4,300 digits)."""

# --- documents --------------------------------------------------------------------------------
MAX_DEPTH: Final = 64
"""Nesting of any JSON document we read (a pod in a pod list in a snapshot is about a dozen
levels deep)."""
MAX_YAML_DEPTH: Final = 100
"""Nesting of any YAML document (checked on the parser's events, before the composer, which
recurses per level)."""
MAX_READ_BYTES: Final = 128 * 1024 * 1024
"""One snapshot file read whole (``node whatif``, ``node show``, a fleet's snapshot)."""
MAX_SYSFS_FILE_BYTES: Final = 1024 * 1024
"""One sysfs or /proc file (a cpulist of 65,536 CPUs in the worst form is under 400 KiB)."""

# --- the extender -----------------------------------------------------------------------------
MAX_PUSH_BYTES: Final = 32 * 1024 * 1024
"""One pushed snapshot (a 1,024-NUMA or 65,536-CPU machine with its pods is about 12 MB)."""
MAX_FILTER_BODY_BYTES: Final = 32 * 1024 * 1024
"""One filter or prioritize body (a NodeList of 5,000 full Node objects is about 25 MB; with
nodeCacheCapable the body is the pod and the names)."""
MAX_HEARTBEAT_BYTES: Final = 4096
"""One heartbeat body (``{"digest": "<64 hex>"}``)."""
MAX_BUFFERED_BODY_BYTES: Final = 256 * 1024 * 1024
"""Request bodies being received at once, all connections together; past it a request is
answered 503 at once instead of being buffered."""
MAX_NODE_NAMES: Final = 100_000
"""Candidate nodes in one ExtenderArgs (Kubernetes supports 5,000 nodes per cluster)."""
MAX_EXTENDER_NODES: Final = 10_000
"""Nodes the extender holds by default (``--max-nodes``); see docs/limits.md for the eviction
rule."""


def _is_label(part: str) -> bool:
    if not 0 < len(part) <= 63 or not part.isascii():
        return False
    if not (part[0].isalnum() and part[-1].isalnum()):
        return False
    return all(c.isdigit() or ("a" <= c <= "z") or c == "-" for c in part)


def is_node_name(name: str) -> bool:
    """A Kubernetes node name: a DNS-1123 subdomain (lower-case alphanumerics, ``-`` and ``.``,
    each dot-separated part starting and ending alphanumeric) of at most 253 characters."""
    if not 0 < len(name) <= MAX_NAME_LENGTH:
        return False
    return all(_is_label(part) for part in name.split("."))


def check_node_name(name: object, where: str = "node name") -> str:
    """``name`` when it is a node name (:func:`is_node_name`); InputError otherwise."""
    if not isinstance(name, str) or not is_node_name(name):
        shown = repr(name)[:80].encode("ascii", "backslashreplace").decode()
        msg = (
            f"{where} {shown} is not a Kubernetes node name (lower-case letters, digits, '-' "
            f"and '.', at most {MAX_NAME_LENGTH} characters)"
        )
        raise InputError(msg)
    return name


def check_count(count: int, limit: int, what: str, where: str = "") -> None:
    """InputError when ``count`` of ``what`` is over ``limit``."""
    if count > limit:
        place = f"{where}: " if where else ""
        msg = f"{place}{count:,} {what} is over the limit of {limit:,}"
        raise InputError(msg)


def depth_of(document: object, limit: int = MAX_DEPTH) -> int:
    """How deeply lists and mappings nest in ``document`` (a scalar is 0), counted without
    recursion; counting stops at ``limit + 1``."""
    deepest = 0
    stack: list[tuple[object, int]] = [(document, 0)]
    while stack:
        value, depth = stack.pop()
        children: Iterable[object]
        if isinstance(value, dict):
            children = value.values()
        elif isinstance(value, (list, tuple)):
            children = value
        else:
            continue
        depth += 1
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                return deepest
        stack.extend((child, depth) for child in children)
    return deepest


def check_depth(document: object, where: str, limit: int = MAX_DEPTH) -> None:
    """InputError when ``document`` nests deeper than ``limit``."""
    if depth_of(document, limit) > limit:
        msg = f"{where} nests deeper than {limit} levels"
        raise InputError(msg)
