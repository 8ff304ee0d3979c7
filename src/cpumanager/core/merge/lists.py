"""The fast merge's inputs: each provider's hints as an explicit list or an implicit source.

Explicit lists are reduced to what the merge reads (options clipped to the default mask,
preferred masks, a preferred nil, the smallest count); rules stay rules, except that under
single-numa-node a rule is listed as its single-node hints, and a rule with extra hints is
kept as a pair (family, extras) for the solver to try both ways.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from cpumanager.core.hints.source import HintSource, is_hint_source, iter_bits
from cpumanager.core.merge.exact import (
    AnyProviderHints,
    RawHint,
    filter_providers_hints,
    min_affinity_count,
)
from cpumanager.core.merge.options import NUMAInfo
from cpumanager.errors import ConfigError

__all__ = ["Explicit", "Union", "normalize"]


@dataclass(slots=True)
class Explicit:
    hints: list[RawHint]
    min_count: int = 0
    nil_preferred: bool = False
    preferred: set[int] = field(default_factory=set)
    options: list[int] = field(default_factory=list)

    @classmethod
    def build(cls, hints: list[RawHint], default: int) -> Explicit:
        counts = [bits.bit_count() for bits, _ in hints if bits is not None]
        min_count = min_affinity_count(counts)
        options: set[int] = set()
        preferred: set[int] = set()
        nil_preferred = False
        for bits, pref in hints:
            if bits is None:
                options.add(default)
                nil_preferred = nil_preferred or pref
            else:
                if pref:
                    preferred.add(bits)
                if bits & default:
                    options.add(bits & default)
        options.discard(0)
        return cls(hints, min_count, nil_preferred, preferred, sorted(options))


def _single_numa(raw: list[RawHint]) -> list[RawHint]:
    return [(bits, pref) for bits, pref in raw if pref and (bits is None or bits.bit_count() == 1)]


Union = tuple[HintSource, list[RawHint]]  # a rule's family, and its extra hints


def normalize(
    policy: str, numa: NUMAInfo, providers: Sequence[AnyProviderHints]
) -> tuple[list[Explicit], list[HintSource], list[Union]]:
    default = numa.default_bits
    sources = [
        hints
        for provider in providers
        for hints in (provider or {}).values()
        if is_hint_source(hints)
    ]
    explicit: list[Explicit] = []
    implicit: list[HintSource] = []
    unions: list[Union] = []
    source_iter = iter(sources)
    for (_index, resource), hints in filter_providers_hints(providers, expand=False):
        raw: list[RawHint] = hints
        if not hints:
            src = next(source_iter)
            extra: list[RawHint] = [
                (hint.mask.bits, hint.preferred) for hint in src.extras() if hint.mask is not None
            ]
            reach = src.universe
            for bits, _preferred in extra:
                reach |= bits or 0
            if reach & ~default:
                msg = (
                    f"hint source for {resource!r} uses NUMA nodes outside the machine's "
                    f"{sorted(numa.nodes)}; build it from the same machine"
                )
                raise ConfigError(msg)
            if policy == "single-numa-node":
                raw = [(1 << n, True) for n in iter_bits(src.universe) if src.preferred(1 << n)]
                raw += extra
            elif src.min_size() == 0:
                raw = extra or [(None, False)]
            elif extra:
                unions.append((src, extra))
                continue
            else:
                implicit.append(src)
                continue
        if policy == "single-numa-node":
            raw = _single_numa(raw)
        explicit.append(Explicit.build(raw, default))
    return explicit, implicit, unions
