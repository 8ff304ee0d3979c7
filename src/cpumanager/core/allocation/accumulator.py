"""The kubelet's CPU accumulator: free CPUs, CPUs still needed, the result, and the orders.

State is three ints: ``free`` (bitmask of CPUs still free), ``result`` (bitmask taken so far)
and ``need`` (CPUs still needed). ``take(S)`` adds S to the result, removes the result from
``free`` and lowers ``need`` by ``|S|`` *even when S overlaps what was already taken* — the
kubelet does exactly this, and it matters when an element appears twice in an order.

Hierarchy: NUMA-first when the declared ``num_sockets >= num_numa_nodes`` (a NUMA node holds
one socket or more, or the counters were left at 0), otherwise socket-first.

Every order sorts by (free CPUs inside the element, element id), ascending, and is computed
from ``free`` alone (elements without a free CPU do not appear):

==============  =====================================  =====================================
list            NUMA-first                             socket-first
==============  =====================================  =====================================
NUMA nodes      all NUMA nodes                         for each socket: its NUMA nodes
sockets         for each NUMA node: its sockets        all sockets
cores           for each socket: its cores             for each NUMA node: its cores
uncore caches   for each NUMA node: its caches         for each NUMA node: its caches
==============  =====================================  =====================================

The nested lists are concatenations, so an element spanning two parents appears twice; the
kubelet processes the repeat again and so do we. The sort key of a nested element counts its
free CPUs in the whole machine, not only inside the parent.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from cpumanager.core.allocation.index import Members, TopologyIndex
from cpumanager.core.cpuset import CPUSet

__all__ = ["Accumulator"]


def _ordered(members: Members, free: int, totals: dict[int, int]) -> list[int]:
    """Ids of ``members`` with a free CPU, by (free CPUs machine-wide, id)."""
    keyed = [
        ((free & totals[element]).bit_count(), element) for element, bits in members if free & bits
    ]
    keyed.sort()
    return [element for _, element in keyed]


class Accumulator:
    """Mutable working state of one take-by-topology call (never escapes the call)."""

    __slots__ = (
        "_numa_order",
        "_socket_order",
        "declared",
        "free",
        "ix",
        "need",
        "result",
        "trace",
    )

    def __init__(
        self,
        ix: TopologyIndex,
        available: int,
        count: int,
        trace: list[str] | None,
        *,
        declared: bool = False,
    ) -> None:
        self.ix = ix
        # Kubelets before 1.37 call a socket (core) free when its free CPUs number the
        # declared CPUsPerSocket (CPUsPerCore), not its own size, and then take all of its
        # CPUs, free or not (k/k#140498 changed both tests to the real size).
        self.declared = declared
        self.free = available & ix.all_bits
        self.need = count
        self.result = 0
        self.trace = trace
        # (free CPUs it was computed for, order): steps that take nothing reuse the order
        self._numa_order: tuple[int, list[int]] = (-1, [])
        self._socket_order: tuple[int, list[int]] = (-1, [])

    # --- bookkeeping -------------------------------------------------------------------

    def take(self, bits: int, what: str) -> None:
        self.result |= bits
        self.free &= ~self.result
        self.need -= bits.bit_count()
        if self.trace is not None:
            self.trace.append(f"took {what} (CPUs {CPUSet.from_bits(bits)})")

    def _settle(self, result: int, need: int) -> None:
        """Store what a batched step took: the same state as its takes one by one."""
        self.result = result
        self.free &= ~result
        self.need = need

    def satisfied(self) -> bool:
        return self.need < 1

    def failed(self) -> bool:
        return self.need > self.free.bit_count()

    def note(self, text: str) -> None:
        if self.trace is not None:
            self.trace.append(text)

    # --- orders ------------------------------------------------------------------------

    def numa_order(self) -> list[int]:
        """NUMA nodes with a free CPU, in the kubelet's order (callers must not mutate it)."""
        free = self.free
        cached_free, cached = self._numa_order
        if cached_free == free:
            return cached
        order = self._compute_numa_order()
        self._numa_order = (free, order)
        return order

    def one_node(self) -> tuple[int, int] | None:
        """(NUMA node, socket) when every free CPU is on one node that sits in one socket.

        Then both orders hold just that element whatever the hierarchy: the usual case of
        the distributed allocation's per-node packing, answered without sorting anything.
        """
        ix, free = self.ix, self.free
        if not free:
            return None
        node = ix.topology.cpus[(free & -free).bit_length() - 1].numa
        if free & ~ix.numa_bits[node]:
            return None
        sockets = ix.numa_sockets[node]
        if len(sockets) != 1:
            return None
        return node, sockets[0][0]

    def _compute_numa_order(self) -> list[int]:
        ix, free = self.ix, self.free
        one = self.one_node()
        if one is not None:
            return [one[0]]
        if ix.numa_first:
            keyed = [
                ((free & bits).bit_count(), numa)
                for numa, bits in ix.numa_bits.items()
                if free & bits
            ]
            keyed.sort()
            return [numa for _, numa in keyed]
        order: list[int] = []
        for socket in self.socket_order():
            order += _ordered(ix.socket_numas[socket], free, ix.numa_bits)
        return order

    def socket_order(self) -> list[int]:
        """Sockets with a free CPU, in the kubelet's order (callers must not mutate it)."""
        free = self.free
        cached_free, cached = self._socket_order
        if cached_free == free:
            return cached
        order = self._compute_socket_order()
        self._socket_order = (free, order)
        return order

    def _compute_socket_order(self) -> list[int]:
        ix, free = self.ix, self.free
        one = self.one_node()
        if one is not None:
            return [one[1]]
        if not ix.numa_first:
            keyed = [
                ((free & bits).bit_count(), socket)
                for socket, bits in ix.socket_bits.items()
                if free & bits
            ]
            keyed.sort()
            return [socket for _, socket in keyed]
        order: list[int] = []
        for numa in self.numa_order():
            order += _ordered(ix.numa_sockets[numa], free, ix.socket_bits)
        return order

    def _cores(self, free: int) -> Iterable[int]:
        """Core order for ``free`` (the current free CPUs), parent by parent.

        Several parents are produced lazily (callers may stop early); a single one, the
        usual case of a per-node take, is ordered at once.
        """
        ix = self.ix
        if ix.numa_first:
            parents, nesting = self.socket_order(), ix.socket_cores
        else:
            parents, nesting = self.numa_order(), ix.numa_cores
        if len(parents) == 1:
            return _ordered(nesting[parents[0]], free, ix.core_bits)
        return (
            core for parent in parents for core in _ordered(nesting[parent], free, ix.core_bits)
        )

    def core_order(self) -> list[int]:
        return list(self._cores(self.free))

    def uncore_order(self) -> list[int]:
        ix, free = self.ix, self.free
        order: list[int] = []
        for numa in self.numa_order():
            order += _ordered(ix.numa_l3[numa], free, ix.l3_bits)
        return order

    def _cpus(self, free: int, *, spread: bool) -> Iterator[int]:
        ix = self.ix
        if spread:
            for socket in self.socket_order():
                yield from CPUSet.from_bits(free & ix.socket_bits[socket])
        else:
            core_bits = ix.core_bits
            for core in self._cores(free):
                bits = free & core_bits[core]
                while bits:  # a core's few CPUs, ascending
                    lowest = bits & -bits
                    yield lowest.bit_length() - 1
                    bits ^= lowest

    def cpu_order(self, *, spread: bool) -> list[int]:
        """Packed: each core's free CPUs in core order; spread: each socket's, ascending."""
        return list(self._cpus(self.free, spread=spread))

    # --- whole-element takes -----------------------------------------------------------

    def _take_full(
        self, order: list[int], table: dict[int, int], kind: str, declared: int = 0
    ) -> None:
        """Take every element of ``order`` that is entirely free and still fits.

        The list of free elements is fixed before the loop (as in the kubelet). With
        ``declared`` (> 0), an element is "free" when that many of its CPUs are.
        """
        free = self.free
        if declared:
            whole = [e for e in order if (free & table[e]).bit_count() == declared]
        else:
            whole = [element for element in order if free & table[element] == table[element]]
        for element in whole:
            bits = table[element]
            if self.need >= bits.bit_count():
                self.take(bits, f"whole {kind} {element}")

    def take_full_numa_nodes(self) -> None:
        if self.need >= self.ix.smallest("numa"):  # else none fits: skip the order
            self._take_full(self.numa_order(), self.ix.numa_bits, "NUMA node")

    def take_full_sockets(self) -> None:
        if self.need >= self.ix.smallest("socket"):
            declared = self.ix.topology.cpus_per_socket if self.declared else 0
            self._take_full(self.socket_order(), self.ix.socket_bits, "socket", declared)

    def take_full_cores(self) -> None:
        """Whole cores in core order; stops once even the smallest core no longer fits.

        Stopping early changes nothing: the kubelet's loop would only skip the rest.
        """
        table = self.ix.core_bits
        smallest = self.ix.smallest_core
        free, need, result, trace = self.free, self.need, self.result, self.trace
        if need < smallest:
            return
        declared = self.ix.cpus_per_core if self.declared else 0
        for core in self._cores(free):
            if need < smallest:
                break
            bits = table[core]
            if (free & bits).bit_count() == declared if declared else free & bits == bits:
                size = bits.bit_count()
                if need >= size:
                    result |= bits
                    need -= size
                    if trace is not None:
                        trace.append(f"took whole core {core} (CPUs {CPUSet.from_bits(bits)})")
        self._settle(result, need)

    def take_full_uncore_caches(self) -> None:
        self._take_full(self.uncore_order(), self.ix.l3_bits, "uncore cache")

    def take_remaining_cpus(self, *, spread: bool) -> None:
        """Single CPUs in CPU order until nothing more is needed.

        Without a trace, each core's (spread: socket's) free CPUs are taken as one batch,
        the lowest ones when fewer are needed: the same CPUs, in the same order.
        """
        if self.trace is not None:
            for cpu in self._cpus(self.free, spread=spread):
                self.take(1 << cpu, f"CPU {cpu}")
                if self.satisfied():
                    return
            return
        ix = self.ix
        free, need, result = self.free, self.need, self.result
        if spread:
            chunks = (free & ix.socket_bits[socket] for socket in self.socket_order())
        else:
            chunks = (free & ix.core_bits[core] for core in self._cores(free))
        for chunk in chunks:
            size = chunk.bit_count()
            if size < need:
                result |= chunk
                need -= size
                continue
            bits = chunk
            while need > 0:  # the lowest CPUs of this chunk finish the request
                lowest = bits & -bits
                result |= lowest
                bits ^= lowest
                need -= 1
            break
        self._settle(result, need)

    # --- uncore cache alignment (prefer-align-cpus-by-uncorecache) ----------------------

    def take_uncore_caches(self, *, odd: bool = True) -> None:
        """Whole uncore caches while a cache's worth is needed, else one cache that fits.

        The size test uses the declared ``num_cpus // num_uncore_caches`` (the kubelet's
        ``CPUsPerUncore``), not the cache's real size. ``odd``: the partial step of 1.34 on.
        """
        per_uncore = self.ix.cpus_per_uncore
        for uncore in self.uncore_order():
            if self.need >= per_uncore:
                self.take_full_uncore_caches()
            if self.satisfied():
                return
            self.take_partial_uncore(uncore, odd=odd)
            if self.satisfied():
                return

    def take_partial_uncore(self, uncore: int, *, odd: bool = True) -> None:
        """Take the lowest-numbered cores of one cache if they give exactly what is needed.

        From 1.34 (``odd``): ``ceil(need / CPUs-per-core)`` cores, one thread left out when
        that is one too many for an odd request. Before (1.32, 1.33): ``need //
        CPUs-per-core`` cores, so an odd request (with SMT) never fits.
        """
        ix, free = self.ix, self.free
        per_core = ix.cpus_per_core
        if odd:
            cores_needed = -(-self.need // per_core) if per_core else self.need
        else:
            cores_needed = self.need // per_core if per_core else self.need
        cores = [core for core, bits in ix.l3_cores.get(uncore, ()) if free & bits]
        bits = 0
        for core in cores[:cores_needed]:
            bits |= free & ix.core_bits[core]
        if odd and self.need % 2 != 0 and per_core > 1 and bits.bit_count() > self.need:
            bits &= ~(1 << (bits.bit_length() - 1))
        if bits.bit_count() == self.need:
            self.take(bits, f"part of uncore cache {uncore}")
