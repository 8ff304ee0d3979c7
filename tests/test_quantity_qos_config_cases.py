"""Kubelet audit, inputs: quantities, QoS, exclusive-CPU counts, kubelet configuration.

Facts ported from the kubelet's and apimachinery's own unit tests (each row id names the
Go test): ``resource/quantity_test.go`` (TestQuantityParse, TestParseQuantityString,
TestQuantityParseEmit, TestQuantityCmp, TestQuantityRoundUp, TestJSONWhitespace,
TestNegativeValueRoundsAwayFromZero), ``core/v1/helper/qos/qos_test.go``
(TestComputePodQOS, container-level cases), ``cpumanager/policy_static.go``
(guaranteedCPUs / podGuaranteedCPUs), ``kubelet/apis/config/validation`` tests
(TestValidateKubeletConfiguration, TestValidateReservedMemoryConfiguration).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from cpumanager.core.quantity import milli_value, parse_quantity, value
from cpumanager.core.workload import (
    Container,
    ContainerKind,
    Pod,
    QoSClass,
    guaranteed_cpus,
    pod_guaranteed_cpus,
    qos_class,
)
from cpumanager.errors import ConfigError, WorkloadError
from cpumanager.formats.kubelet_config import KubeletConfig

MAX_INT64 = 2**63 - 1


def dec(mantissa: int, exponent: int) -> Fraction:
    """The Go tests' decQuantity(mantissa, exponent): mantissa * 10^exponent."""
    return Fraction(mantissa) * Fraction(10) ** exponent


# --- quantities --------------------------------------------------------------------------

# TestQuantityParse: (input, exact value after parsing).
PARSE: list[tuple[str, Fraction]] = [
    ("0", dec(0, 0)),
    ("0n", dec(0, 0)),
    ("0u", dec(0, 0)),
    ("0m", dec(0, 0)),
    ("0Ki", dec(0, 0)),
    ("0k", dec(0, 0)),
    ("0Mi", dec(0, 0)),
    ("0M", dec(0, 0)),
    ("0Gi", dec(0, 0)),
    ("0G", dec(0, 0)),
    ("0Ti", dec(0, 0)),
    ("0T", dec(0, 0)),
    ("1", dec(1, 0)),
    ("1Ki", dec(1024, 0)),
    ("8Ki", dec(8 * 1024, 0)),
    ("7Mi", dec(7 * 1024**2, 0)),
    ("6Gi", dec(6 * 1024**3, 0)),
    ("5Ti", dec(5 * 1024**4, 0)),
    ("4Pi", dec(4 * 1024**5, 0)),
    ("3Ei", dec(3 * 1024**6, 0)),
    ("10Ti", dec(10 * 1024**4, 0)),
    ("100Ti", dec(100 * 1024**4, 0)),
    ("5n", dec(5, -9)),
    ("4u", dec(4, -6)),
    ("3m", dec(3, -3)),
    ("9", dec(9, 0)),
    ("8k", dec(8, 3)),
    ("50k", dec(5, 4)),
    ("7M", dec(7, 6)),
    ("6G", dec(6, 9)),
    ("5T", dec(5, 12)),
    ("40T", dec(4, 13)),
    ("300T", dec(3, 14)),
    ("2P", dec(2, 15)),
    ("1E", dec(1, 18)),
    ("1E-3", dec(1, -3)),
    ("1e3", dec(1, 3)),
    ("1E6", dec(1, 6)),
    ("1e9", dec(1, 9)),
    ("1E12", dec(1, 12)),
    ("1e15", dec(1, 15)),
    ("1E18", dec(1, 18)),
    ("1e14", dec(1, 14)),
    ("1e13", dec(1, 13)),
    ("100.035k", dec(100035, 0)),
    ("0.001", dec(1, -3)),
    ("0.0005k", dec(5, -1)),
    ("0.005", dec(5, -3)),
    ("0.05", dec(5, -2)),
    ("0.5", dec(5, -1)),
    ("0.00050k", dec(5, -1)),
    ("0.00500", dec(5, -3)),
    ("0.05000", dec(5, -2)),
    ("0.50000", dec(5, -1)),
    ("0.5e0", dec(5, -1)),
    ("0.5e-1", dec(5, -2)),
    ("0.5e-2", dec(5, -3)),
    ("10.035M", dec(10035, 3)),
    ("1.2e3", dec(12, 2)),
    ("1.3E+6", dec(13, 5)),
    ("1.40e9", dec(14, 8)),
    ("1.53E12", dec(153, 10)),
    ("1.6e15", dec(16, 14)),
    ("1.7E18", dec(17, 17)),
    ("9.01", dec(901, -2)),
    ("8.1k", dec(81, 2)),
    ("7.123456M", dec(7123456, 0)),
    ("6.987654321G", dec(6987654321, 0)),
    ("5.444T", dec(5444, 9)),
    ("40.1T", dec(401, 11)),
    ("300.2T", dec(3002, 11)),
    ("2.5P", dec(25, 14)),
    ("1.01E", dec(101, 16)),
    # things that saturate / round (up to whole nano-units, binary capped at 2^63-1)
    ("3.001n", dec(4, -9)),
    ("1.1E-9", dec(2, -9)),
    ("0.0000000001", dec(1, -9)),
    ("0.0000000005", dec(1, -9)),
    ("0.00000000050", dec(1, -9)),
    ("0.5e-9", dec(1, -9)),
    ("0.9n", dec(1, -9)),
    ("0.00000012345", dec(124, -9)),
    ("0.00000012354", dec(124, -9)),
    ("9Ei", Fraction(MAX_INT64)),
    ("9223372036854775807Ki", Fraction(MAX_INT64)),
    ("12E", dec(12, 18)),  # decimal amounts are not capped
    ("100.035Ki", dec(10243584, -2)),
    ("0.5Mi", dec(512 * 1024, 0)),
    ("0.05Gi", dec(536870912, -1)),
    ("0.025Ti", dec(274877906944, -1)),
    ("0.000000000001Ki", dec(2, -9)),
    (".001", dec(1, -3)),
    (".0001k", dec(100, -3)),
    ("1.", dec(1, 0)),
    ("1.G", dec(1, 9)),
    # TestParseQuantityString: digit-less numbers are zero
    (".", Fraction(0)),
    ("-.", Fraction(0)),
    ("0.025Ti", dec(274877906944, -1)),
    ("1.025Ti", Fraction(1025 * 1024**4, 1000)),
    ("-1.025Ti", -Fraction(1025 * 1024**4, 1000)),
    # TestQuantityParseEmit (values of the emitted forms)
    ("1024Mi", dec(1024**3, 0)),
    ("1000M", dec(1, 9)),
    (".001Ki", dec(1024, -3)),
    (".000001Ki", dec(1024, -6)),
    (".000000001Ki", dec(1024, -9)),
    (".000000000001Ki", dec(2, -9)),
    # TestJSONWhitespace: JSON decoding trims spaces around a quantity
    (" 1", dec(1, 0)),
    ("1 ", dec(1, 0)),
    (" -1", dec(-1, 0)),
]


@pytest.mark.parametrize(
    ("text", "expected"), PARSE, ids=[f"TestQuantityParse:{t!r}" for t, _ in PARSE]
)
def test_quantity_parse(text: str, expected: Fraction) -> None:
    assert parse_quantity(text) == expected


SIGNABLE = [(t, e) for t, e in PARSE if not t.startswith((" ", "-")) and t != "."]


@pytest.mark.parametrize(
    ("text", "expected"), SIGNABLE, ids=[f"TestQuantityParse:signed:{t!r}" for t, _ in SIGNABLE]
)
def test_quantity_parse_with_a_sign(text: str, expected: Fraction) -> None:
    assert parse_quantity("-" + text.strip()) == -expected
    assert parse_quantity("+" + text.strip()) == expected


INVALID = [
    "1.1.M",
    "1+1.0M",
    "0.1mi",
    "0.1am",
    "aoeu",
    ".5i",
    "1i",
    "-3.01i",
    "-3.01e-",
    "1e4294967297",  # exponent past int32: refused, not truncated
    "",
    # digit-less numbers the kubelet's decimal fallback cannot read
    "Pi",
    "Ei",
    "e-10",
]


@pytest.mark.parametrize("text", INVALID, ids=[f"TestQuantityParse:invalid:{t!r}" for t in INVALID])
def test_quantity_parse_invalid(text: str) -> None:
    with pytest.raises(WorkloadError, match=r"^cpu: "):
        parse_quantity(text, field="cpu")


# Digit-less numbers the int64 fast path parses as zero (ParseQuantity's scanner).
DIGITLESS_ZERO = ["-", "+", "+.", "m", "n", "k", "Ki", "Gi", "Ti", "e5", "-E"]


@pytest.mark.parametrize(
    "text", DIGITLESS_ZERO, ids=[f"parseQuantityString:{t!r}" for t in DIGITLESS_ZERO]
)
def test_digitless_numbers_are_zero(text: str) -> None:
    assert parse_quantity(text) == 0


@pytest.mark.parametrize(
    ("left", "right", "expected"),
    [("0", "0", 0), ("100m", "50m", 1), ("50m", "100m", -1), ("10000T", "100Gi", 1)],
    ids=["TestQuantityCmp:0", "TestQuantityCmp:1", "TestQuantityCmp:2", "TestQuantityCmp:3"],
)
def test_quantity_cmp(left: str, right: str, expected: int) -> None:
    a, b = parse_quantity(left), parse_quantity(right)
    assert (a > b) - (a < b) == expected


# TestNegativeValueRoundsAwayFromZero (+ TestQuantityRoundUp at scales 0 and -3).
VALUES = [
    ("-.484785E-7466", -1, -1),
    (".484785E-7466", 1, 1),
    ("-.484785E-1", -1, -49),
    (".484785E-1", 1, 49),
    ("-0.0005", -1, -1),
    ("0.0005", 1, 1),
    ("-1500m", -2, -1500),
    ("1500m", 2, 1500),
    ("-9.5000000001Gi", -10200547329, -10200547328108),
    ("9.5000000001Gi", 10200547329, 10200547328108),
    ("-1", -1, -1000),
    ("1", 1, 1000),
    ("0", 0, 0),
    ("9.01", 10, 9010),
    ("-9.01", -10, -9010),
]


@pytest.mark.parametrize(
    ("text", "whole", "milli"),
    VALUES,
    ids=[f"TestNegativeValueRoundsAwayFromZero:{t}" for t, *_ in VALUES],
)
def test_value_and_milli_value(text: str, whole: int, milli: int) -> None:
    amount = parse_quantity(text)
    assert (value(amount), milli_value(amount)) == (whole, milli)


def test_yaml_numbers_round_like_their_text() -> None:
    """A JSON/YAML number is parsed from its text, so it rounds to nano-units too."""
    assert parse_quantity(1e-10) == dec(1, -9)
    assert parse_quantity(3.0000000001) == Fraction(3000000001, 10**9)


# --- QoS (TestComputePodQOS, container-level cases) ----------------------------------------


def _resources(cpu: str, memory: str, **extra: str) -> dict[str, Fraction]:
    out = {k: parse_quantity(v) for k, v in (("cpu", cpu), ("memory", memory)) if v}
    out.update({k.replace("_", "-"): parse_quantity(v) for k, v in extra.items()})
    return out


def _c(name: str, requests: dict[str, Fraction], limits: dict[str, Fraction]) -> Container:
    return Container(name, requests, limits)  # type: ignore[arg-type]


def _pod(*apps: Container, inits: tuple[Container, ...] = ()) -> Pod:
    return Pod("uid", name="p", init_containers=inits, containers=apps)  # type: ignore[arg-type]


R = _resources
QOS_CASES: list[tuple[str, Pod, QoSClass]] = [
    ("guaranteed", _pod(_c("a", R("100m", "100Mi"), R("100m", "100Mi"))), QoSClass.GUARANTEED),
    (
        "guaranteed-guaranteed",
        _pod(
            _c("a", R("100m", "100Mi"), R("100m", "100Mi")),
            _c("b", R("100m", "100Mi"), R("100m", "100Mi")),
        ),
        QoSClass.GUARANTEED,
    ),
    (
        "best-effort-best-effort",
        _pod(_c("a", R("", ""), R("", "")), _c("b", R("", ""), R("", ""))),
        QoSClass.BEST_EFFORT,
    ),
    ("best-effort", _pod(_c("a", R("", ""), R("", ""))), QoSClass.BEST_EFFORT),
    (
        "best-effort-burstable",
        _pod(_c("a", R("", ""), R("", "")), _c("b", R("1", ""), R("2", ""))),
        QoSClass.BURSTABLE,
    ),
    (
        "best-effort-guaranteed",
        _pod(_c("a", R("", ""), R("", "")), _c("b", R("10m", "100Mi"), R("10m", "100Mi"))),
        QoSClass.BURSTABLE,
    ),
    (
        "burstable-cpu-guaranteed-memory",
        _pod(_c("a", R("", "100Mi"), R("", "100Mi"))),
        QoSClass.BURSTABLE,
    ),
    ("burstable-no-limits", _pod(_c("a", R("100m", "100Mi"), R("", ""))), QoSClass.BURSTABLE),
    (
        "burstable-guaranteed",
        _pod(
            _c("a", R("1", "100Mi"), R("2", "100Mi")),
            _c("b", R("100m", "100Mi"), R("100m", "100Mi")),
        ),
        QoSClass.BURSTABLE,
    ),
    (
        "burstable-unbounded-but-requests-match-limits",
        _pod(
            _c("a", R("100m", "100Mi"), R("200m", "200Mi")), _c("b", R("100m", "100Mi"), R("", ""))
        ),
        QoSClass.BURSTABLE,
    ),
    ("burstable-1", _pod(_c("a", R("10m", "100Mi"), R("100m", "200Mi"))), QoSClass.BURSTABLE),
    ("burstable-2", _pod(_c("a", R("0", "0"), R("100m", "200Mi"))), QoSClass.BURSTABLE),
    (
        "best-effort-hugepages",
        _pod(_c("a", R("0", "0", hugepages_2Mi="1Gi"), R("0", "0", hugepages_2Mi="1Gi"))),
        QoSClass.BEST_EFFORT,
    ),
    (
        "init-container",
        _pod(
            _c("a", R("", ""), R("", "")), inits=(_c("i", R("10m", "100Mi"), R("100m", "200Mi")),)
        ),
        QoSClass.BURSTABLE,
    ),
    # TestCollectContainerLevelResources (the guaranteed flag alone does not make the class)
    (
        "collect:two-containers-and-init-limits-above-requests",
        _pod(
            _c("c1", R("100m", "100Mi"), R("200m", "200Mi")),
            _c("c2", R("300m", "400Mi"), R("800m", "1000Mi")),
            inits=(_c("init", R("50m", "50Mi"), R("100m", "100Mi")),),
        ),
        QoSClass.BURSTABLE,
    ),
    ("collect:only-cpu-limit", _pod(_c("c1", R("0", "0"), R("100m", ""))), QoSClass.BURSTABLE),
    (
        "collect:init-missing-cpu-limit",
        _pod(
            _c("c1", R("100m", "100Mi"), R("200m", "300Mi")),
            _c("c2", R("300m", "100Mi"), R("50m", "300Mi")),
            inits=(_c("init1", R("50m", "50Mi"), R("", "50Mi")),),
        ),
        QoSClass.BURSTABLE,
    ),
    # a sub-nano difference disappears when parsing, so the requests equal the limits
    (
        "nano-rounding-equalises",
        _pod(_c("a", R("0.0000000001", "1Gi"), R("0.0000000002", "1Gi"))),
        QoSClass.GUARANTEED,
    ),
]


@pytest.mark.parametrize(
    ("the_pod", "expected"),
    [c[1:] for c in QOS_CASES],
    ids=[f"TestComputePodQOS:{c[0]}" for c in QOS_CASES],
)
def test_compute_pod_qos(the_pod: Pod, expected: QoSClass) -> None:
    assert qos_class(the_pod) is expected


# --- exclusive CPUs (policy_static.go guaranteedCPUs / podGuaranteedCPUs) ----------------

GUARANTEED_CPUS = [
    ("1", 1),
    ("2000m", 2),
    ("1001m", 0),
    ("999m", 0),
    ("1.0000000001", 0),  # rounds up to 1.000000001: MilliValue 1001, Value 2
    ("1.0000000000001", 0),  # rounds up to a nano-unit above 1, still not integral
    ("0", 0),
]


@pytest.mark.parametrize(
    ("cpu", "expected"), GUARANTEED_CPUS, ids=[f"guaranteedCPUs:{c}" for c, _ in GUARANTEED_CPUS]
)
def test_guaranteed_cpus(cpu: str, expected: int) -> None:
    res = R(cpu, "1Gi")
    the_pod = _pod(_c("a", res, res))
    assert guaranteed_cpus(the_pod, the_pod.containers[0]) == expected


def _g(name: str, cpu: str | None, kind: ContainerKind = ContainerKind.APP) -> Container:
    res = R(cpu or "", "1Gi")
    return Container(name, res, res, kind)  # type: ignore[arg-type]


SIDECAR = ContainerKind.SIDECAR
INIT = ContainerKind.INIT
POD_CPUS: list[tuple[str, Pod, int]] = [
    ("init-larger-than-apps", _pod(_g("a", "2"), inits=(_g("i", "4", INIT),)), 4),
    ("apps-larger-than-init", _pod(_g("a", "3"), _g("b", "2"), inits=(_g("i", "4", INIT),)), 5),
    ("sidecar-then-init", _pod(_g("a", "1"), inits=(_g("s", "2", SIDECAR), _g("i", "3", INIT))), 5),
    ("init-then-sidecar", _pod(_g("a", "1"), inits=(_g("i", "3", INIT), _g("s", "2", SIDECAR))), 3),
    ("fractional-app-counts-zero", _pod(_g("a", "2"), _g("b", "1500m")), 2),
    (
        "app-without-cpu-request-skipped",
        _pod(_g("a", "2"), _g("b", None)),
        0,
    ),  # b makes it Burstable
]


@pytest.mark.parametrize(
    ("the_pod", "expected"),
    [c[1:] for c in POD_CPUS],
    ids=[f"podGuaranteedCPUs:{c[0]}" for c in POD_CPUS],
)
def test_pod_guaranteed_cpus(the_pod: Pod, expected: int) -> None:
    assert pod_guaranteed_cpus(the_pod) == expected


# --- kubelet configuration (TestValidateKubeletConfiguration, reserved memory) -----------

CONFIG_ERRORS: list[tuple[str, dict[str, Any], str]] = [
    (
        "invalid TopologyManagerPolicy",
        {"topologyManagerPolicy": "invalid-policy"},
        'invalid configuration: topologyManagerPolicy (--topology-manager-policy) "invalid-policy" '
        'must be one of: ["none" "best-effort" "restricted" "single-numa-node"]',
    ),
    (
        "invalid TopologyManagerScope",
        {"topologyManagerScope": "invalid-scope"},
        'invalid configuration: topologyManagerScope (--topology-manager-scope) "invalid-scope" '
        'must be one of: "container", or "pod"',
    ),
    (
        "specify ReservedSystemCPUs with SystemReservedCgroup",
        {"reservedSystemCPUs": "0-3", "systemReservedCgroup": "/system.slice"},
        "invalid configuration: can't use reservedSystemCPUs (--reserved-cpus) with "
        "systemReservedCgroup (--system-reserved-cgroup) or kubeReservedCgroup "
        "(--kube-reserved-cgroup)",
    ),
    (
        "specify ReservedSystemCPUs with KubeReservedCgroup",
        {"reservedSystemCPUs": "0-3", "kubeReservedCgroup": "/system.slice"},
        "invalid configuration: can't use reservedSystemCPUs (--reserved-cpus) with "
        "systemReservedCgroup (--system-reserved-cgroup) or kubeReservedCgroup "
        "(--kube-reserved-cgroup)",
    ),
    (
        "invalid ReservedSystemCPUs",
        {"reservedSystemCPUs": "invalid-reserved-system-cpus"},
        "invalid configuration: unable to parse reservedSystemCPUs (--reserved-cpus) "
        "invalid-reserved-system-cpus, error:",
    ),
    (
        "TestValidateReservedMemoryConfiguration: duplications for the NUMA node and limit type",
        {
            "reservedMemory": [
                {"numaNode": 0, "limits": {"memory": 128}},
                {"numaNode": 0, "limits": {"memory": 64}},
            ]
        },
        "invalid configuration: the reserved memory has a duplicate value for NUMA node 0 and "
        'resource "memory"',
    ),
    (
        "TestValidateReservedMemoryConfiguration: unsupported limit type",
        {"reservedMemory": [{"numaNode": 0, "limits": {"blabla": 128}}]},
        'invalid configuration: the limit type "blabla" for NUMA node 0 is not supported, only '
        "[memory hugepages-<HugePageSize>] is accepted",
    ),
    (
        "TestValidateReservedMemoryConfiguration: limit type with zero value",
        {"reservedMemory": [{"numaNode": 0, "limits": {"memory": 0}}]},
        "invalid configuration: reserved memory may not be zero for NUMA node 0 and resource "
        '"memory"',
    ),
]


@pytest.mark.parametrize(
    ("fields", "message"),
    [c[1:] for c in CONFIG_ERRORS],
    ids=[f"TestValidateKubeletConfiguration:{c[0]}" for c in CONFIG_ERRORS],
)
def test_invalid_kubelet_configuration(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        KubeletConfig.from_mapping(fields)
    assert caught.value.message.startswith(message)


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {"reservedMemory": [{"numaNode": 0, "limits": {"memory": 128}}]},
        {"topologyManagerPolicy": "single-numa-node", "topologyManagerScope": "pod"},
        {"reservedMemory": [{"numaNode": 0, "limits": {"hugepages-2Mi": "2Mi"}}]},
    ],
    ids=[
        "TestValidateReservedMemoryConfiguration:no reserved memory",
        "TestValidateReservedMemoryConfiguration:valid reserved memory",
        "TestValidateKubeletConfiguration:Success (topology manager fields)",
        "hugepages reservation type",
    ],
)
def test_valid_kubelet_configuration(fields: dict[str, Any]) -> None:
    KubeletConfig.from_mapping(fields)


# node allocatable: ceil(MilliValue(systemReserved.cpu + kubeReserved.cpu) / 1000)
RESERVED = [
    ({"systemReserved": {"cpu": "0.0000000001"}}, 1),  # rounds up to 1n, then to 1 CPU
    ({"kubeReserved": {"cpu": "1.5"}, "systemReserved": {"cpu": "500m"}}, 2),
    ({"kubeReserved": {"cpu": "1.0001"}}, 2),
    ({"kubeReserved": {"cpu": "3"}, "reservedSystemCPUs": "0"}, 1),
]


@pytest.mark.parametrize(
    ("fields", "expected"), RESERVED, ids=[f"numReservedCPUs:{i}" for i in range(len(RESERVED))]
)
def test_num_reserved_cpus(fields: dict[str, Any], expected: int) -> None:
    assert (
        KubeletConfig.from_mapping({"cpuManagerPolicy": "static", **fields}).num_reserved_cpus
        == expected
    )


# --- manifests: API defaulting (SetDefaults_Pod) and JSON decoding ------------------------


def test_null_quantity_is_zero_and_defaults_the_request() -> None:
    """A JSON null quantity decodes to zero; the request then defaults to that zero limit."""
    from cpumanager.formats.manifest import pod_from_manifest

    doc = {
        "kind": "Pod",
        "metadata": {"name": "p", "uid": "u"},
        "spec": {
            "containers": [
                {"name": "a", "resources": {"limits": {"cpu": None, "memory": "1Gi"}}},
            ]
        },
    }
    the_pod = pod_from_manifest(doc)
    app = the_pod.containers[0]
    assert app.limits["cpu"] == 0
    assert app.requests["cpu"] == 0
    assert app.requests["memory"] == 2**30
    assert qos_class(the_pod) is QoSClass.BURSTABLE  # zero cpu limit counts as unset
