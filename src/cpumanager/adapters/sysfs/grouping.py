"""Cores, sockets and L3 groups from the per-CPU facts read out of sysfs (pure).

Each grouping partitions the online CPUs by a mask that every CPU reports (SMT siblings,
package CPUs, shared cache CPUs), visiting CPUs in ascending order: a CPU's group is its mask
minus the CPUs already placed, and masks that disagree are reported through ``warn``. The
fallbacks when masks are missing are described in :mod:`cpumanager.adapters.sysfs.reader`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from cpumanager.core.cpuset import MAX_CPU_ID, CPUSet

__all__ = ["CPUFacts", "CacheFacts", "Warn", "group_cores", "group_l3", "group_sockets"]

Warn = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class CacheFacts:
    """One ``cache/indexN`` entry of a CPU; ``shared`` is cut to online CPUs (may be empty)."""

    level: int
    type: str
    shared: CPUSet


@dataclass(slots=True)
class CPUFacts:
    """Everything read for one online CPU; None where the file was absent or unusable."""

    cpu: int
    package_id: int | None = None
    core_id: int | None = None
    die_id: int | None = None
    cluster_id: int | None = None
    siblings: CPUSet | None = None
    package_cpus: CPUSet | None = None
    caches: list[CacheFacts] = field(default_factory=list)


def _group(
    online: CPUSet, masks: Mapping[int, CPUSet | None], what: str, warn: Warn
) -> dict[int, CPUSet]:
    """Partition CPUs by their masks, lowest CPU first; None masks are left out."""
    placed = 0
    groups: dict[int, CPUSet] = {}
    for cpu in online:
        mask = masks[cpu]
        if mask is None or (placed >> cpu) & 1:
            continue
        group = CPUSet.from_bits(mask.bits & ~placed)
        for other in group:
            other_mask = masks[other]
            if other_mask is not None and other_mask != mask:
                warn(
                    f"{what} masks disagree: CPU {cpu} lists {mask}, CPU {other} lists "
                    f"{other_mask}; grouped CPUs {group} by CPU {cpu}'s mask"
                )
        placed |= group.bits
        groups[group.min()] = group
    return groups


def group_cores(facts: Mapping[int, CPUFacts], online: CPUSet, warn: Warn) -> dict[int, int]:
    """CPU -> core id (lowest thread id of its core)."""
    groups = _group(online, {c: facts[c].siblings for c in online}, "SMT sibling", warn)
    core_of = {cpu: core for core, cpus in groups.items() for cpu in cpus}
    by_key: dict[tuple[int, int], int] = {}
    for cpu in online:
        if cpu in core_of:
            continue
        f = facts[cpu]
        if f.core_id is not None and f.package_id is not None:
            key = (f.package_id, f.core_id)
            core_of[cpu] = by_key.setdefault(key, cpu)
        else:
            core_of[cpu] = cpu
    return core_of


def group_sockets(facts: Mapping[int, CPUFacts], online: CPUSet, warn: Warn) -> dict[int, int]:
    """CPU -> socket id."""
    groups = _group(online, {c: facts[c].package_cpus for c in online}, "package", warn)
    placed = CPUSet().union(*groups.values())
    # CPUs without a mask of their own that another CPU's mask claims stay in that group.
    rest = [cpu for cpu in online if facts[cpu].package_cpus is None and cpu not in placed]
    by_id: dict[int, list[int]] = {}
    unknown: list[int] = []
    for cpu in rest:
        package = facts[cpu].package_id
        if package is not None and package >= 0:
            by_id.setdefault(package, []).append(cpu)
        else:
            unknown.append(cpu)
    for members in by_id.values():
        groups[min(members)] = CPUSet(members)
    if unknown:
        if len(online) > 1:
            warn(f"no package information for CPUs {CPUSet(unknown)}; counted them as one socket")
        groups[min(unknown)] = CPUSet(unknown)
    ordered = sorted(groups.items())
    ids: list[int | None] = []
    for _low, group in ordered:
        known = {facts[c].package_id for c in group}
        ids.append(known.pop() if len(known) == 1 else None)
    absurd = [i for i in ids if i is not None and i > MAX_CPU_ID]
    if absurd:
        warn(
            f"physical_package_id {min(absurd)} is above {MAX_CPU_ID}; numbered sockets "
            "0.. by lowest CPU instead"
        )
        ids = [None] * len(ids)
    usable = all(i is not None and i >= 0 for i in ids) and len(set(ids)) == len(ids)
    if not usable and any(i is not None and i >= 0 for i in ids):
        warn(
            "physical_package_id does not match the package masks; numbered sockets "
            "0.. by lowest CPU instead"
        )
    socket_of: dict[int, int] = {}
    for index, ((_low, group), package_id) in enumerate(zip(ordered, ids, strict=True)):
        socket = package_id if usable and package_id is not None else index
        for cpu in group:
            socket_of[cpu] = socket
    return socket_of


def group_l3(
    facts: Mapping[int, CPUFacts],
    online: CPUSet,
    core_of: Mapping[int, int],
    socket_of: Mapping[int, int],
    warn: Warn,
) -> dict[int, int]:
    """CPU -> L3 group id (dense, by lowest CPU)."""
    core_cpus: dict[int, int] = {}
    for cpu, core in core_of.items():
        core_cpus[core] = core_cpus.get(core, 0) | (1 << cpu)
    masks: dict[int, CPUSet | None] = {}
    for cpu in online:
        own_core = CPUSet.from_bits(core_cpus[core_of[cpu]])
        # An empty shared_cpu_map (old ia64 kernels) means "this core's threads".
        data = [
            (c.level, c.shared or own_core)
            for c in facts[cpu].caches
            if c.type.lower() in ("unified", "data")
        ]
        level3 = [shared for level, shared in data if level == 3]
        if level3:
            masks[cpu] = level3[0]
            continue
        wider = [(level, shared) for level, shared in data if shared - own_core]
        masks[cpu] = max(wider, key=lambda item: item[0])[1] if wider else None
    groups = _group(online, masks, "L3 cache", warn)
    placed = CPUSet().union(*groups.values())
    by_socket: dict[int, int] = {}
    for cpu in online:
        if masks[cpu] is None and cpu not in placed:
            by_socket[socket_of[cpu]] = by_socket.get(socket_of[cpu], 0) | (1 << cpu)
    for bits in by_socket.values():
        cpus = CPUSet.from_bits(bits)
        groups[cpus.min()] = cpus
    l3_of: dict[int, int] = {}
    for index, (_low, cpus) in enumerate(sorted(groups.items())):
        for cpu in cpus:
            l3_of[cpu] = index
    return l3_of
