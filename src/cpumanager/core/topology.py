"""The CPU topology model: what the allocator knows about a machine.

One record per online logical CPU gives its core, socket, NUMA node and uncore (L3) cache
group, as the kubelet's ``CPUDetails`` does. Core ids follow the kubelet: a core is named by
an id that *may repeat across sockets* in hand-written fixtures, and every query by core id
matches all CPUs carrying it (the kubelet's lookups are topology-wide). Discovery from sysfs
names each core by its lowest thread id, so real machines never share core ids.

The five counters (CPUs, cores, sockets, NUMA nodes, uncore caches) are *declared*: the
kubelet's algorithms read them verbatim and some of its test fixtures declare values that do
not match the CPU map. When not given they are derived from the CPU map.

NUMA nodes without CPUs (HBM, CXL, GPU memory) are kept in ``numa_nodes`` with their memory
and distances, but never appear in CPU records; ``cpu_numa_ids`` lists only nodes with CPUs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TypeVar

from cpumanager.core.cpuset import CPUSet
from cpumanager.errors import MachineError

__all__ = ["CPUInfo", "CPUTopology", "NUMANodeInfo"]

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class CPUInfo:
    """Where one logical CPU sits."""

    cpu: int
    core: int
    socket: int
    numa: int
    l3: int


@dataclass(frozen=True, slots=True)
class NUMANodeInfo:
    """A NUMA node: its memory (bytes, when known) and its row of the distance matrix."""

    id: int
    memory_bytes: int | None = None
    distances: Mapping[int, int] = field(default_factory=lambda: MappingProxyType({}))


def _index(records: Iterable[CPUInfo], attr: str) -> dict[int, int]:
    bits: dict[int, int] = {}
    for rec in records:
        key = getattr(rec, attr)
        bits[key] = bits.get(key, 0) | (1 << rec.cpu)
    return dict(sorted(bits.items()))


def _sets(bits: dict[int, int]) -> dict[int, CPUSet]:
    return {key: CPUSet.from_bits(value) for key, value in bits.items()}


def _union(index: Mapping[int, CPUSet], ids: Iterable[int]) -> CPUSet:
    bits = 0
    for key in ids:
        found = index.get(key)
        if found is not None:
            bits |= found.bits
    return CPUSet.from_bits(bits)


class CPUTopology:
    """Frozen CPU map plus declared counters, NUMA nodes, distances and indexes."""

    __slots__ = (
        "_bits",
        "_by_core",
        "_by_l3",
        "_by_numa",
        "_by_socket",
        "_derived",
        "all_cpus",
        "cpus",
        "name",
        "num_cores",
        "num_cpus",
        "num_numa_nodes",
        "num_sockets",
        "num_uncore_caches",
        "numa_nodes",
        "warnings",
    )

    def __init__(
        self,
        cpus: Iterable[CPUInfo],
        *,
        numa_nodes: Iterable[NUMANodeInfo] = (),
        num_cpus: int | None = None,
        num_cores: int | None = None,
        num_sockets: int | None = None,
        num_numa_nodes: int | None = None,
        num_uncore_caches: int | None = None,
        name: str = "",
        warnings: Iterable[str] = (),
    ) -> None:
        self._derived: dict[str, object] = {}
        records = sorted(cpus, key=lambda rec: rec.cpu)
        by_cpu: dict[int, CPUInfo] = {}
        for rec in records:
            if rec.cpu in by_cpu:
                msg = f"CPU {rec.cpu} is described twice; give each logical CPU one record"
                raise MachineError(msg)
            if min(rec.cpu, rec.core, rec.socket, rec.numa, rec.l3) < 0:
                msg = f"CPU {rec.cpu} has a negative id in {rec}; ids are non-negative"
                raise MachineError(msg)
            by_cpu[rec.cpu] = rec
        nodes = {node.id: node for node in numa_nodes}
        for rec in records:
            nodes.setdefault(rec.numa, NUMANodeInfo(id=rec.numa))
        self.cpus: Mapping[int, CPUInfo] = MappingProxyType(by_cpu)
        self.numa_nodes: tuple[NUMANodeInfo, ...] = tuple(nodes[k] for k in sorted(nodes))
        self._bits = {level: _index(records, level) for level in ("core", "socket", "numa", "l3")}
        self._by_core = _sets(self._bits["core"])
        self._by_socket = _sets(self._bits["socket"])
        self._by_numa = _sets(self._bits["numa"])
        self._by_l3 = _sets(self._bits["l3"])
        self.all_cpus = CPUSet(by_cpu)
        self.num_cpus = len(by_cpu) if num_cpus is None else num_cpus
        self.num_cores = len(self._by_core) if num_cores is None else num_cores
        self.num_sockets = len(self._by_socket) if num_sockets is None else num_sockets
        self.num_numa_nodes = len(self._by_numa) if num_numa_nodes is None else num_numa_nodes
        self.num_uncore_caches = (
            len(self._by_l3) if num_uncore_caches is None else num_uncore_caches
        )
        self.name = name
        self.warnings: tuple[str, ...] = tuple(warnings)

    def __setattr__(self, name: str, value: object) -> None:
        if hasattr(self, "warnings"):
            msg = "CPUTopology is immutable"
            raise AttributeError(msg)
        object.__setattr__(self, name, value)

    def __repr__(self) -> str:
        return (
            f"CPUTopology(name={self.name!r}, cpus={self.num_cpus}, cores={self.num_cores}, "
            f"sockets={self.num_sockets}, numa={self.num_numa_nodes})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CPUTopology):
            return NotImplemented
        if self is other:
            return True
        return hash(self) == hash(other) and self._value() == other._value()

    def __hash__(self) -> int:
        return self.derived("hash", lambda topology: hash(topology._value()))

    def _value(self) -> tuple[object, ...]:
        """What equality compares, as plain ints: the CPU map (every record's ids, by CPU),
        the declared counters and the NUMA nodes (memory, distances). Built once; caches
        keyed by topology (per-node tables) compare machines with equal maps often."""

        def build(topology: CPUTopology) -> tuple[object, ...]:
            records = tuple(
                (rec.cpu, rec.core, rec.socket, rec.numa, rec.l3) for rec in topology.cpus.values()
            )
            nodes = tuple(
                (node.id, node.memory_bytes, tuple(sorted(node.distances.items())))
                for node in topology.numa_nodes
            )
            return (records, topology.counters(), nodes)

        return self.derived("value", build)

    def derived(self, name: str, build: Callable[[CPUTopology], _T]) -> _T:
        """``build(self)``, computed once per topology object and kept with it: tables the
        algorithms derive from the machine (it never changes, so they never go stale)."""
        try:
            return self._derived[name]  # type: ignore[return-value]
        except KeyError:
            found = self._derived[name] = build(self)
            return found

    def forget(self, name: str) -> None:
        """Drop a kept table (benches measure a machine never seen this way)."""
        self._derived.pop(name, None)

    # --- counters ----------------------------------------------------------------------

    def counters(self) -> tuple[int, int, int, int, int]:
        return (
            self.num_cpus,
            self.num_cores,
            self.num_sockets,
            self.num_numa_nodes,
            self.num_uncore_caches,
        )

    @property
    def cpus_per_core(self) -> int:
        """The kubelet's ``CPUsPerCore``: declared CPUs // declared cores (1 on hybrids)."""
        return self.num_cpus // self.num_cores if self.num_cores else 0

    @property
    def cpus_per_socket(self) -> int:
        return self.num_cpus // self.num_sockets if self.num_sockets else 0

    @property
    def cpus_per_uncore_cache(self) -> int:
        return self.num_cpus // self.num_uncore_caches if self.num_uncore_caches else 0

    # --- ids -----------------------------------------------------------------------------

    def numa_ids(self) -> tuple[int, ...]:
        """Every NUMA node id, with CPUs or not, ascending."""
        return tuple(node.id for node in self.numa_nodes)

    def cpu_numa_ids(self) -> tuple[int, ...]:
        """NUMA node ids that hold at least one CPU, ascending."""
        return tuple(self._by_numa)

    def socket_ids(self) -> tuple[int, ...]:
        return tuple(self._by_socket)

    def core_ids(self) -> tuple[int, ...]:
        return tuple(self._by_core)

    def l3_ids(self) -> tuple[int, ...]:
        return tuple(self._by_l3)

    def group_bits(self, level: str) -> Mapping[int, int]:
        """The CPUs of every ``core``, ``socket``, ``numa`` node or ``l3`` cache, by id.

        Bitmasks (bit i = CPU i), ascending ids: a read-only view of the tables built with
        the topology, so indexes built on top of it need no second pass over the records.
        """
        found = self._bits.get(level)
        if found is None:
            msg = f"unknown topology level {level!r}; use one of core, socket, numa, l3"
            raise MachineError(msg)
        return MappingProxyType(found)

    def numa_node(self, node_id: int) -> NUMANodeInfo:
        for node in self.numa_nodes:
            if node.id == node_id:
                return node
        msg = f"unknown NUMA node {node_id}; the machine has nodes {list(self.numa_ids())}"
        raise MachineError(msg)

    def distance(self, a: int, b: int) -> int | None:
        """SLIT distance from node ``a`` to node ``b``, or None when not known."""
        for node in self.numa_nodes:
            if node.id == a:
                return node.distances.get(b)
        return None

    def has_distances(self) -> bool:
        ids = self.numa_ids()
        return all(all(b in node.distances for b in ids) for node in self.numa_nodes)

    # --- per-CPU lookups ----------------------------------------------------------------

    def info(self, cpu: int) -> CPUInfo:
        found = self.cpus.get(cpu)
        if found is None:
            msg = f"unknown CPU ID: {cpu}"
            raise MachineError(msg)
        return found

    # --- set queries (ANY-of semantics, as the kubelet's CPUDetails) --------------------

    def cpus_in_numa_nodes(self, ids: Iterable[int]) -> CPUSet:
        return _union(self._by_numa, ids)

    def cpus_in_sockets(self, ids: Iterable[int]) -> CPUSet:
        return _union(self._by_socket, ids)

    def cpus_in_cores(self, ids: Iterable[int]) -> CPUSet:
        return _union(self._by_core, ids)

    def cpus_in_l3(self, ids: Iterable[int]) -> CPUSet:
        return _union(self._by_l3, ids)

    def _values(self, cpus: CPUSet, attr: str) -> tuple[int, ...]:
        return tuple(sorted({getattr(self.cpus[c], attr) for c in cpus if c in self.cpus}))

    def numa_of(self, cpus: CPUSet) -> tuple[int, ...]:
        """NUMA nodes touched by ``cpus``."""
        return self._values(cpus, "numa")

    def sockets_of(self, cpus: CPUSet) -> tuple[int, ...]:
        return self._values(cpus, "socket")

    def cores_of(self, cpus: CPUSet) -> tuple[int, ...]:
        return self._values(cpus, "core")

    def l3_of(self, cpus: CPUSet) -> tuple[int, ...]:
        return self._values(cpus, "l3")

    def cores_in_numa_nodes(self, ids: Iterable[int]) -> tuple[int, ...]:
        return self.cores_of(self.cpus_in_numa_nodes(ids))

    def cores_in_sockets(self, ids: Iterable[int]) -> tuple[int, ...]:
        return self.cores_of(self.cpus_in_sockets(ids))

    def sockets_in_numa_nodes(self, ids: Iterable[int]) -> tuple[int, ...]:
        return self.sockets_of(self.cpus_in_numa_nodes(ids))

    def numa_nodes_in_sockets(self, ids: Iterable[int]) -> tuple[int, ...]:
        return self.numa_of(self.cpus_in_sockets(ids))

    def l3_in_numa_nodes(self, ids: Iterable[int]) -> tuple[int, ...]:
        return self.l3_of(self.cpus_in_numa_nodes(ids))

    def siblings(self, cpu: int) -> CPUSet:
        """Every CPU sharing ``cpu``'s core id (its SMT siblings, itself included)."""
        return self._by_core.get(self.info(cpu).core, CPUSet())

    def uncore_aligned(self, cpus: CPUSet) -> bool:
        """The kubelet's ``CheckAlignment(cpus).UncoreCache``: all CPUs share one uncore cache.

        Zero or one CPU is aligned; a CPU the machine does not have makes the set unaligned
        (when there are two CPUs or more), as in the kubelet's metrics code.
        """
        members = list(cpus)
        if len(members) <= 1:
            return True
        caches = set()
        for cpu in members:
            info = self.cpus.get(cpu)
            if info is None:
                return False
            caches.add(info.l3)
        return len(caches) == 1

    def are_numa_nodes_in_same_socket(self, ids: Iterable[int]) -> bool:
        wanted = tuple(ids)
        if any(node not in self._by_numa for node in wanted):
            return False
        return len(self.sockets_in_numa_nodes(wanted)) <= 1

    def restricted_to(self, cpus: CPUSet) -> CPUTopology:
        """The same machine with only ``cpus`` in its CPU map (kubelet's ``KeepOnly``).

        Counters and NUMA nodes are kept as declared.
        """
        return CPUTopology(
            (rec for cpu, rec in self.cpus.items() if cpu in cpus),
            numa_nodes=self.numa_nodes,
            num_cpus=self.num_cpus,
            num_cores=self.num_cores,
            num_sockets=self.num_sockets,
            num_numa_nodes=self.num_numa_nodes,
            num_uncore_caches=self.num_uncore_caches,
            name=self.name,
            warnings=self.warnings,
        )
