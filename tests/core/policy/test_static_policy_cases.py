"""Kubelet test cases of the static/none policies and their options not covered elsewhere.

Facts (inputs and expected outputs) from the kubelet's policy_static, policy_options,
policy_none and cpu_manager tests, newest upstream behaviour. Each row id starts with the
kubelet test's name. Cases already ported to tests/data/policy_static.json and hints.json
are not repeated here.
"""

from __future__ import annotations

import pytest

from cpumanager.core.allocation.options import StaticPolicyOptions
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.policy.base import ReusableCPUs
from cpumanager.core.policy.none import NonePolicy
from cpumanager.core.policy.static import StaticPolicy
from cpumanager.core.state import StateSnapshot
from cpumanager.core.topology import CPUTopology
from cpumanager.errors import ConfigError, SMTAlignmentError
from cpumanager.presets import synthetic
from tests.builders import container, pod, snapshot
from tests.kubelet_vectors import kubelet_topology

FULL = {"full-pcpus-only": "true", "prefer-align-cpus-by-uncorecache": "true"}
UNCORE = {"prefer-align-cpus-by-uncorecache": "true"}
STRICT = {"strict-cpu-reservation": "true", "prefer-align-cpus-by-uncorecache": "true"}
SMALL_SMT = "topoSingleSocketSingleNumaPerSocketSMTSmallUncore"
MONO = "topoDualSocketSubNumaPerSocketHTMonolithicUncore"

# (id, topology, reserved, options, machine whose CPUs form the default set, request, expected)
# The default set is that machine's CPUs minus the reserved ones (the kubelet test's
# "ensure the cpumanager invariant"); two monolithic rows take it from another machine.
UNCORE_ROWS = [
    (
        "odd integer cpu required on smt-disabled",
        "topoSmallSingleSocketSingleNumaPerSocketNoSMTUncore",
        "0-3",
        FULL,
        None,
        "5",
        "8-12",
    ),
    ("odd integer required on smt-enabled", SMALL_SMT, "0-1,64-65", UNCORE, None, "3", "2-3,66"),
    (
        "odd integer required on odd integer partial uncore",
        SMALL_SMT,
        "0-1,64",
        UNCORE,
        None,
        "3",
        "2,65-66",
    ),
    (
        "even integer required on odd integer partial uncore",
        SMALL_SMT,
        "0-1,64",
        UNCORE,
        None,
        "4",
        "4-5,68-69",
    ),
    (
        "large odd integer required on smt-enabled",
        SMALL_SMT,
        "0-1,64",
        UNCORE,
        None,
        "11",
        "2,4-7,65-66,68-71",
    ),
    (
        "odd integer required on HT monolithic uncore",
        MONO,
        "0-1,120",
        UNCORE,
        SMALL_SMT,
        "5",
        "2-3,121-123",
    ),
    (
        "even integer required on HT monolithic uncore",
        MONO,
        "0-1,120",
        UNCORE,
        SMALL_SMT,
        "4",
        "2-3,122-123",
    ),
    (
        "GuPodSingleContainer, SingleSocketSMTSmallUncore, StrictReserveCompatability",
        SMALL_SMT,
        "0-1,64-65",
        STRICT,
        None,
        "2",
        "2,66",
    ),
    (
        "GuPodSingleContainer, DualSocketHTMonoUncore, StrictReserveCompatability",
        MONO,
        "0-1,120-121",
        STRICT,
        None,
        "4",
        "2-3,122-123",
    ),
]


@pytest.mark.parametrize(
    ("topology", "reserved", "options", "default_from", "cpu_request", "expected"),
    [row[1:] for row in UNCORE_ROWS],
    ids=[f"TestStaticPolicyAddWithUncoreAlignment/{row[0]}" for row in UNCORE_ROWS],
)
def test_uncore_alignment(
    topology: str,
    reserved: str,
    options: dict[str, str],
    default_from: str | None,
    cpu_request: str,
    expected: str,
) -> None:
    held = CPUSet.parse(reserved)
    policy = StaticPolicy(
        kubelet_topology(topology),
        options=StaticPolicyOptions.parse(options),
        num_reserved_cpus=len(held),
        reserved_cpus=held,
    )
    default = kubelet_topology(default_from or topology).all_cpus - held
    the_pod = pod("with-single-container", container("appContainer-0", cpu_request))
    got = policy.allocate(
        StateSnapshot("static", default), ReusableCPUs(), the_pod, the_pod.containers[0], None
    )
    assert got.cpus == CPUSet.parse(expected)
    assert not got.cpus & got.snapshot.default_cpuset


# --- TestSMTAlignmentErrorText: the "not enough physical CPUs" text even with none free -----


def test_smt_alignment_error_text_with_no_free_physical_cpus() -> None:
    """TestSMTAlignmentErrorText/base SMT alignment error, no physical CPUs, explicit flag."""
    policy = StaticPolicy(
        kubelet_topology("topoDualSocketHT"),
        options=StaticPolicyOptions.parse({"full-pcpus-only": "true"}),
    )
    busy = snapshot("", other={"c": "0-11"})
    the_pod = pod("fakePod", container("c", "4"))
    with pytest.raises(SMTAlignmentError) as caught:
        policy.allocate(busy, ReusableCPUs(), the_pod, the_pod.containers[0], None)
    assert caught.value.message == (
        "SMT Alignment Error: not enough free physical CPUs: available physical CPUs = 0, "
        "requested CPUs = 4, CPUs per core = 2"
    )


@pytest.mark.parametrize(
    ("cpu_request", "cores", "expected"),
    [
        ("15", "topoQuadSocketFourWayHT", "requested 15 cpus not multiple cpus per core = 4"),
        ("3", "topoDualSocketHT", "requested 3 cpus not multiple cpus per core = 2"),
    ],
    ids=[
        "TestSMTAlignmentErrorText/base SMT alignment error",
        "TestSMTAlignmentErrorText/base SMT alignment error, no physical CPUs, missing flag",
    ],
)
def test_smt_alignment_error_text(cpu_request: str, cores: str, expected: str) -> None:
    policy = StaticPolicy(
        kubelet_topology(cores), options=StaticPolicyOptions.parse({"full-pcpus-only": "true"})
    )
    the_pod = pod("fakePod", container("c", cpu_request))
    with pytest.raises(SMTAlignmentError) as caught:
        policy.allocate(
            StateSnapshot("static", CPUSet()), ReusableCPUs(), the_pod, the_pod.containers[0], None
        )
    assert caught.value.message == f"SMT Alignment Error: {expected}"


# --- option parsing, availability, compatibility, validation -------------------------------

PARSE_ROWS = [
    ("nil args", {}, StaticPolicyOptions()),
    ("empty args", {}, StaticPolicyOptions()),
    ("bad single arg", {"badValue1": ""}, None),
    ("bad multiple arg", {"badValue1": "", "badvalue2": "aaaa"}, None),
    ("good arg", {"full-pcpus-only": "true"}, StaticPolicyOptions(full_pcpus_only=True)),
    ("good arg, bad value", {"full-pcpus-only": "enabled!"}, None),
    ("bad arg intermixed", {"full-pcpus-only": "1", "badvalue2": "lorem ipsum"}, None),
]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [row[1:] for row in PARSE_ROWS],
    ids=[f"TestStaticPolicyOptions/{row[0]}" for row in PARSE_ROWS],
)
def test_static_policy_options(raw: dict[str, str], expected: StaticPolicyOptions | None) -> None:
    if expected is None:
        with pytest.raises(ConfigError):
            StaticPolicyOptions.parse(raw)
    else:
        assert StaticPolicyOptions.parse(raw) == expected


# (option, alpha gate, beta gate, available). The kubelet's defaults are alpha off, beta on.
# The newest kubelet makes full-pcpus-only stable and distribute-cpus-across-numa beta; the
# stored test table predates both, so those two rows follow the newest source. Likewise
# strict-cpu-reservation (GA 1.35, #134388) and prefer-align-cpus-by-uncorecache (GA 1.36,
# #137055) no longer need the beta gate (core/versions.py).
AVAILABLE_ROWS = [
    ("TestPolicyDefaultsAvailable", "this-option-does-not-exist", False, True, False),
    ("TestPolicyDefaultsAvailable", "full-pcpus-only", False, True, True),
    ("TestPolicyOptionsAvailable", "this-option-does-not-exist", False, False, False),
    ("TestPolicyOptionsAvailable", "this-option-does-not-exist", False, True, False),
    ("TestPolicyOptionsAvailable", "full-pcpus-only", False, True, True),
    ("TestPolicyOptionsAvailable", "full-pcpus-only", False, False, True),
    ("TestPolicyOptionsAvailable", "align-by-socket", True, True, True),
    ("TestPolicyOptionsAvailable", "align-by-socket", False, True, False),
    ("TestPolicyOptionsAvailable", "distribute-cpus-across-numa", True, True, True),
    ("TestPolicyOptionsAvailable", "distribute-cpus-across-numa", False, True, True),
    ("TestPolicyOptionsAvailable", "distribute-cpus-across-cores", True, True, True),
    ("TestPolicyOptionsAvailable", "distribute-cpus-across-cores", False, True, False),
    ("TestPolicyOptionsAvailable", "strict-cpu-reservation", False, False, True),
    ("TestPolicyOptionsAvailable", "prefer-align-cpus-by-uncorecache", False, False, True),
]


@pytest.mark.parametrize(
    ("option", "alpha", "beta", "available"),
    [row[1:] for row in AVAILABLE_ROWS],
    ids=[f"{r[0]}/{r[1]}/alpha={r[2]}/beta={r[3]}" for r in AVAILABLE_ROWS],
)
def test_option_availability(option: str, alpha: bool, beta: bool, available: bool) -> None:
    raw = {option: "true"}
    if available:
        StaticPolicyOptions.parse(raw, alpha_enabled=alpha, beta_enabled=beta)
    else:
        with pytest.raises(ConfigError):
            StaticPolicyOptions.parse(raw, alpha_enabled=alpha, beta_enabled=beta)


COMPAT_ROWS = [
    ("FullPhysicalCPUsOnly set to true only", {"full-pcpus-only": "true"}, False),
    ("DistributeCPUsAcrossCores set to true only", {"distribute-cpus-across-cores": "true"}, False),
    (
        "FullPhysicalCPUsOnly and DistributeCPUsAcrossCores options can not coexist",
        {"full-pcpus-only": "true", "distribute-cpus-across-cores": "true"},
        True,
    ),
]


@pytest.mark.parametrize(
    ("raw", "fails"),
    [row[1:] for row in COMPAT_ROWS],
    ids=[f"TestPolicyOptionsCompatibility/{row[0]}" for row in COMPAT_ROWS],
)
def test_options_compatibility(raw: dict[str, str], fails: bool) -> None:
    if fails:
        with pytest.raises(ConfigError):
            StaticPolicyOptions.parse(raw, alpha_enabled=True)
    else:
        StaticPolicyOptions.parse(raw, alpha_enabled=True)


SINGLE_NUMA_TEXT = (
    "Topolgy manager single-numa-node policy is incompatible with CPUManager align-by-socket "
    "policy option"
)
HARDWARE_TEXT = (
    "Align by socket is not compatible with hardware where number of sockets are more than "
    "number of NUMA"
)
VALIDATE_ROWS = [
    (
        "Align by socket not enabled",
        {"full-pcpus-only": "true"},
        "topoDualSocketMultiNumaPerSocketHT",
        "single-numa-node",
        None,
    ),
    (
        "Align by socket enabled with topology manager single numa node",
        {"align-by-socket": "true"},
        "topoDualSocketMultiNumaPerSocketHT",
        "single-numa-node",
        SINGLE_NUMA_TEXT,
    ),
    (
        "Align by socket enabled with num_sockets > num_numa",
        {"align-by-socket": "true"},
        "fakeTopoMultiSocketDualSocketPerNumaHT",
        "none",
        HARDWARE_TEXT,
    ),
    (
        "Align by socket enabled: with topology manager None policy",
        {"align-by-socket": "true"},
        "topoDualSocketMultiNumaPerSocketHT",
        "none",
        None,
    ),
    (
        "Align by socket enabled: with topology manager best-effort policy",
        {"align-by-socket": "true"},
        "topoDualSocketMultiNumaPerSocketHT",
        "best-effort",
        None,
    ),
    (
        "Align by socket enabled: with topology manager restricted policy",
        {"align-by-socket": "true"},
        "topoDualSocketMultiNumaPerSocketHT",
        "restricted",
        None,
    ),
]


@pytest.mark.parametrize(
    ("raw", "topology", "tm_policy", "error"),
    [row[1:] for row in VALIDATE_ROWS],
    ids=[f"TestValidateStaticPolicyOptions/{row[0]}" for row in VALIDATE_ROWS],
)
def test_validate_static_policy_options(
    raw: dict[str, str], topology: str, tm_policy: str, error: str | None
) -> None:
    options = StaticPolicyOptions.parse(raw, alpha_enabled=True)
    machine = kubelet_topology(topology)
    if error is None:
        StaticPolicy(machine, options=options, topology_manager_policy=tm_policy)
    else:
        with pytest.raises(ConfigError) as caught:
            StaticPolicy(machine, options=options, topology_manager_policy=tm_policy)
        assert caught.value.message == error


# --- policy names, none policy, allocatable CPUs (policy_none / cpu_manager tests) ----------


def _four_cpus() -> CPUTopology:
    """The cpu_manager tests' machine: one socket, four single-thread cores."""
    return synthetic(sockets=1, numa_per_socket=1, cores_per_numa=4, threads=1)


def test_policy_names() -> None:
    """TestStaticPolicyName, TestNonePolicyName."""
    topo = kubelet_topology("topoSingleSocketHT")
    assert StaticPolicy(topo, num_reserved_cpus=1).name == "static"
    assert NonePolicy(topo).name == "none"


def test_none_policy_allocate_and_remove_change_nothing() -> None:
    """TestNonePolicyAllocate, TestNonePolicyRemove: no error, no state change."""
    policy = NonePolicy(_four_cpus())
    before = StateSnapshot("none", CPUSet.parse("1-7"))
    the_pod = pod("fakePod", container("fakeContainer", "1"))
    assert policy.allocate(
        before, ReusableCPUs(), the_pod, the_pod.containers[0], None
    ).snapshot == (before)
    assert policy.remove(before, the_pod.uid, the_pod.containers[0].name).snapshot == before


@pytest.mark.parametrize(
    ("policy_name", "expected"),
    [("none", ""), ("static", "1-3")],
    ids=["TestCPUManagerGetAllocatableCPUs/None Policy", "TestCPUManagerGetAllocatableCPUs/Static"],
)
def test_allocatable_cpus(policy_name: str, expected: str) -> None:
    machine = _four_cpus()
    policy = (
        NonePolicy(machine)
        if policy_name == "none"
        else StaticPolicy(machine, num_reserved_cpus=1, reserved_cpus=CPUSet.parse("0"))
    )
    assert policy.allocatable_cpus() == CPUSet.parse(expected)


@pytest.mark.parametrize(
    ("reserved", "default", "expected_cpus", "expected_default"),
    [("", "1-4", "1-2", "3-4"), ("0", "0-3", "1-2", "0,3")],
    ids=[
        "TestCPUManagerAdd/cpu manager add - no error",
        "TestCPUManagerAddWithResvList/cpu manager add - no error",
    ],
)
def test_cpu_manager_add(
    reserved: str, default: str, expected_cpus: str, expected_default: str
) -> None:
    """The default set may name a CPU the machine lacks (4): it simply stays shared."""
    held = CPUSet.parse(reserved)
    policy = StaticPolicy(_four_cpus(), num_reserved_cpus=len(held), reserved_cpus=held)
    the_pod = pod("fakePod", container("fakeContainer", "2"))
    got = policy.allocate(
        StateSnapshot("static", CPUSet.parse(default)),
        ReusableCPUs(),
        the_pod,
        the_pod.containers[0],
        None,
    )
    assert got.cpus == CPUSet.parse(expected_cpus)
    assert got.snapshot.default_cpuset == CPUSet.parse(expected_default)
