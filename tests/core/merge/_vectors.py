"""The kubelet's merge test tables (ported into tests/data/merge_vectors.json) as Python values."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.hints.hint import NO_PREFERENCE, TopologyHint
from cpumanager.core.merge.exact import AnyProviderHints, AnyResourceHints
from cpumanager.core.merge.options import NUMAInfo

DATA = json.loads((Path(__file__).resolve().parents[2] / "data" / "merge_vectors.json").read_text())


def hint(raw: dict[str, Any] | None) -> TopologyHint:
    assert raw is not None
    nodes = raw["numa"]
    return TopologyHint(None if nodes is None else NUMAMask(nodes), raw["preferred"])


def resource_hints(raw: list[dict[str, Any]] | None) -> AnyResourceHints:
    return NO_PREFERENCE if raw is None else tuple(hint(h) for h in raw)


def numa_info(name: str) -> NUMAInfo:
    info = DATA["numa_infos"][name]
    rows = {int(node): row for node, row in info["distances"].items()}
    return NUMAInfo.of(info["nodes"], rows)


@dataclass(frozen=True)
class MergeCase:
    name: str
    policy: str
    numa: NUMAInfo
    prefer_closest: bool
    providers: list[AnyProviderHints]
    expected: TopologyHint
    admit: bool


def merge_cases() -> list[MergeCase]:
    cases = []
    for index, raw in enumerate(DATA["merge_cases"]):
        providers: list[AnyProviderHints] = [
            None if p is None else {res: resource_hints(h) for res, h in p.items()}
            for p in raw["providers_hints"]
        ]
        cases.append(
            MergeCase(
                name=f"{index:03d}-{raw['policy']}-{raw['description']}",
                policy=raw["policy"],
                numa=numa_info(raw["numa_info"]),
                prefer_closest=raw["policy_options"].get("prefer-closest-numa-nodes") == "true",
                providers=providers,
                expected=hint(raw["expected_hint"]),
                admit=raw["expected_admit"],
            )
        )
    return cases


MERGE_CASES = merge_cases()
