"""Why a merge came out as it did, as data: per resource its hints, and who blocked whom.

For every resource (in the kubelet's filter order) we record what the provider said (no
preference, no placement, explicit hints, or an implicit rule), the masks it prefers (the
narrowest few), whether it prefers the merged mask, and one plain sentence. A resource that
does not prefer the merged mask is *blocking*: it is why the hint is not preferred (and so
why restricted / single-numa-node reject); the summary of a non-preferred result quotes every
resource that constrains placement, since it is their combination that has no common
preferred set. A resource that prefers a narrower mask than the
merged one was *widened* by the others. The summary joins the blocking sentences, e.g.
``nvidia.com/gpu: preferred only on node 1; cpu: preferred only on nodes 0,2``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.hints.hint import NO_PREFERENCE, TopologyHint
from cpumanager.core.hints.source import HintSource, iter_bits
from cpumanager.core.merge.exact import AnyProviderHints
from cpumanager.core.merge.options import NUMAInfo

__all__ = ["MergeExplanation", "ResourceExplanation", "explain_merge"]

Kind = Literal["no-preference", "no-placement", "hints", "rule"]
_SHOWN = 4


@dataclass(frozen=True, slots=True)
class ResourceExplanation:
    """One resource's say in the merge."""

    provider: int
    resource: str
    kind: Kind
    hints: tuple[TopologyHint, ...]
    rule: str
    preferred: tuple[NUMAMask, ...]
    prefers_result: bool
    widened: bool
    reason: str

    @property
    def label(self) -> str:
        return self.resource or f"provider {self.provider}"

    def to_json(self) -> dict[str, object]:
        return {
            "provider": self.provider,
            "resource": self.resource,
            "kind": self.kind,
            "hints": [hint.to_json() for hint in self.hints],
            "rule": self.rule,
            "preferred": [list(mask) for mask in self.preferred],
            "prefers_result": self.prefers_result,
            "widened": self.widened,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class MergeExplanation:
    """The whole story of one merge."""

    policy: str
    hint: TopologyHint
    admit: bool
    resources: tuple[ResourceExplanation, ...]
    blocking: tuple[str, ...]
    widened: tuple[str, ...]
    summary: str

    def lines(self) -> tuple[str, ...]:
        return (*(res.reason for res in self.resources), self.summary)

    def to_json(self) -> dict[str, object]:
        return {
            "policy": self.policy,
            "hint": self.hint.to_json(),
            "admit": self.admit,
            "resources": [res.to_json() for res in self.resources],
            "blocking": list(self.blocking),
            "widened": list(self.widened),
            "summary": self.summary,
        }


def _nodes_text(mask: NUMAMask) -> str:
    return f"node {mask}" if len(mask) == 1 else f"nodes {mask}"


def _preferred_text(masks: Sequence[NUMAMask], total: int) -> str:
    if not masks:
        return "no preferred NUMA set"
    if all(len(mask) == 1 for mask in masks) and total == len(masks):
        union = NUMAMask.from_bits(sum(mask.bits for mask in masks))
        return f"preferred only on {_nodes_text(union)}"
    shown = " or ".join("{" + str(mask) + "}" for mask in masks)
    more = f" (and {total - len(masks)} more)" if total > len(masks) else ""
    return f"preferred on {shown}{more}"


def _source_preferred(src: HintSource, limit: int) -> tuple[list[NUMAMask], int]:
    """A few narrowest preferred masks of a rule, without enumerating 2^N masks."""
    nodes = list(iter_bits(src.universe))
    found: list[NUMAMask] = []
    for size in src.preferred_sizes():
        if size == 1:
            found += [NUMAMask.of(node) for node in nodes if src.preferred(1 << node)]
        elif size == len(nodes) and src.preferred(src.universe):
            found.append(NUMAMask.from_bits(src.universe))
        if found:
            break
    return found[:limit], len(found)


def _explain_resource(
    provider: int, resource: str, hints: object, result_bits: int
) -> ResourceExplanation:
    name = resource or f"provider {provider}"
    if hints is NO_PREFERENCE or not resource:
        return ResourceExplanation(
            provider, resource, "no-preference", (), "", (), True, False,
            f"{name}: no preference (any NUMA node)",
        )  # fmt: skip
    if isinstance(hints, tuple):
        if not hints:
            return ResourceExplanation(
                provider, resource, "no-placement", (), "", (), False, False,
                f"{name}: cannot be placed on any NUMA node (no hint fits)",
            )  # fmt: skip
        preferred = sorted(
            {h.mask for h in hints if h.preferred and h.mask is not None},
            key=NUMAMask.narrow_key,
        )
        nil_preferred = any(h.preferred and h.mask is None for h in hints)
        prefers = nil_preferred or any(m.bits == result_bits for m in preferred)
        narrowest = preferred[0].count() if preferred else None
        text = _preferred_text(preferred[:_SHOWN], len(preferred))
        if nil_preferred:
            text = "preferred anywhere" if not preferred else text + ", or anywhere"
        return ResourceExplanation(
            provider, resource, "hints", hints, "", tuple(preferred[:_SHOWN]), prefers,
            narrowest is not None and prefers and narrowest < result_bits.bit_count(),
            f"{name}: {text}",
        )  # fmt: skip
    assert isinstance(hints, HintSource)
    masks, total = _source_preferred(hints, _SHOWN)
    prefers = hints.preferred(result_bits)
    rule = hints.describe()
    if hints.min_size() == 0:
        reason = f"{name}: cannot be placed on any NUMA node ({rule})"
    else:
        sizes = hints.preferred_sizes()
        head = _preferred_text(masks, total) if masks else f"preferred on any {sizes[0]} node(s)"
        reason = f"{name}: {head} ({rule})"
    narrowest = min(hints.preferred_sizes(), default=None)
    return ResourceExplanation(
        provider, resource, "rule", (), rule, tuple(masks), prefers,
        narrowest is not None and prefers and narrowest < result_bits.bit_count(), reason,
    )  # fmt: skip


def explain_merge(
    policy: str,
    numa: NUMAInfo,
    providers: Sequence[AnyProviderHints],
    *,
    hint: TopologyHint,
    admit: bool,
) -> MergeExplanation:
    """Explain an already computed merge result (see the module docstring)."""
    result_bits = numa.default_bits if hint.mask is None else hint.mask.bits
    resources: list[ResourceExplanation] = []
    if policy != "none":
        for index, provider in enumerate(providers):
            if not provider:
                resources.append(_explain_resource(index, "", NO_PREFERENCE, result_bits))
                continue
            for resource, hints in provider.items():
                resources.append(_explain_resource(index, resource, hints, result_bits))
    blocking = tuple(res.label for res in resources if not res.prefers_result)
    widened = tuple(res.label for res in resources if res.widened)
    where = "any NUMA node" if hint.mask is None else _nodes_text(hint.mask)
    if policy == "none":
        summary = "policy none: hints are not consulted; the pod is admitted without alignment"
    elif hint.preferred:
        summary = f"every resource prefers {where}: merged hint {where}, preferred"
        if widened:
            summary += f" (wider than {', '.join(widened)} alone would need)"
    else:
        why = "; ".join(res.reason for res in resources if res.kind != "no-preference")
        summary = f"no NUMA set is preferred by every resource ({why}): merged hint {where}, "
        summary += "not preferred; "
        summary += "admitted anyway (best-effort)" if admit else f"{policy} rejects the pod"
    return MergeExplanation(policy, hint, admit, tuple(resources), blocking, widened, summary)
