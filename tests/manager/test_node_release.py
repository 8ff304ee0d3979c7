"""Node at one kubelet release (``release=``): that release's static policy option levels
and allocation rules. Expected values are the kubelet 1.32.10's own answers (its Go
managers run on the same cases, bench/diff_kubelet_cpu.py): exclusive CPUs and the
cpu_manager_state bytes."""

from __future__ import annotations

import pytest

from cpumanager.adapters.memory_store import InMemoryStore
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.topology import CPUInfo, CPUTopology
from cpumanager.core.workload import Pod
from cpumanager.errors import ConfigError
from cpumanager.formats.kubelet_config import KubeletConfig
from cpumanager.manager.node import Node
from tests.builders import guaranteed

# one socket, one NUMA node, five cores of two threads (c, c + 5); cores 0-2 on uncore
# cache 0, cores 3-4 on cache 1
UNCORE = CPUTopology(
    CPUInfo(core + 5 * thread, core, 0, 0, 0 if core < 3 else 1)
    for core in range(5)
    for thread in range(2)
)
# four NUMA nodes of four single-thread cores: node n holds n, n+4, n+8, n+12 (socket n % 2)
CROSSED = CPUTopology(CPUInfo(cpu, cpu, cpu % 2, cpu % 4, cpu % 4) for cpu in range(16))


def started(
    topology: CPUTopology, raw: dict[str, object], release: tuple[int, int] | None
) -> tuple[Node, InMemoryStore, list[Pod]]:
    store, pods = InMemoryStore(), []
    config = KubeletConfig.from_mapping({"cpuManagerPolicy": "static", **raw})
    node = Node(topology=topology, kubelet=config, store=store, release=release)
    node.start(active_pods=lambda: tuple(pods))
    return node, store, pods


def admit_all(node: Node, pods: list[Pod], *sizes: str) -> list[str]:
    found = []
    for index, size in enumerate(sizes):
        pod = guaranteed("abc"[index], c0=size)
        pods.append(pod)
        assert node.admit(pod).admitted
        held = node.cpu_state.cpuset_of(pod.uid, pod.containers[0].name)
        found.append(str(held))
    return found


UNCORE_CONFIG: dict[str, object] = {
    "systemReserved": {"cpu": "1"},
    "cpuManagerPolicyOptions": {"prefer-align-cpus-by-uncorecache": "true"},
    "featureGates": {"CPUManagerPolicyAlphaOptions": True},
}


def test_uncore_alignment_at_1_32_reserves_and_allocates_as_that_kubelet() -> None:
    node, store, pods = started(UNCORE, UNCORE_CONFIG, (1, 32))
    assert admit_all(node, pods, "3", "2", "1") == ["1,5-6", "2,7", "3"]
    assert store.data == (
        b'{"policyName":"static","defaultCpuSet":"0,4,8-9","entries":{"a":{"c0":"1,5-6"},'
        b'"b":{"c0":"2,7"},"c":{"c0":"3"}},"checksum":2678764170}'
    )


def test_uncore_alignment_of_the_newest_release_differs() -> None:
    node, _, pods = started(UNCORE, UNCORE_CONFIG, None)
    assert admit_all(node, pods, "3", "2", "1") == ["4,8-9", "0,5", "1"]


def test_distributed_with_align_by_socket_at_1_32() -> None:
    raw: dict[str, object] = {
        "reservedSystemCPUs": "15",
        "cpuManagerPolicyOptions": {
            "distribute-cpus-across-numa": "true",
            "align-by-socket": "true",
        },
        "featureGates": {"CPUManagerPolicyAlphaOptions": True},
    }
    node, store, pods = started(CROSSED, raw, (1, 32))
    assert admit_all(node, pods, "6") == ["0-1,4-5,8-9"]
    assert store.data == (
        b'{"policyName":"static","defaultCpuSet":"2-3,6-7,10-15","entries":{"a":{"c0":'
        b'"0-1,4-5,8-9"}},"checksum":4042003292}'
    )
    node, _, pods = started(CROSSED, raw, None)
    assert admit_all(node, pods, "6") == ["0,2,4,6,8,10"]


def test_option_levels_follow_the_release() -> None:
    """distribute-cpus-across-numa is alpha in 1.32 (beta from 1.33): with the alpha gate on
    and the beta gate off, 1.32 starts and the newest release refuses."""
    raw: dict[str, object] = {
        "systemReserved": {"cpu": "1"},
        "cpuManagerPolicyOptions": {"distribute-cpus-across-numa": "true"},
        "featureGates": {
            "CPUManagerPolicyAlphaOptions": True,
            "CPUManagerPolicyBetaOptions": False,
        },
    }
    started(CROSSED, raw, (1, 32))
    with pytest.raises(ConfigError, match="Beta-level Options not enabled"):
        started(CROSSED, raw, None)


REFUSALS = [
    # the topology manager is built first: its error wins over the CPU manager's
    (
        {
            "topologyManagerPolicy": "best-effort",
            "topologyManagerPolicyOptions": {"max-allowable-numa-nodes": "4"},
            "cpuManagerPolicyOptions": {
                "full-pcpus-only": "true",
                "distribute-cpus-across-cores": "true",
            },
        },
        'the minimum value of "max-allowable-numa-nodes" should not be less than 8',
    ),
    # NewStaticPolicy's errors come wrapped by the CPU manager's constructor
    (
        {
            "topologyManagerPolicy": "best-effort",
            "cpuManagerPolicyOptions": {
                "full-pcpus-only": "true",
                "distribute-cpus-across-cores": "true",
            },
        },
        "new static policy error: static policy options full-pcpus-only and "
        "distribute-cpus-across-cores can not be used at the same time",
    ),
]


@pytest.mark.parametrize(("raw", "text"), REFUSALS)
def test_start_refusals_carry_the_kubelet_1_32_text(raw: dict[str, object], text: str) -> None:
    """The kubelet's text, alone or followed by the project's remedy after '; '."""
    set_gates = raw.get("featureGates", {})
    assert isinstance(set_gates, dict)
    gates = {"CPUManagerPolicyAlphaOptions": True, **set_gates}
    config = {"systemReserved": {"cpu": "1"}, **raw, "featureGates": gates}
    with pytest.raises(ConfigError) as caught:
        started(CROSSED, config, (1, 32))
    assert caught.value.message == text or caught.value.message.startswith(f"{text}; ")


def test_a_1_32_node_hands_out_a_reserved_cpu_on_uneven_sockets() -> None:
    """The kubelet 1.32's free-socket test compares with the declared CPUsPerSocket: on
    sockets of 2 and 1 CPUs (CPUsPerSocket 1), a 2-CPU container gets socket 0 whole,
    reserved CPU 0 included; the checkpoint holds what that kubelet wrote."""
    machine = CPUTopology([CPUInfo(0, 0, 0, 0, 0), CPUInfo(1, 1, 0, 0, 0), CPUInfo(2, 2, 1, 0, 0)])
    node, store, pods = started(machine, {"reservedSystemCPUs": "0"}, (1, 32))
    assert admit_all(node, pods, "2") == ["0-1"]
    first = pods.pop()
    node.remove_pod(first.uid, reclaim=True)
    second = guaranteed("b", c0="1")
    pods.append(second)
    assert node.admit(second).admitted
    assert node.cpu_state.cpuset_of(second.uid, second.containers[0].name) == CPUSet.parse("2")
    assert store.data == (
        b'{"policyName":"static","defaultCpuSet":"0-1","entries":{"b":{"c0":"2"}},'
        b'"checksum":2596286941}'
    )
    node, _, pods = started(machine, {"reservedSystemCPUs": "0"}, None)
    assert admit_all(node, pods, "2") == ["1-2"]


@pytest.mark.parametrize(
    ("release", "text"),
    [
        ((1, 32), "Topology Manager Policy Beta-level Options not enabled, but option"),
        (None, None),  # the newest: max-allowable-numa-nodes is GA, no gate consulted
        ((1, 34), "Topology Manager Policy Beta-level Options not enabled, but option"),
    ],
)
def test_topology_option_gate_refusal_in_the_release_words(
    release: tuple[int, int] | None, text: str | None
) -> None:
    """1.32.10 (run side by side) capitalizes its maturity refusal; the newest tree writes
    it in lower case."""
    raw: dict[str, object] = {
        "cpuManagerPolicy": "none",
        "topologyManagerPolicy": "best-effort",
        "topologyManagerPolicyOptions": {"max-allowable-numa-nodes": "8"},
        "featureGates": {"TopologyManagerPolicyBetaOptions": False},
    }
    config = KubeletConfig.from_mapping(raw)
    if text is None:
        Node(topology=CROSSED, kubelet=config, store=InMemoryStore(), release=release)
        return
    with pytest.raises(ConfigError) as refused:
        Node(topology=CROSSED, kubelet=config, store=InMemoryStore(), release=release)
    assert refused.value.message.startswith(text)
