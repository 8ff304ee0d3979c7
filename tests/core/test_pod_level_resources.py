"""Pod-level resources (``spec.resources``), as released 1.34 kubelets handle them.

Facts ported (as data, no code) from kubernetes release-1.34: qos_test.go's pod-level
TestComputePodQOS cases, component-helpers IsPodLevelResourcesSet (cpu, memory and
``hugepages-*``), core/v1 defaults.go (defaultHugePagePodLimits, defaultPodRequests), and
the static CPU / memory manager policies that skip pods with pod-level resources.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from cpumanager.core.bitmask import NUMAMask
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.hints.hint import TopologyHint
from cpumanager.core.ids import ContainerName, PodUID
from cpumanager.core.memory import (
    MemoryState,
    allocate_memory,
    memory_hints,
)
from cpumanager.core.policy.base import ReusableCPUs
from cpumanager.core.policy.static import StaticPolicy
from cpumanager.core.quantity import parse_quantity
from cpumanager.core.state import StateSnapshot
from cpumanager.core.workload import (
    Container,
    ContainerKind,
    Pod,
    QoSClass,
    aggregate_container_requests,
    guaranteed_cpus,
    pod_guaranteed_cpus,
    pod_level_resources_set,
    qos_class,
)
from cpumanager.errors import WorkloadError
from cpumanager.formats.manifest import pod_from_manifest
from cpumanager.presets import synthetic

GI = 2**30
G, BU, BE = QoSClass.GUARANTEED, QoSClass.BURSTABLE, QoSClass.BEST_EFFORT


def rl(cpu: str = "", memory: str = "", **extra: str) -> dict[str, Fraction]:
    """A resource list as qos_test.go's getResourceList: empty strings are absent."""
    found = {"cpu": cpu, "memory": memory, **{k.replace("_", "-"): v for k, v in extra.items()}}
    return {name: parse_quantity(text) for name, text in found.items() if text}


def ctr(name: str, requests: dict[str, Fraction], limits: dict[str, Fraction],
        kind: ContainerKind = ContainerKind.APP) -> Container:  # fmt: skip
    return Container(ContainerName(name), requests=requests, limits=limits, kind=kind)


def plr(*containers: Container, requests: dict[str, Fraction] | None = None,
        limits: dict[str, Fraction] | None = None, init: tuple[Container, ...] = (),
        given: bool = True, uid: str = "p") -> Pod:  # fmt: skip
    return Pod(PodUID(uid), name=uid, containers=containers, init_containers=init,
               requests=requests or {}, limits=limits or {}, resources_given=given)  # fmt: skip


# --- QoS (qos_test.go TestComputePodQOS, pod-level cases) --------------------------------

BE_CTR = ctr("best-effort", rl(), rl())
QOS = [
    ("guaranteed-with-pod-level-resources",
     plr(BE_CTR, requests=rl("10m", "100Mi"), limits=rl("10m", "100Mi")), G),
    ("guaranteed-with-pod-and-container-level-resources",
     plr(ctr("b", rl("3m", "10Mi"), rl("5m", "20Mi")), requests=rl("10m", "100Mi"),
         limits=rl("10m", "100Mi")), G),
    ("burstable-with-pod-level-resources",
     plr(BE_CTR, requests=rl("10m", "10Mi"), limits=rl("20m", "50Mi")), BU),
    ("burstable-with-pod-and-container-level-resources",
     plr(ctr("b", rl("5m", "10Mi"), rl("5m", "10Mi")), requests=rl("10m", "10Mi"),
         limits=rl("20m", "50Mi")), BU),
    ("burstable-with-pod-and-container-level-requests",
     plr(ctr("b", rl("5m", "10Mi"), rl()), requests=rl("10m", "10Mi")), BU),
    ("burstable-with-pod-and-container-level-resources-2",
     plr(ctr("b", rl("5m", "10Mi"), rl()), ctr("g", rl("5m", "10Mi"), rl("5m", "10Mi")),
         requests=rl("10m", "10Mi"), limits=rl("5m")), BU),
    # Beyond the kubelet table, same rules: pod-level values replace the containers' ones.
    ("guaranteed containers, burstable pod level",
     plr(ctr("g", rl("1", "1Gi"), rl("1", "1Gi")), requests=rl("1", "1Gi"),
         limits=rl("2", "1Gi")), BU),
    ("spec.resources given but empty: BestEffort", plr(ctr("g", rl("1", "1Gi"),
     rl("1", "1Gi"))), BE),
    ("pod-level hugepages only: BestEffort", plr(BE_CTR, limits=rl(hugepages_2Mi="2Mi"),
     requests=rl(hugepages_2Mi="2Mi")), BE),
    ("zero pod-level cpu limit is not a limit", plr(BE_CTR, requests=rl("0", "1Gi"),
     limits=rl("0", "1Gi")), BU),
]  # fmt: skip


@pytest.mark.parametrize(("p", "expected"), [c[1:] for c in QOS], ids=[c[0] for c in QOS])
def test_qos_with_the_gate_on_reads_pod_level_values(p: Pod, expected: QoSClass) -> None:
    assert qos_class(p) is expected


@pytest.mark.parametrize(("p", "_"), [c[1:] for c in QOS], ids=[c[0] for c in QOS])
def test_qos_with_the_gate_off_reads_the_containers(p: Pod, _: QoSClass) -> None:
    containers_only = plr(*p.containers, init=p.init_containers, given=False)
    assert qos_class(p, pod_level_resources=False) is qos_class(containers_only)


def test_resources_given_is_forced_by_any_pod_level_value() -> None:
    assert plr(requests=rl("1"), given=False).resources_given
    assert not plr(given=False).resources_given


# --- IsPodLevelResourcesSet --------------------------------------------------------------

SET = [
    ("nothing", plr(given=False), False),
    ("empty spec.resources", plr(), False),
    ("cpu request", plr(requests=rl("1")), True),
    ("memory limit", plr(limits=rl(memory="1Gi")), True),
    ("hugepages limit", plr(limits=rl(hugepages_1Gi="1Gi")), True),
    ("unsupported only", plr(requests={"ephemeral-storage": Fraction(GI)}), False),
    ("unsupported and cpu", plr(requests={"ephemeral-storage": Fraction(1), "cpu": Fraction(1)}),
     True),
]  # fmt: skip


@pytest.mark.parametrize(("p", "expected"), [c[1:] for c in SET], ids=[c[0] for c in SET])
def test_pod_level_resources_set(p: Pod, expected: bool) -> None:
    assert pod_level_resources_set(p) is expected


def test_aggregate_requests_counts_sidecars_throughout_and_init_peaks() -> None:
    p = plr(ctr("app", rl("1", "1Gi"), rl()),
            init=(ctr("side", rl("500m"), rl(), ContainerKind.SIDECAR),
                  ctr("init", rl("3", "100Mi"), rl(), ContainerKind.INIT)))  # fmt: skip
    assert aggregate_container_requests(p) == rl("3500m", "1Gi")


# --- manifests: parsing, defaulting, errors ----------------------------------------------


def manifest(resources: object, *containers: dict[str, object],
             init: tuple[dict[str, object], ...] = ()) -> dict[str, object]:  # fmt: skip
    spec: dict[str, object] = {"containers": list(containers) or [{"name": "app"}]}
    if init:
        spec["initContainers"] = list(init)
    if resources is not ...:
        spec["resources"] = resources
    return {"kind": "Pod", "metadata": {"name": "p"}, "spec": spec}


def c(name: str = "app", **resources: object) -> dict[str, object]:
    return {"name": name, "resources": resources}


PARSE = [
    ("absent", manifest(...), {}, {}, False),
    ("null", manifest(None), {}, {}, False),
    ("empty mapping", manifest({}), {}, {}, True),
    ("requests only are kept", manifest({"requests": {"cpu": "1"}}), rl("1"), {}, True),
    ("limits default the requests",
     manifest({"limits": {"cpu": "2", "memory": "1Gi"}}), rl("2", "1Gi"), rl("2", "1Gi"), True),
    ("cpu/memory requests default to the containers' aggregate",
     manifest({"limits": {"cpu": "4", "memory": "1Gi"}}, c(requests={"cpu": "1"}),
              c("b", limits={"cpu": "500m"})),
     rl("1500m", "1Gi"), rl("4", "1Gi"), True),
    ("a given request is kept", manifest({"limits": {"cpu": "4"}, "requests": {"cpu": "3"}},
     c(requests={"cpu": "1"})), rl("3"), rl("4"), True),
    ("hugepages limit defaults to the containers' aggregate, then the request to it",
     manifest({"limits": {"cpu": "1"}}, c(limits={"hugepages-2Mi": "4Mi"})),
     rl("1", hugepages_2Mi="4Mi"), rl("1", hugepages_2Mi="4Mi"), True),
    ("no hugepages limit defaulting when a hugepages request is given",
     manifest({"requests": {"hugepages-2Mi": "2Mi"}}, c(limits={"hugepages-2Mi": "4Mi"})),
     rl(hugepages_2Mi="2Mi"), {}, True),
    ("hugepages request is not defaulted from container requests",
     manifest({"limits": {"cpu": "1"}, "requests": {"cpu": "1"}},
              c(requests={"hugepages-2Mi": "2Mi"})), rl("1"), rl("1"), True),
]  # fmt: skip


@pytest.mark.parametrize(("doc", "requests", "limits", "given"), [x[1:] for x in PARSE],
                         ids=[x[0] for x in PARSE])  # fmt: skip
def test_spec_resources_are_parsed_and_defaulted(
    doc: dict[str, object], requests: dict[str, Fraction], limits: dict[str, Fraction],
    given: bool,
) -> None:  # fmt: skip
    p = pod_from_manifest(doc)
    assert dict(p.requests) == requests
    assert dict(p.limits) == limits
    assert p.resources_given is given


ERRORS = [
    (manifest([]), "spec.resources: expected a mapping, got a list"),
    (manifest({"limits": {"cpu": "abc"}}), "spec.resources.limits.cpu: 'abc' is not a quantity"),
    (manifest({"requests": {"cpu": "-1"}}), "spec.resources.requests.cpu: '-1' is negative"),
    (manifest({"requests": {"ephemeral-storage": "1Gi"}}),
     "spec.resources.requests.ephemeral-storage: 'ephemeral-storage' is not supported at pod "
     "level; use cpu, memory or hugepages-<size> there, or set it per container"),
    (manifest({"limits": {"nvidia.com/gpu": "1"}}),
     "spec.resources.limits.nvidia.com/gpu: 'nvidia.com/gpu' is not supported at pod level"),
    (manifest({"limits": {"cpu": "1"}, "requests": {"cpu": "2"}}),
     "spec.resources.requests.cpu: 2 must be less than or equal to the pod-level cpu limit 1"),
    (manifest({"limits": {"cpu": "1"}}, c(requests={"cpu": "3"})),  # defaulted, then validated
     "spec.resources.requests.cpu: 3 must be less than or equal to the pod-level cpu limit 1"),
]  # fmt: skip


@pytest.mark.parametrize(("doc", "text"), ERRORS, ids=[e[1][:50] for e in ERRORS])
def test_bad_spec_resources_are_one_line_errors(doc: dict[str, object], text: str) -> None:
    with pytest.raises(WorkloadError) as caught:
        pod_from_manifest(doc)
    assert text in caught.value.message
    assert "\n" not in caught.value.message


# --- static CPU policy: shared pool and no hints ------------------------------------------

MACHINE = synthetic(sockets=2, cores_per_numa=4, threads=2)
POLICY = StaticPolicy(MACHINE, num_reserved_cpus=1)
POLICY_GATE_OFF = StaticPolicy(MACHINE, num_reserved_cpus=1, pod_level_resources=False)
FRESH = POLICY.start(StateSnapshot("static", CPUSet()))
G2 = ctr("app", rl("2", "1Gi"), rl("2", "1Gi"))
G_POD_LEVEL = plr(G2, requests=rl("2", "1Gi"), limits=rl("2", "1Gi"))
G_CONTAINERS = plr(G2, given=False)


def test_a_guaranteed_pod_with_pod_level_resources_gets_the_shared_pool() -> None:
    assert qos_class(G_POD_LEVEL) is G
    assert guaranteed_cpus(G_POD_LEVEL, G2) == 2  # the kubelet's count, before the skip
    result = POLICY.allocate(FRESH, ReusableCPUs(), G_POD_LEVEL, G2, NUMAMask.of(0))
    assert result.cpus == FRESH.default_cpuset
    assert result.snapshot == FRESH
    assert "pod-level resources" in result.trace[0]


@pytest.mark.parametrize("scope", ["container", "pod"])
def test_a_pod_with_pod_level_resources_gives_no_cpu_hints(scope: str) -> None:
    reuse = ReusableCPUs()
    if scope == "container":
        assert POLICY.container_hints(FRESH, reuse, G_POD_LEVEL, G2) == {}
        assert POLICY.container_hint_sources(FRESH, reuse, G_POD_LEVEL, G2) == {}
        assert POLICY.container_hints(FRESH, reuse, G_CONTAINERS, G2) != {}
    else:
        assert POLICY.pod_hints(FRESH, reuse, G_POD_LEVEL) == {}
        assert POLICY.pod_hint_sources(FRESH, reuse, G_POD_LEVEL) == {}
        assert POLICY.pod_hints(FRESH, reuse, G_CONTAINERS) != {}


def test_the_skip_comes_before_full_pcpus_only_and_existing_sets() -> None:
    from cpumanager.core.allocation.options import StaticPolicyOptions

    strict = StaticPolicy(MACHINE, num_reserved_cpus=1,
                          options=StaticPolicyOptions(full_pcpus_only=True))  # fmt: skip
    odd = ctr("app", rl("3", "1Gi"), rl("3", "1Gi"))  # not whole cores: would be an SMT error
    p = plr(odd, requests=rl("3", "1Gi"), limits=rl("3", "1Gi"))
    assert strict.allocate(FRESH, ReusableCPUs(), p, odd, None).cpus == FRESH.default_cpuset
    held = FRESH.with_assignment(PodUID("p"), ContainerName("app"), CPUSet.parse("1"))
    assert POLICY.container_hints(held, ReusableCPUs(), G_POD_LEVEL, G2) == {}  # no NO_PLACEMENT


def test_with_the_gate_off_the_containers_decide() -> None:
    result = POLICY_GATE_OFF.allocate(FRESH, ReusableCPUs(), G_POD_LEVEL, G2, NUMAMask.of(0))
    assert len(result.cpus) == 2
    assert POLICY_GATE_OFF.pod_hints(FRESH, ReusableCPUs(), G_POD_LEVEL) != {}
    # Burstable at pod level, Guaranteed by containers: the gate decides which counts.
    burstable = plr(G2, requests=rl("2", "1Gi"), limits=rl("4", "1Gi"))
    assert pod_guaranteed_cpus(burstable) == 0
    assert pod_guaranteed_cpus(burstable, pod_level_resources=False) == 2


# --- memory manager: no hints, no memory --------------------------------------------------

MEMORY = MemoryState.create({0: 10 * GI, 1: 10 * GI}, system_reserved={0: {"memory": GI}})
M1 = ctr("app", rl("1", "1Gi"), rl("1", "1Gi"))
M_POD_LEVEL = plr(M1, requests=rl("1", "1Gi"), limits=rl("1", "1Gi"))


def test_memory_manager_skips_pods_with_pod_level_resources() -> None:
    assert memory_hints(MEMORY, M_POD_LEVEL, M1) == {}
    assert memory_hints(MEMORY, M_POD_LEVEL, None) == {}
    assert memory_hints(MEMORY, M_POD_LEVEL, M1, implicit=True) == {}
    assert memory_hints(MEMORY, M_POD_LEVEL, None, implicit=True) == {}
    result = allocate_memory(MEMORY, M_POD_LEVEL, M1, TopologyHint(NUMAMask.of(0), True))
    assert result.blocks == ()
    assert result.state == MEMORY


def test_memory_manager_with_the_gate_off_allocates_by_the_containers() -> None:
    assert memory_hints(MEMORY, M_POD_LEVEL, M1, pod_level_resources=False) != {}
    result = allocate_memory(MEMORY, M_POD_LEVEL, M1, TopologyHint(NUMAMask.of(0), True),
                             pod_level_resources=False)  # fmt: skip
    assert [block.size for block in result.blocks] == [GI]
