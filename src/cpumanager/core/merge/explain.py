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

Who blocks a non-preferred result: first the resources that could not get a hint the policy
accepts *even on their own* (no preferred hint at all, or, under single-numa-node, no
preferred single-node hint); only when every resource could be satisfied alone is the
blame shared by those that do not prefer the merged mask (their combination conflicts).

Numbers: when a resource's hints come from an additive-capacity rule
(:class:`CapacityHintSource`, given as the hints or as ``details`` next to an explicit
list), the sentence says how much is needed and what is free where, e.g.
``cpu: ...; 12 CPUs needed, free per node 0:4, 1:6 - no single node has enough``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.hints.hint import NO_PREFERENCE, TopologyHint
from cpumanager.core.hints.source import CapacityHintSource, HintSource, iter_bits
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
    alone_ok: bool = True  # the policy would accept one of its hints if it were alone
    detail: str = ""  # need and free capacity per node, when the hint source knows them
    resource_label: str = ""  # the provider's name, for a provider that asked for nothing

    @property
    def label(self) -> str:
        return self.resource or self.resource_label or f"provider {self.provider}"

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
            "alone_ok": self.alone_ok,
            "detail": self.detail,
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

    def with_provider_names(self, names: Sequence[str]) -> MergeExplanation:
        """The same story with providers that asked for nothing named (``cpu``), not numbered.

        The merge sees providers by position only; the manager knows their names.
        """

        def named(res: ResourceExplanation) -> ResourceExplanation:
            if res.resource or not 0 <= res.provider < len(names):
                return res
            old, new = f"provider {res.provider}", names[res.provider]
            return replace(res, reason=res.reason.replace(old, new, 1), resource_label=new)

        resources = tuple(named(res) for res in self.resources)
        relabel = {f"provider {i}": name for i, name in enumerate(names)}
        return replace(
            self,
            resources=resources,
            blocking=tuple(relabel.get(label, label) for label in self.blocking),
            widened=tuple(relabel.get(label, label) for label in self.widened),
        )

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


def _unit_text(src: CapacityHintSource, count: int) -> str:
    """``12 CPUs`` / ``1 nvidia.com/gpu device`` (the source's unit, singular for one)."""
    unit = src.unit
    if unit.endswith(" devices"):
        unit = unit.removesuffix(" devices") + (" device" if count == 1 else " devices")
    elif count == 1 and unit.endswith("s"):
        unit = unit[:-1]
    return f"{count} {unit}"


def _free_text(src: CapacityHintSource) -> str:
    nodes = list(iter_bits(src.universe))
    free = {node: src.free.get(node, 0) for node in nodes}
    holding = [node for node in nodes if free[node] > 0]
    if not holding:
        return "nothing free on any node"
    if len(holding) == 1:
        return f"free only on node {holding[0]} ({free[holding[0]]})"
    shown = holding if len(nodes) > _SHOWN * 2 else nodes
    text = ", ".join(f"{node}:{free[node]}" for node in shown)
    if len(shown) < len(nodes):
        text += " (0 elsewhere)"
    return f"free per node {text}"


def _capacity_detail(src: CapacityHintSource) -> str:
    """How much is needed, what is free where, and what that means for placement."""
    if src.impossible:
        return "the CPUs it already holds lie outside the machine"
    text = f"{_unit_text(src, src.need)} needed"
    if src.base:
        text += f" ({src.base} already held or reusable)"
    text += f", {_free_text(src)}"
    nodes = list(iter_bits(src.universe))
    alone = [node for node in nodes if src.feasible(1 << node)]
    if src.min_size() == 0:
        total = sum(src.free.get(node, 0) for node in nodes)
        verdict = f"only {total} free on the whole machine"
        if src.required:
            verdict = f"cannot fit together with nodes {NUMAMask.from_bits(src.required)}"
    elif not alone:
        verdict = "no single node has enough"
    elif len(alone) < len(nodes):
        if len(alone) == 1 and src.free.get(alone[0], 0) == sum(src.free.values()):
            return text  # "free only on node N" already says it
        verdict = f"only {_nodes_text(NUMAMask.of(*alone))} can hold it alone"
    else:
        return text
    return f"{text} - {verdict}"


def _single_node_masks(masks: Sequence[NUMAMask]) -> list[NUMAMask]:
    return [mask for mask in masks if len(mask) == 1]


def _explain_hints(
    provider: int,
    resource: str,
    hints: tuple[TopologyHint, ...],
    result_bits: int,
    *,
    single_numa: bool,
    detail: str,
) -> ResourceExplanation:
    name = resource
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
    alone_ok = nil_preferred or bool(preferred)
    if single_numa and not nil_preferred and preferred and not _single_node_masks(preferred):
        alone_ok = False
        text += " (single-numa-node accepts only one node)"
    if not preferred and not nil_preferred:
        feasible = sorted({h.mask for h in hints if h.mask is not None}, key=NUMAMask.narrow_key)
        if feasible:
            shown = " or ".join("{" + str(mask) + "}" for mask in feasible[:_SHOWN])
            text += f"; fits only on {shown} (not preferred)"
    if detail:
        text += f"; {detail}"
    return ResourceExplanation(
        provider, resource, "hints", hints, "", tuple(preferred[:_SHOWN]), prefers,
        narrowest is not None and prefers and narrowest < result_bits.bit_count(),
        f"{name}: {text}", alone_ok, detail,
    )  # fmt: skip


def _explain_source(
    provider: int, resource: str, src: HintSource, result_bits: int, *, single_numa: bool
) -> ResourceExplanation:
    name = resource
    masks, total = _source_preferred(src, _SHOWN)
    prefers = src.preferred(result_bits)
    rule = src.describe()
    detail = _capacity_detail(src) if isinstance(src, CapacityHintSource) else ""
    nodes = list(iter_bits(src.universe))
    if src.min_size() == 0:
        reason = f"{name}: cannot be placed on any NUMA node ({rule})"
        alone_ok = False
    else:
        sizes = src.preferred_sizes()
        head = _preferred_text(masks, total) if masks else f"preferred on any {sizes[0]} node(s)"
        reason = f"{name}: {head} ({rule})"
        if single_numa:
            alone_ok = any(src.preferred(1 << node) for node in nodes)
            if not alone_ok:
                reason += "; single-numa-node accepts only one node"
        else:
            alone_ok = any(src.can_complete(0, src.universe, size) for size in sizes)
    if detail and " - " in detail:
        reason += f"; {detail.rsplit(' - ', 1)[1]}"
    narrowest = min(src.preferred_sizes(), default=None)
    return ResourceExplanation(
        provider, resource, "rule", (), rule, tuple(masks), prefers,
        narrowest is not None and prefers and narrowest < result_bits.bit_count(), reason,
        alone_ok, detail,
    )  # fmt: skip


def _explain_resource(
    provider: int,
    resource: str,
    hints: object,
    result_bits: int,
    *,
    single_numa: bool = False,
    detail: object = None,
) -> ResourceExplanation:
    name = resource or f"provider {provider}"
    if hints is NO_PREFERENCE or not resource:
        return ResourceExplanation(
            provider, resource, "no-preference", (), "", (), True, False,
            f"{name}: no preference (any NUMA node)",
        )  # fmt: skip
    numbers = _capacity_detail(detail) if isinstance(detail, CapacityHintSource) else ""
    if isinstance(hints, tuple):
        if not hints:
            text = f"{name}: cannot be placed on any NUMA node (no hint fits)"
            if numbers:
                text += f"; {numbers}"
            return ResourceExplanation(
                provider, resource, "no-placement", (), "", (), False, False, text, False,
                numbers,
            )  # fmt: skip
        return _explain_hints(
            provider, resource, hints, result_bits, single_numa=single_numa, detail=numbers
        )
    assert isinstance(hints, HintSource)
    return _explain_source(provider, resource, hints, result_bits, single_numa=single_numa)


def _blocking(
    resources: Sequence[ResourceExplanation], hint: TopologyHint
) -> tuple[ResourceExplanation, ...]:
    """Who is to blame for a non-preferred result (see the module docstring)."""
    if hint.preferred:
        return tuple(res for res in resources if not res.prefers_result)
    alone = tuple(res for res in resources if not res.alone_ok)
    if alone:
        return alone
    return tuple(res for res in resources if not res.prefers_result)


def explain_merge(
    policy: str,
    numa: NUMAInfo,
    providers: Sequence[AnyProviderHints],
    *,
    hint: TopologyHint,
    admit: bool,
    details: Mapping[str, object] | None = None,
) -> MergeExplanation:
    """Explain an already computed merge result (see the module docstring).

    ``details`` optionally maps a resource to a hint *rule* describing the same hints as
    its explicit list (e.g. the CPU manager's :class:`CapacityHintSource`); it only adds
    numbers to the sentences and never changes the merge.
    """
    result_bits = numa.default_bits if hint.mask is None else hint.mask.bits
    resources: list[ResourceExplanation] = []
    single_numa = policy == "single-numa-node"
    extra = details or {}
    if policy != "none":
        for index, provider in enumerate(providers):
            if not provider:
                resources.append(_explain_resource(index, "", NO_PREFERENCE, result_bits))
                continue
            for resource, hints in provider.items():
                resources.append(
                    _explain_resource(
                        index,
                        resource,
                        hints,
                        result_bits,
                        single_numa=single_numa,
                        detail=extra.get(resource),
                    )
                )
    blockers = _blocking(resources, hint)
    blocking = tuple(res.label for res in blockers)
    widened = tuple(res.label for res in resources if res.widened)
    where = "any NUMA node" if hint.mask is None else _nodes_text(hint.mask)
    verdict = "admitted anyway (best-effort)" if admit else f"{policy} rejects the pod"
    if policy == "none":
        summary = "policy none: hints are not consulted; the pod is admitted without alignment"
    elif hint.preferred:
        summary = f"every resource prefers {where}: merged hint {where}, preferred"
        if widened:
            summary += f" (wider than {', '.join(widened)} alone would need)"
    elif blockers and not all(res.alone_ok for res in blockers):
        why = "; ".join(res.reason for res in blockers)
        summary = f"blocked by {why}: merged hint {where}, not preferred; {verdict}"
    else:
        why = "; ".join(res.reason for res in resources if res.kind != "no-preference")
        summary = f"no NUMA set is preferred by every resource ({why}): merged hint {where}, "
        summary += f"not preferred; {verdict}"
    return MergeExplanation(policy, hint, admit, tuple(resources), blocking, widened, summary)
