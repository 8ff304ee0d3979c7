"""Topology Manager policies: one entry point for none, best-effort, restricted, single-numa-node.

:func:`merge` takes the providers' answers for one container (container scope) or one pod
(pod scope) and returns the merged hint and the admit decision. It runs the fast merge by
default; ``method="exact"`` walks the kubelet's cross product instead (same answer, for
checking and for small inputs). ``explain=True`` adds the explanation as data.

Admission rules (kubelet): ``none`` and ``best-effort`` always admit; ``restricted`` and
``single-numa-node`` admit iff the merged hint is preferred. ``none`` never consults the
providers and returns ``{nil, not preferred}``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from cpumanager.core.hints.hint import NO_PREFERENCE, TopologyHint
from cpumanager.core.kept import kept_answer
from cpumanager.core.merge.exact import (
    AnyProviderHints,
    RawHint,
    filter_single_numa_hints,
    merge_exact,
    min_affinity_count,
    to_hint,
)
from cpumanager.core.merge.exact import HintMerger as ExactMerger
from cpumanager.core.merge.explain import MergeExplanation, explain_merge
from cpumanager.core.merge.fast import DEFAULT_EXPAND_LIMIT, FastStats, merge_fast
from cpumanager.core.merge.options import (
    POLICIES,
    NUMAInfo,
    TopologyManagerConfig,
    TopologyPolicyOptions,
)
from cpumanager.errors import ConfigError

__all__ = ["MergeResult", "merge", "merge_hints"]

Method = Literal["fast", "exact"]

# Longest cross product (after neutral lists are dropped) walked as the kubelet walks it.
SMALL_WALK = 32


@dataclass(frozen=True, slots=True)
class MergeResult:
    """The merged hint, the admit decision, and (on request) why."""

    hint: TopologyHint
    admit: bool
    policy: str
    method: Method
    explanation: MergeExplanation | None = None

    def to_json(self) -> dict[str, object]:
        return {"hint": self.hint.to_json(), "admit": self.admit}


def merge(
    policy: str,
    numa: NUMAInfo,
    providers: Sequence[AnyProviderHints],
    *,
    options: TopologyPolicyOptions | None = None,
    method: Method = "fast",
    explain: bool = False,
    expand_limit: int = DEFAULT_EXPAND_LIMIT,
) -> MergeResult:
    """Merge the providers' hints under ``policy`` (see the module docstring)."""
    if method not in ("fast", "exact"):
        msg = f"unknown merge method {method!r}; use 'fast' or 'exact'"
        raise ConfigError(msg)
    if policy not in POLICIES:
        msg = f'unknown policy: "{policy}"; use one of: {", ".join(POLICIES)}'
        raise ConfigError(msg)
    opts = options or TopologyPolicyOptions()
    closest = opts.prefer_closest_numa
    if closest and policy != "single-numa-node":
        NUMAInfo.of(numa.nodes, numa.distances, require_distances=True)
    small = None if method == "exact" else _merge_small(policy, numa, providers, closest=closest)
    if small is not None and not explain:
        return small
    if small is not None:
        hint, admit = small.hint, small.admit
    elif method == "exact":
        hint, admit = merge_exact(policy, numa, providers, prefer_closest=closest)
    else:
        hint, admit = merge_fast(
            policy,
            numa,
            providers,
            prefer_closest=closest,
            expand_limit=expand_limit,
            stats=FastStats(),
        )
    explanation = None
    if explain:
        explanation = explain_merge(policy, numa, providers, hint=hint, admit=admit)
    return MergeResult(hint, admit, policy, method, explanation)


# _merge_small's answers by (policy, default mask, the lists as plain pairs, and with
# closest the nodes and distances): the walk is a pure function of them (distances are
# read only with closest). Nodes of one shape ask the same few merges over and over
# (the extender checks thousands of nodes), so a bounded table of answers saves the walk.
_SMALL_ANSWERS: dict[tuple[object, ...], MergeResult | None] = {}
SMALL_ANSWERS_LIMIT = 4096


def _merge_small(
    policy: str, numa: NUMAInfo, providers: Sequence[AnyProviderHints], *, closest: bool
) -> MergeResult | None:
    """The kubelet's walk itself when it is short (the fast merge's front door).

    A list holding only a preferred nil hint (a provider or resource with no preference) is
    neutral: it leaves every permutation's merged mask and flag unchanged and counts 0 in
    bnp. Without those lists the cross product of the usual admission (one CPU list, maybe
    a memory one) has a few dozen permutations, which the kubelet's own walk (``exact.py``)
    goes through faster than the fast merge sets up. None: a rule, or a longer walk.
    Answers (fast-method results without explanation) are kept in a bounded table keyed
    by everything the walk reads.
    """
    if policy == "none":
        return None
    lists: list[tuple[RawHint, ...]] = []
    for provider in providers:
        for hints in (provider or {}).values():
            if hints is NO_PREFERENCE:
                continue
            if not isinstance(hints, tuple):
                return None  # a rule: the fast merge searches it
            raw = tuple([(None if h.mask is None else h.mask.bits, h.preferred) for h in hints])
            lists.append(raw or ((None, False),))
    where = (numa.nodes, tuple(sorted(numa.distances.items()))) if closest else None
    key = (policy, numa.default_bits, where, *lists)

    def walk() -> MergeResult | None:
        walked = _walk_small(policy, numa, lists, closest=closest)
        return None if walked is None else MergeResult(*walked, policy, "fast")

    return kept_answer(_SMALL_ANSWERS, key, walk, SMALL_ANSWERS_LIMIT)


def _walk_small(
    policy: str, numa: NUMAInfo, lists: Sequence[Sequence[RawHint]], *, closest: bool
) -> tuple[TopologyHint, bool] | None:
    if policy == "single-numa-node":
        lists = filter_single_numa_hints(lists)
    bnp = 0
    walk = 1
    for listed in lists:
        walk *= len(listed)
        if walk > SMALL_WALK:
            return None
        counts = (bits.bit_count() for bits, _ in listed if bits is not None)
        bnp = max(bnp, min_affinity_count(counts))
    merger = ExactMerger(numa, tuple(tuple(listed) for listed in lists), closest, bnp)
    if len(lists) == 1:  # each permutation is one hint: its mask (nil: default) and flag
        default = numa.default_bits
        best: RawHint | None = None
        for bits, pref in lists[0]:
            best = merger.compare(best, (default if bits is None else default & bits, pref))
        bits, preferred = best if best is not None else (default, False)
    else:
        bits, preferred = merger.merge()
    if policy == "single-numa-node" and bits == numa.default_bits:
        return TopologyHint(None, preferred), preferred
    return to_hint((bits, preferred)), (True if policy == "best-effort" else preferred)


def merge_hints(
    config: TopologyManagerConfig,
    numa_nodes: Sequence[int],
    providers: Sequence[AnyProviderHints],
    *,
    distances: Mapping[int, Sequence[int] | Mapping[int, int]] | None = None,
    method: Method = "fast",
    explain: bool = True,
) -> MergeResult:
    """:func:`merge` for a validated configuration (what the Topology Manager calls)."""
    numa = config.numa
    if numa is None or (distances is not None and not numa.distances):
        numa = NUMAInfo.of(numa_nodes, distances)
    return merge(
        config.policy, numa, providers, options=config.options, method=method, explain=explain
    )
