"""The kubelet's view of a sysfs tree: cadvisor's reading, the kubelet's ``Discover``, and in
words where that view differs from the kernel's (the sibling masks :mod:`.reader` follows).

The kubelet decides on cadvisor's ``MachineInfo``, quirks included, so this is the view that
predicts its decisions on the node. The kernel's view is read as well, only to explain the
differences in the result's ``warnings``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from cpumanager.adapters.sysfs.cadvisor import read_machine_info
from cpumanager.core.cpuset import MAX_CPU_ID, CPUSet
from cpumanager.core.discover import topology_from_cadvisor
from cpumanager.core.topology import CPUTopology
from cpumanager.errors import MachineError

__all__ = ["explain_differences", "kubelet_topology"]

_SHOWN = 4


def _groups(assign: Mapping[int, int]) -> dict[int, CPUSet]:
    found: dict[int, list[int]] = {}
    for cpu, key in assign.items():
        found.setdefault(key, []).append(cpu)
    return {key: CPUSet(cpus) for key, cpus in sorted(found.items())}


def _listing(items: Sequence[str]) -> str:
    shown = "; ".join(items[:_SHOWN])
    more = len(items) - _SHOWN
    return shown + (f"; and {more} more" if more > 0 else "")


def _core_labels(machine_info: Mapping[str, Any]) -> dict[int, str]:
    """Kubelet core id (lowest thread) -> how cadvisor named it (core_id, package)."""
    labels = {}
    for node in machine_info.get("topology") or ():
        for core in node.get("cores") or ():
            threads = core.get("thread_ids") or []
            if threads:
                label = f"core_id {core['core_id']} on package {core['socket_id']}"
                if "book_id" in core:
                    label += f", book {core['book_id']}, drawer {core['drawer_id']}"
                labels[min(threads)] = label
    return labels


def _partition_words(kubelet: Mapping[int, int], kernel: Mapping[int, int], what: str) -> list[str]:
    """Kubelet groups of ``what`` that are not kernel groups, each with the kernel's split."""
    kernel_groups = _groups(kernel)
    kernel_sets = set(kernel_groups.values())
    words = []
    for key, cpus in _groups(kubelet).items():
        if cpus in kernel_sets:
            continue
        parts = sorted({kernel[cpu] for cpu in cpus})
        pieces = [str(kernel_groups[part]) for part in parts]  # the kernel's groups it touches
        words.append(f"{what} {key} = CPUs {cpus} (the kernel: {' | '.join(pieces)})")
    return words


def explain_differences(
    kubelet: CPUTopology, kernel: CPUTopology, machine_info: Mapping[str, Any]
) -> list[str]:
    """Where the kubelet's view (from cadvisor) differs from the kernel's, in words."""
    notes: list[str] = []
    common = kubelet.all_cpus & kernel.all_cpus
    left_out = kernel.all_cpus - kubelet.all_cpus
    if left_out:
        notes.append(
            f"the kubelet does not know CPUs {left_out} (cadvisor skipped them, or found them "
            "in no NUMA node's cpuN links), which the kernel has online; it never allocates them"
        )
    extra = kubelet.all_cpus - kernel.all_cpus
    if extra:
        notes.append(f"the kubelet places CPUs {extra}, which the kernel does not have online")
    if kubelet.num_cpus != len(kubelet.all_cpus):
        notes.append(
            f"the kubelet counts {kubelet.num_cpus} CPUs (cadvisor's NumCores: without a node "
            "directory every cpuN directory, offline ones included; a CPU linked from two "
            f"nodes twice) but places {len(kubelet.all_cpus)}"
        )
    labels = _core_labels(machine_info)

    def assign(topology: CPUTopology, level: str) -> dict[int, int]:
        return {cpu: getattr(topology.info(cpu), level) for cpu in common}

    kube_cores = assign(kubelet, "core")
    kernel_cores = assign(kernel, "core")
    merged = []
    for key, cpus in _groups(kube_cores).items():
        parts = {kernel_cores[cpu] for cpu in cpus}
        if len(parts) > 1:
            merged.append(
                f"cadvisor groups CPUs {cpus} into one core (all say {labels.get(key, '?')}); "
                f"the kubelet allocates them as one core where the kernel has {len(parts)}"
            )
    notes.extend(merged)
    split = []
    for cpus in _groups(kernel_cores).values():
        pieces = {kube_cores[cpu] for cpu in cpus}
        if len(pieces) > 1:
            split.append(
                f"the kernel's sibling mask makes CPUs {cpus} one core; cadvisor splits them "
                f"by core_id into {len(pieces)} cores the kubelet allocates separately"
            )
    notes.extend(split)
    sockets = _partition_words(assign(kubelet, "socket"), assign(kernel, "socket"), "socket")
    if sockets:
        notes.append(
            "the kubelet's sockets (cadvisor's physical_package_id) differ from the kernel's "
            "package masks: " + _listing(sockets)
        )
    if kubelet.num_sockets != kernel.num_sockets:
        notes.append(
            f"the kubelet counts {kubelet.num_sockets} sockets (cadvisor counts distinct "
            f"'physical id' lines of /proc/cpuinfo, else package ids) where the kernel has "
            f"{kernel.num_sockets}"
        )
    kube_numa = assign(kubelet, "numa")
    kernel_numa = assign(kernel, "numa")
    if kube_numa != kernel_numa:
        numa = [f"node {key} = CPUs {cpus}" for key, cpus in _groups(kube_numa).items()]
        notes.append(
            f"the kubelet sees NUMA nodes {_listing(numa)} (cadvisor reads each node's cpuN "
            "links, or makes one pseudo-node per package without a node directory); the "
            f"kernel has {kernel.num_numa_nodes} node(s) holding CPUs"
        )
    uncore = _partition_words(assign(kubelet, "l3"), assign(kernel, "l3"), "uncore cache")
    if uncore:
        reported = any(
            core.get("uncore_caches")
            for node in machine_info.get("topology") or ()
            for core in node.get("cores") or ()
        )
        why = (
            "cadvisor reports an uncore cache only for a level-3+ cache shared by part of a "
            "NUMA node, and takes its id file"
            if reported
            else "cadvisor reports no uncore cache here (no readable level-3+ cache shared by "
            "part of a NUMA node), so the kubelet uses the socket id"
        )
        notes.append(
            f"the kubelet's uncore caches differ from the kernel's L3 groups ({why}): "
            + _listing(uncore)
        )
    return notes


def kubelet_topology(
    root: Path,
    *,
    kernel_view: Callable[[], CPUTopology] | None = None,
    s390: bool | None = None,
) -> CPUTopology:
    """The topology the kubelet gets on the node whose sysfs is under ``root``.

    ``warnings`` hold what cadvisor logged and where this view differs from the kernel's
    (read by ``kernel_view``, when given). ``s390`` forces cadvisor's s390x rules on or off
    (default: decided from the tree)."""
    machine_info, logged = read_machine_info(root, s390=s390)
    highest = max(
        (
            cpu
            for node in machine_info["topology"]
            for core in node["cores"]
            for cpu in core["thread_ids"]
        ),
        default=0,
    )
    if highest > MAX_CPU_ID:
        msg = (
            f"cadvisor reports CPU {highest}, above the largest CPU id this model accepts "
            f"({MAX_CPU_ID}); is the tree a real machine's?"
        )
        raise MachineError(msg)
    try:
        topology = topology_from_cadvisor(machine_info)
    except MachineError as err:
        msg = (
            f"the kubelet's topology discovery fails on this node ({err}): "
            + ("; ".join(logged) or "cadvisor finds no CPU")
            + "; read the kernel's view with --topology-view kernel"
        )
        raise MachineError(msg) from err
    if not topology.all_cpus:
        msg = (
            f"the kubelet counts {topology.num_cpus} CPUs but cadvisor places none of them "
            f"({'; '.join(logged) or 'no core found'}), so its static policy cannot allocate; "
            "read the kernel's view with --topology-view kernel"
        )
        raise MachineError(msg)
    kernel: CPUTopology | None = None
    if kernel_view is not None:
        with contextlib.suppress(MachineError):
            kernel = kernel_view()
    differences = [] if kernel is None else explain_differences(topology, kernel, machine_info)
    return CPUTopology(
        topology.cpus.values(),
        numa_nodes=topology.numa_nodes,
        num_cpus=topology.num_cpus,
        num_cores=topology.num_cores,
        num_sockets=topology.num_sockets,
        num_numa_nodes=topology.num_numa_nodes,
        num_uncore_caches=topology.num_uncore_caches,
        name=kernel.name if kernel is not None else Path(root).resolve().name or "localhost",
        warnings=[*logged, *topology.warnings, *differences],
    )
