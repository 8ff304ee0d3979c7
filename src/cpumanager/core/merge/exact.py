"""The kubelet's hint merge, step for step: the reference every faster merge is tested against.

1. **Filter** (``filterProvidersHints``): providers in registration order, resources in
   mapping order. A provider with no answer (None or an empty mapping) contributes
   ``[{nil, preferred}]``; a resource with no preference ``[{nil, preferred}]``; a resource
   with no placement (empty list) ``[{nil, not preferred}]``; otherwise its hints.
   ``single-numa-node`` then keeps only preferred hints that are nil or name one node.
2. **Cross product** of the lists, first list outermost. Each permutation merges
   (``mergePermutation``) into ``default AND every non-nil mask``; it is preferred iff every
   hint is preferred *and* every non-nil mask equals the first one.
3. **Compare** (``HintMerger.compare``): empty merged masks are skipped; preferred beats
   non-preferred; two preferred hints go to ``better``; two non-preferred ones are judged
   against ``bnp`` (max over lists of the count of the list's narrowest non-nil mask): count
   == bnp first, then counts below bnp (larger first), then counts above (smaller first),
   ties to ``better``. ``better`` keeps the current hint on equal masks, else the narrower
   mask (fewer nodes, then numerically smaller) or, with prefer-closest outside
   single-numa-node, fewer nodes, then lower average distance, then numerically smaller.
4. No candidate at all: ``{default, not preferred}``. ``single-numa-node`` rewrites a result
   equal to the default mask as ``{nil, preferred-flag}``; ``none`` returns ``{nil, false}``.
   Admission: none and best-effort always; restricted and single-numa-node iff preferred.

Implicit hint sources (:class:`~cpumanager.core.hints.source.HintSource`) are expanded with
``explicit()`` first, so this module sees exactly the lists the kubelet would.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import product
from typing import Literal, TypeAlias

from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.hints.hint import NO_PREFERENCE, NoPreference, TopologyHint
from cpumanager.core.hints.source import HintSource
from cpumanager.core.merge.options import NUMAInfo

__all__ = [
    "AnyProviderHints",
    "AnyResourceHints",
    "FilteredList",
    "HintMerger",
    "RawHint",
    "filter_providers_hints",
    "filter_single_numa_hints",
    "max_of_min_affinity_counts",
    "merge_exact",
    "merge_permutation",
    "min_affinity_count",
    "to_hint",
]

# One resource's answer as the merges accept it: no preference, explicit hints, or a rule.
AnyResourceHints: TypeAlias = (
    Literal[NoPreference.NO_PREFERENCE] | tuple[TopologyHint, ...] | HintSource
)
# One provider's answer; None or an empty mapping = no preference for anything.
AnyProviderHints: TypeAlias = Mapping[str, AnyResourceHints] | None
# Internal hint: (mask bits or None for nil, preferred).
RawHint: TypeAlias = tuple[int | None, bool]
# One filtered list, tagged with the resource it came from (provider index, resource name).
FilteredList: TypeAlias = tuple[tuple[int, str], list[RawHint]]

_NIL_PREFERRED: RawHint = (None, True)
_NIL_NOT_PREFERRED: RawHint = (None, False)


def _raw(hint: TopologyHint) -> RawHint:
    return (None if hint.mask is None else hint.mask.bits, hint.preferred)


def to_hint(raw: RawHint) -> TopologyHint:
    """Back from the internal pair to a :class:`TopologyHint`."""
    bits, preferred = raw
    return TopologyHint(None if bits is None else NUMAMask.from_bits(bits), preferred)


def filter_providers_hints(
    providers: Sequence[AnyProviderHints], *, expand: bool = True
) -> list[FilteredList]:
    """The kubelet's ``filterProvidersHints``: one list per resource, tagged by origin.

    With ``expand=False`` implicit sources are left as they are (as an empty list tagged by
    the caller's own bookkeeping); the fast merge uses that to avoid 2^N expansions.
    """
    lists: list[FilteredList] = []
    for index, provider in enumerate(providers):
        if not provider:
            lists.append(((index, ""), [_NIL_PREFERRED]))
            continue
        for resource, hints in provider.items():
            tag = (index, resource)
            if hints is NO_PREFERENCE:
                lists.append((tag, [_NIL_PREFERRED]))
            elif isinstance(hints, tuple):
                if not hints:
                    lists.append((tag, [_NIL_NOT_PREFERRED]))
                else:
                    lists.append((tag, [_raw(hint) for hint in hints]))
            elif expand:
                explicit = hints.explicit()
                lists.append((tag, [_raw(h) for h in explicit] or [_NIL_NOT_PREFERRED]))
            else:
                lists.append((tag, []))
    return lists


def filter_single_numa_hints(lists: Sequence[Sequence[RawHint]]) -> list[list[RawHint]]:
    """Keep preferred hints that are nil or name exactly one node (order preserved)."""
    return [
        [
            (bits, preferred)
            for bits, preferred in hints
            if preferred and (bits is None or bits.bit_count() == 1)
        ]
        for hints in lists
    ]


def min_affinity_count(counts: Iterable[int]) -> int:
    """A list's smallest mask count, by the kubelet's running rule (``maxOfMinAffinityCounts``).

    The running minimum starts at 0 and 0 means "unset", so an empty (non-nil) mask only
    counts when no later mask follows it: [0, 2] gives 2, [2, 0] gives 0.
    """
    low = 0
    for count in counts:
        if low == 0 or count < low:
            low = count
    return low


def max_of_min_affinity_counts(lists: Sequence[Sequence[RawHint]]) -> int:
    """bnp: the largest, over lists, of the node count of the list's narrowest non-nil mask."""
    best = 0
    for hints in lists:
        best = max(
            best, min_affinity_count(bits.bit_count() for bits, _ in hints if bits is not None)
        )
    return best


def merge_permutation(default_bits: int, permutation: Sequence[RawHint]) -> RawHint:
    """AND of the masks (nil = default); preferred iff all preferred and all masks equal."""
    preferred = True
    merged = default_bits
    first: int | None = None
    for bits, hint_preferred in permutation:
        if bits is not None:
            if first is None:
                first = bits
            elif bits != first:
                preferred = False
            merged &= bits
        if not hint_preferred:
            preferred = False
    return (merged, preferred)


@dataclass(frozen=True, slots=True)
class HintMerger:
    """The kubelet's ``HintMerger``: compare rules over filtered lists."""

    numa: NUMAInfo
    lists: tuple[tuple[RawHint, ...], ...]
    closest: bool
    bnp: int

    @classmethod
    def build(
        cls, numa: NUMAInfo, lists: Sequence[Sequence[RawHint]], *, closest: bool
    ) -> HintMerger:
        frozen = tuple(tuple(hints) for hints in lists)
        return cls(numa, frozen, closest, max_of_min_affinity_counts(frozen))

    def better(self, current: int, candidate: int) -> bool:
        """Whether ``candidate`` replaces ``current`` (``CompareNUMAAffinityMasks``)."""
        if current == candidate:
            return False
        cur_count, cand_count = current.bit_count(), candidate.bit_count()
        if cur_count != cand_count or not self.closest:
            return (cand_count, candidate) < (cur_count, current)
        cur_avg = self.numa.average_distance(current)
        cand_avg = self.numa.average_distance(candidate)
        if cur_avg == cand_avg:
            return candidate < current
        return cand_avg < cur_avg

    def compare(self, current: RawHint | None, candidate: RawHint) -> RawHint | None:
        """The kubelet's ``compare``: which of the two hints is kept."""
        cand_bits, cand_pref = candidate
        assert cand_bits is not None
        cand_count = cand_bits.bit_count()
        if cand_count == 0:
            return current
        if current is None:
            return candidate
        cur_bits, cur_pref = current
        assert cur_bits is not None
        if cur_pref != cand_pref:
            return candidate if cand_pref else current
        cur_count, bnp = cur_bits.bit_count(), self.bnp
        if not cur_pref and cur_count <= bnp:
            if cur_count == bnp and cand_count != bnp:
                return current
            if cur_count < bnp:
                if cand_count > bnp:
                    return current
                if cand_count == bnp or cand_count > cur_count:
                    return candidate
                if cand_count < cur_count:
                    return current
        # Both preferred, or the cases the kubelet hands to CompareNUMAAffinityMasks.
        return candidate if self.better(cur_bits, cand_bits) else current

    def merge(self) -> RawHint:
        """Walk the whole cross product (first list outermost)."""
        default = self.numa.default_bits
        best: RawHint | None = None
        for permutation in product(*self.lists):
            best = self.compare(best, merge_permutation(default, permutation))
        return best if best is not None else (default, False)


def merge_exact(
    policy: str,
    numa: NUMAInfo,
    providers: Sequence[AnyProviderHints],
    *,
    prefer_closest: bool = False,
) -> tuple[TopologyHint, bool]:
    """The kubelet's ``Policy.Merge`` for one container (or one pod): (hint, admit)."""
    if policy == "none":
        return TopologyHint(None, False), True
    lists = [hints for _tag, hints in filter_providers_hints(providers)]
    if policy == "single-numa-node":
        lists = filter_single_numa_hints(lists)
    closest = prefer_closest and policy != "single-numa-node"
    bits, preferred = HintMerger.build(numa, lists, closest=closest).merge()
    if policy == "single-numa-node" and bits == numa.default_bits:
        return TopologyHint(None, preferred), preferred
    hint = to_hint((bits, preferred))
    return hint, (True if policy == "best-effort" else preferred)
