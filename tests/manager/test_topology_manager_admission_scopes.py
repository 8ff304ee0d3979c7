"""Kubelet topology-manager tests of NewManager, Admit and the scopes, ported as tables.

Facts (inputs and expected outputs) from pkg/kubelet/cm/topologymanager:
topology_manager_test.go (TestNewManager, TestManagerScope, TestAddHintProvider, TestAdmit,
the feature-disabled rows of TestAdmitWithPodLevelResources), scope_test.go (TestGetAffinity,
TestRemoveContainer), scope_container_test.go and scope_pod_test.go (TestContainer/Pod
CalculateAffinity and AccumulateProvidersHints). Every row id starts with the kubelet test's
name; TestAdmit rows run in both scopes, as the kubelet test does.

Not ported: TestAddContainer (the kubelet's scope keeps a container-id map; ours is keyed by
pod uid and container name and the id map lives in the CPU manager), the feature-enabled
rows of TestAdmitWithPodLevelResources (pod-level resource managers, an alpha gate we do not
model), and tests from prototypes no kubelet release ships (requested NUMA placement).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pytest

from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.hints.hint import NO_PREFERENCE, TopologyHint
from cpumanager.core.ids import ContainerName, PodUID
from cpumanager.core.merge.exact import AnyProviderHints
from cpumanager.core.merge.options import build_topology_manager_config
from cpumanager.core.workload import Container, Pod
from cpumanager.errors import ConfigError
from cpumanager.manager.topology_manager import TopologyManager
from tests.builders import container, pod

NODES = (0, 1)
ZERO = TopologyHint(None, False)  # the kubelet's TopologyHint{}


def h(*nodes: int, preferred: bool = True) -> TopologyHint:
    return TopologyHint(NUMAMask.of(*nodes), preferred)


@dataclass
class Mock:
    """The kubelet's mockHintProvider: the same answer for a container and for the pod."""

    answer: AnyProviderHints = None
    provider_name: str = "mock"
    calls: list[str] = field(default_factory=list)

    def topology_hints(self, pod: Pod, container: Container) -> AnyProviderHints:
        self.calls.append("container-hints")
        return self.answer

    def pod_topology_hints(self, pod: Pod) -> AnyProviderHints:
        self.calls.append("pod-hints")
        return self.answer

    def hint_details(self, pod: Pod, container: Container) -> Mapping[str, object]:
        return {}

    def pod_hint_details(self, pod: Pod) -> Mapping[str, object]:
        return {}

    def allocate(self, pod: Pod, container: Container) -> object:
        self.calls.append(f"allocate:{container.name}")
        return None


def manager(policy: str, scope: str, *providers: Mock) -> TopologyManager:
    config = build_topology_manager_config(policy=policy, scope=scope, numa_nodes=NODES)
    return TopologyManager(config=config, numa_ids=NODES, providers=providers)


ONE = pod("p1", container("c1", "1"))


# --- NewManager and the scope name --------------------------------------------------------

NINE = list(range(9))

# (kubelet row, policy, options, NUMA node ids, distance rows?, expected policy or error text)
NEW_MANAGER_ROWS: list[tuple[str, str, dict[str, str], list[int], bool, str]] = [
    ("TestNewManager-Policy is set to none", "none", {}, [], False, "none"),
    ("TestNewManager-Policy is set to best-effort", "best-effort", {}, [], False, "best-effort"),
    ("TestNewManager-Policy is set to restricted", "restricted", {}, [], False, "restricted"),
    ("TestNewManager-Policy is set to single-numa-node", "single-numa-node", {}, [], False,
     "single-numa-node"),
    ("TestNewManager-Policy is set to unknown", "unknown", {}, [], False,
     'error: unknown policy: "unknown"'),
    ("TestNewManager-Unknown policy name best-effort policy", "best-effort",
     {"unknown-option": "true"}, [], False, "error: unknown Topology Manager Policy option:"),
    ("TestNewManager-Unknown policy name restricted policy", "restricted",
     {"unknown-option": "true"}, [], False, "error: unknown Topology Manager Policy option:"),
    ("TestNewManager-can't get NUMA distances", "best-effort",
     {"prefer-closest-numa-nodes": "true"}, [0], False,
     "error: error getting NUMA distances from cadvisor"),
    ("TestNewManager-more than 8 NUMA nodes", "best-effort", {}, NINE, False,
     "error: unsupported on machines with more than 8 NUMA Nodes"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("policy", "options", "nodes", "rows", "expected"),
    [pytest.param(*row[1:], id=row[0]) for row in NEW_MANAGER_ROWS],
)
def test_new_manager(
    policy: str, options: dict[str, str], nodes: list[int], rows: bool, expected: str
) -> None:
    distances = {n: [10 if n == m else 20 for m in nodes] for n in nodes} if rows else None
    build = {"policy": policy, "options": options, "numa_nodes": nodes, "distances": distances}
    if expected.startswith("error: "):
        with pytest.raises(ConfigError) as info:
            build_topology_manager_config(**build)  # type: ignore[arg-type]
        assert expected.removeprefix("error: ") in str(info.value)
        return
    config = build_topology_manager_config(**build)  # type: ignore[arg-type]
    assert config.policy == expected


@pytest.mark.parametrize(
    ("scope", "expected"),
    [
        pytest.param("container", "container", id="TestManagerScope-container"),
        pytest.param("pod", "pod", id="TestManagerScope-pod"),
        pytest.param("unknown", 'error: unknown scope: "unknown"', id="TestManagerScope-unknown"),
    ],
)
def test_manager_scope(scope: str, expected: str) -> None:
    if expected.startswith("error: "):
        with pytest.raises(ConfigError, match=expected.removeprefix("error: ")):
            build_topology_manager_config(policy="best-effort", scope=scope, numa_nodes=[])
        return
    config = build_topology_manager_config(policy="best-effort", scope=scope, numa_nodes=[])
    assert config.scope == expected


def test_add_hint_provider() -> None:
    """TestAddHintProvider: three added providers are all asked."""
    tm = manager("best-effort", "container")
    providers = [Mock(provider_name=f"p{i}") for i in range(3)]
    for provider in providers:
        tm.add_provider(provider)
    tm.admit(ONE)
    assert [p.calls for p in providers] == [["container-hints", "allocate:c1"]] * 3


# --- Admit ------------------------------------------------------------------------------------

PREFERRED = {"resource": (h(0), h(0, 1, preferred=False))}
SEVERAL = {"resource": (h(0), h(1), h(0, 1, preferred=False))}
NONE_PREFERRED = {"resource": (h(0, 1, preferred=False),)}

# (kubelet row; the QoS class is not consulted by admission), policy, providers, admit
ADMIT_ROWS: list[tuple[str, str, list[AnyProviderHints], bool]] = [
    ("TestAdmit-BestEffort QoS. None Policy. No Hints.", "none", [], True),
    ("TestAdmit-Guaranteed QoS. None Policy. No Hints.", "none", [], True),
    ("TestAdmit-BestEffort QoS. single-numa-node Policy. No Hints.", "single-numa-node", [None],
     True),
    ("TestAdmit-BestEffort QoS. Restricted Policy. No Hints.", "restricted", [None], True),
    ("TestAdmit-Guaranteed. BestEffort Policy. Preferred Affinity.", "best-effort", [PREFERRED],
     True),
    ("TestAdmit-Guaranteed. BestEffort Policy. More than one Preferred Affinity.", "best-effort",
     [SEVERAL], True),
    ("TestAdmit-Burstable. BestEffort Policy. More than one Preferred Affinity.", "best-effort",
     [SEVERAL], True),
    ("TestAdmit-Guaranteed. BestEffort Policy. No Preferred Affinity.", "best-effort",
     [NONE_PREFERRED], True),
    ("TestAdmit-Guaranteed. Restricted Policy. Preferred Affinity.", "restricted", [PREFERRED],
     True),
    ("TestAdmit-Burstable. Restricted Policy. Preferred Affinity.", "restricted", [PREFERRED],
     True),
    ("TestAdmit-Guaranteed. Restricted Policy. More than one Preferred affinity.", "restricted",
     [SEVERAL], True),
    ("TestAdmit-Burstable. Restricted Policy. More than one Preferred affinity.", "restricted",
     [SEVERAL], True),
    ("TestAdmit-Guaranteed. Restricted Policy. No Preferred affinity.", "restricted",
     [NONE_PREFERRED], False),
    ("TestAdmit-Burstable. Restricted Policy. No Preferred affinity.", "restricted",
     [NONE_PREFERRED], False),
]  # fmt: skip


@pytest.mark.parametrize("scope", ["container", "pod"])
@pytest.mark.parametrize(
    ("policy", "answers", "admit"), [pytest.param(*row[1:], id=row[0]) for row in ADMIT_ROWS]
)
def test_admit(scope: str, policy: str, answers: list[AnyProviderHints], admit: bool) -> None:
    tm = manager(policy, scope, *(Mock(answer) for answer in answers))
    result = tm.admit(ONE)
    assert result.admitted is admit
    if not admit:
        assert result.reason == "TopologyAffinityError"


@pytest.mark.parametrize(
    ("scope", "expected_calls"),
    [
        pytest.param(
            "pod",
            ["pod-hints", "allocate:c1"],
            id="TestAdmitWithPodLevelResources-pod scope, feature disabled, container-level flow",
        ),
        pytest.param(
            "container",
            ["container-hints", "allocate:c1"],
            id="TestAdmitWithPodLevelResources-container scope, feature disabled",
        ),
    ],
)
def test_admit_flow_per_scope(scope: str, expected_calls: list[str]) -> None:
    tracker = Mock({"resource": (h(0),)})
    result = manager("restricted", scope, tracker).admit(ONE)
    assert result.admitted
    assert tracker.calls == expected_calls


# --- scope bookkeeping --------------------------------------------------------------------------


def test_get_affinity_of_unknown_container_is_the_zero_hint() -> None:
    """TestGetAffinity: nothing stored gives TopologyHint{} (nil mask, not preferred)."""
    tm = manager("best-effort", "container")
    got = tm.get_affinity(PodUID("0aafa4c4-38e8-11e9-bcb1-a4bf01040474"), ContainerName("nginx"))
    assert got == ZERO


@pytest.mark.parametrize(
    ("uid", "name"),
    [
        pytest.param("0aafa4c4-38e8-11e9-bcb1-a4bf01040474", "nginx", id="TestRemoveContainer-1"),
        pytest.param(
            "b3ee37fc-39a5-11e9-bcb1-a4bf01040474", "Busy_Box", id="TestRemoveContainer-2"
        ),
    ],
)
def test_remove_container_drops_the_stored_hint(uid: str, name: str) -> None:
    tm = manager("best-effort", "container", Mock({"resource": (h(1),)}))
    assert tm.admit(pod(uid, container(name, "1"))).admitted
    assert tm.get_affinity(PodUID(uid), ContainerName(name)) == h(1)
    tm.remove_container(PodUID(uid), ContainerName(name))
    assert tm.get_affinity(PodUID(uid), ContainerName(name)) == ZERO
    assert tm.affinity_mask(PodUID(uid), ContainerName(name)) is None


# (kubelet row, the providers' answers); the scope hands them to the policy as they are.
ASSORTED: list[AnyProviderHints] = [
    {"resource-1/A": (h(0), h(0, 1, preferred=False)),
     "resource-1/B": (h(1), h(1, 2, preferred=False))},
    {"resource-2/A": (h(2), h(3, 4, preferred=False)),
     "resource-2/B": (h(2), h(3, 4, preferred=False))},
    {"resource-3": NO_PREFERENCE},
]  # fmt: skip
SCOPE_ROWS: list[tuple[str, list[AnyProviderHints]]] = [
    ("CalculateAffinity-No hint providers", []),
    ("CalculateAffinity-empty non-nil map", [{}]),
    ("CalculateAffinity-nil hints for a resource", [{"resource": NO_PREFERENCE}]),
    ("CalculateAffinity-Assorted HintProviders", ASSORTED),
    ("AccumulateProvidersHints-TopologyHint not set", []),
    ("AccumulateProvidersHints-empty non-nil map", [{}]),
    ("AccumulateProvidersHints-nil hints for a resource", [{"resource": NO_PREFERENCE}]),
    ("AccumulateProvidersHints-2 providers with 1 resource", [{"resource1": (ZERO,)},
                                                              {"resource2": (ZERO,)}]),
    ("AccumulateProvidersHints-1 with 1 resource, 1 with nil hints", [{"resource1": (ZERO,)},
                                                                      None]),
    ("AccumulateProvidersHints-1 with 1 resource, 1 empty hints", [{"resource1": (ZERO,)}, {}]),
    ("AccumulateProvidersHints-provider with 2 resources", [{"resource1": (ZERO,),
                                                             "resource2": (ZERO,)}]),
]  # fmt: skip


@pytest.mark.parametrize(("scope", "prefix"), [("container", "Container"), ("pod", "Pod")])
@pytest.mark.parametrize(
    "answers", [pytest.param(answers, id=f"Test-{name}") for name, answers in SCOPE_ROWS]
)
def test_scope_hands_provider_hints_over_unchanged(
    scope: str, prefix: str, answers: list[AnyProviderHints]
) -> None:
    """TestContainer*/TestPod* CalculateAffinity and AccumulateProvidersHints."""
    providers = [Mock(answer, provider_name=f"p{i}") for i, answer in enumerate(answers)]
    result = manager("best-effort", scope, *providers).admit(ONE)
    assert len(result.decisions) == 1, prefix
    handed = result.decisions[0].provider_hints
    assert [name for name, _ in handed] == [p.provider_name for p in providers]
    assert [hints for _, hints in handed] == answers


@dataclass
class Failing(Mock):
    """A provider whose allocation fails for one container."""

    fail: str = ""

    def allocate(self, pod: Pod, container: Container) -> object:
        self.calls.append(f"allocate:{container.name}")
        if container.name == self.fail:
            raise ConfigError("injected allocation failure")
        return None


def test_pod_scope_stores_the_hint_container_by_container() -> None:
    """podScope.Admit: setTopologyHints then allocate, per container; a failure stops both."""
    provider = Failing({"resource": (h(1),)}, fail="a")
    tm = manager("restricted", "pod", provider)
    result = tm.admit(pod("p2", container("a", "1"), container("b", "1")))
    assert not result.admitted
    assert result.reason == "UnexpectedAdmissionError"
    assert tm.get_affinity(PodUID("p2"), ContainerName("a")) == h(1)
    assert tm.get_affinity(PodUID("p2"), ContainerName("b")) == ZERO
    assert provider.calls == ["pod-hints", "allocate:a"]
