"""Admission scopes on their own: which scope the configuration picks, what each asks the
providers, and when the declared ``*_hint_details`` hooks are consulted.

Admission through the scopes by the topology manager is in test_topology_manager.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pytest

from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.hints.hint import TopologyHint
from cpumanager.core.ids import ContainerName, PodUID
from cpumanager.core.merge.exact import AnyProviderHints
from cpumanager.core.merge.options import build_topology_manager_config
from cpumanager.core.workload import Container, Pod
from cpumanager.manager.scopes import (
    AdmissionScope,
    ContainerScope,
    HintMerger,
    HintStore,
    NoneScope,
    PodScope,
    build_scope,
)
from cpumanager.ports import HintProvider
from tests.builders import container, pod

NODES = (0, 1)


def hint(*nodes: int, preferred: bool = True) -> TopologyHint:
    return TopologyHint(NUMAMask.of(*nodes), preferred)


@dataclass
class Fixed:
    """The same answer for every container and for the pod; counts the detail requests."""

    provider_name: str
    answer: AnyProviderHints = field(default_factory=dict)
    details: Mapping[str, object] = field(default_factory=dict)
    asked_details: list[str] = field(default_factory=list)

    def topology_hints(self, pod: Pod, container: Container) -> AnyProviderHints:
        return self.answer

    def pod_topology_hints(self, pod: Pod) -> AnyProviderHints:
        return self.answer

    def hint_details(self, pod: Pod, container: Container) -> Mapping[str, object]:
        self.asked_details.append(container.name)
        return self.details

    def pod_hint_details(self, pod: Pod) -> Mapping[str, object]:
        self.asked_details.append("(pod)")
        return self.details

    def allocate(self, pod: Pod, container: Container) -> object:
        return container.name


def scope(policy: str, kind: str, *providers: HintProvider) -> AdmissionScope:
    config = build_topology_manager_config(policy=policy, scope=kind, numa_nodes=NODES)
    return build_scope(
        config,
        merger=HintMerger(config=config, numa_ids=NODES),
        providers=list(providers),
        hints=HintStore(),
    )


@pytest.mark.parametrize(
    ("policy", "kind", "expected"),
    [
        ("none", "container", NoneScope),
        ("none", "pod", NoneScope),  # the none policy ignores the configured scope
        ("best-effort", "container", ContainerScope),
        ("restricted", "pod", PodScope),
        ("single-numa-node", "pod", PodScope),
    ],
)
def test_the_configuration_picks_the_kubelets_scope(
    policy: str, kind: str, expected: type[AdmissionScope]
) -> None:
    built = scope(policy, kind)
    assert type(built) is expected
    assert built.name == expected.name


def test_container_scope_accumulates_hints_in_registration_order() -> None:
    a = Fixed("a", {"x": (hint(0),)})
    b = Fixed("b", {"y": (hint(0), hint(1))})
    built = scope("best-effort", "container", a, b)
    assert isinstance(built, ContainerScope)
    app = container("app", "1")
    p = pod("p", app)
    assert built.accumulate_provider_hints(p, app) == (("a", a.answer), ("b", b.answer))
    decision = built.calculate_affinity(p, app)
    assert (decision.container, decision.merged, decision.admitted) == ("app", hint(0), True)


def test_pod_scope_calculates_one_affinity_for_the_pod() -> None:
    a = Fixed("a", {"x": (hint(1),)})
    built = scope("restricted", "pod", a)
    assert isinstance(built, PodScope)
    p = pod("p", container("app", "1"), container("log", "1"))
    assert built.accumulate_provider_hints(p) == (("a", a.answer),)
    decision = built.calculate_affinity(p)
    assert (decision.container, decision.merged, decision.admitted) == ("(pod)", hint(1), True)


def test_allocate_aligned_resources_asks_every_provider() -> None:
    built = scope("none", "container", Fixed("a"), Fixed("b"))
    assert built.allocate_aligned_resources(pod("p"), container("app")) == {
        "a/app": "app",
        "b/app": "app",
    }


@pytest.mark.parametrize("kind", ["container", "pod"])
def test_details_are_asked_only_to_explain_a_non_preferred_merge(kind: str) -> None:
    # Preferred and not widened: nothing to explain, nobody is asked.
    content = Fixed("a", {"x": (hint(0),)})
    scope("best-effort", kind, content).admit(pod("p", container("app", "1")))
    assert content.asked_details == []
    # Two providers that cannot agree: the merge is not preferred, both are asked.
    left = Fixed("left", {"x": (hint(0),)})
    right = Fixed("right", {"y": (hint(1),)})
    result = scope("best-effort", kind, left, right).admit(pod("p", container("app", "1")))
    assert result.admitted
    assert not result.decisions[0].merged.preferred
    expected = ["app"] if kind == "container" else ["(pod)"]
    assert left.asked_details == right.asked_details == expected


def test_hint_store_copies_share_until_one_changes() -> None:
    first = TopologyHint(NUMAMask.of(0), True)
    store = HintStore()
    store.set(PodUID("a"), ContainerName("c"), first)
    twin = store.copy()
    twin.set(PodUID("b"), ContainerName("c"), first)
    store.remove_container(PodUID("a"), ContainerName("c"))
    assert twin.get(PodUID("a"), ContainerName("c")) == first
    assert store.get(PodUID("b"), ContainerName("c")) == TopologyHint(None, False)
    again = twin.copy()
    twin.remove_pod(PodUID("a"))
    assert again.get(PodUID("a"), ContainerName("c")) == first
    assert twin.get(PodUID("a"), ContainerName("c")) == TopologyHint(None, False)
