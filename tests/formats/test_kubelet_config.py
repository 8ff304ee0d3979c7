"""KubeletConfiguration parsing and validation, with the kubelet's messages."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from cpumanager.adapters.kubelet_config_file import kubelet_config_from_text, read_kubelet_config
from cpumanager.core.cpuset import CPUSet
from cpumanager.errors import ConfigError, InputError
from cpumanager.formats.kubelet_config import (
    KubeletConfig,
    parse_go_duration,
    reserved_memory_per_node,
)
from cpumanager.formats.kubelet_config.fields import (
    eviction_bytes,
    go_quantity_text,
    quantity_format,
)

STATIC = {"cpuManagerPolicy": "static"}


def cfg(**fields: Any) -> KubeletConfig:
    return KubeletConfig.from_mapping(fields)


def test_defaults_are_the_kubelets() -> None:
    config = KubeletConfig.from_mapping({})
    assert (
        config.cpu_manager_policy,
        config.topology_manager_policy,
        config.topology_manager_scope,
        config.memory_manager_policy,
        config.cpu_manager_reconcile_period_seconds,
        config.reserved_cpus,
        config.num_reserved_cpus,
    ) == ("none", "none", "container", "None", Fraction(10), None, 0)
    assert dict(config.eviction_hard) == {
        "memory.available": "100Mi",
        "nodefs.available": "10%",
        "nodefs.inodesFree": "5%",
        "imagefs.available": "15%",
        "imagefs.inodesFree": "5%",
    }
    assert (config.max_pods, config.enforce_node_allocatable, config.cgroup_driver) == (
        110,
        ("pods",),
        "cgroupfs",
    )


def test_full_configuration_file_fields() -> None:
    # KubeletConfig.from_mapping (scenarios) turns YAML booleans and numbers in string maps
    # into strings; configuration files are stricter, as the kubelet's decoder is
    # (tests/formats/kubelet_config/test_shapes.py).
    config = KubeletConfig.from_mapping(
        {
            "apiVersion": "kubelet.config.k8s.io/v1beta1",
            "kind": "KubeletConfiguration",
            "cpuManagerPolicy": "static",
            "cpuManagerPolicyOptions": {
                "full-pcpus-only": "true",
                "distribute-cpus-across-numa": True,
            },
            "cpuManagerReconcilePeriod": "5s",
            "kubeReserved": {"cpu": "500m", "memory": "1Gi"},
            "systemReserved": {"cpu": 1, "ephemeral-storage": "1Gi", "pid": "1000"},
            "topologyManagerPolicy": "single-numa-node",
            "topologyManagerScope": "pod",
            "topologyManagerPolicyOptions": {"max-allowable-numa-nodes": 16},
            "featureGates": {"CPUManagerPolicyAlphaOptions": True},
            "memoryManagerPolicy": "Static",
            "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1124Mi"}}],
            "maxPods": 110,  # ignored
        }
    )
    assert dict(config.cpu_manager_policy_options) == {
        "full-pcpus-only": "true",
        "distribute-cpus-across-numa": "true",
    }
    assert dict(config.topology_manager_policy_options) == {"max-allowable-numa-nodes": "16"}
    assert config.cpu_manager_reconcile_period_seconds == 5
    assert config.num_reserved_cpus == 2  # ceil(0.5 + 1)
    assert config.feature_gate("CPUManagerPolicyAlphaOptions", default=False) is True
    assert config.feature_gate("CPUManagerPolicyBetaOptions", default=True) is True
    assert config.topology_manager_scope == "pod"
    assert config.reserved_memory[0].limits["memory"] == 1124 * 2**20


RESERVED = [
    # (kubeReserved cpu, systemReserved cpu, reservedSystemCPUs, num_reserved_cpus)
    ("1", None, None, 1),
    ("500m", None, None, 1),
    ("500m", "500m", None, 1),
    ("500m", "600m", None, 2),
    ("1001m", None, None, 2),
    ("2", "1", None, 3),
    (None, "1.5", None, 2),
    ("8", None, "0-1", 2),  # the explicit list overrides kube/system reserved cpu
    (None, None, "0,4,8-9", 4),
]


@pytest.mark.parametrize(("kube", "system", "listed", "count"), RESERVED)
def test_num_reserved_cpus_the_kubelets_way(
    kube: str | None, system: str | None, listed: str | None, count: int
) -> None:
    fields: dict[str, Any] = dict(STATIC)
    if kube is not None:
        fields["kubeReserved"] = {"cpu": kube}
    if system is not None:
        fields["systemReserved"] = {"cpu": system}
    if listed is not None:
        fields["reservedSystemCPUs"] = listed
    config = cfg(**fields)
    assert config.num_reserved_cpus == count
    assert config.reserved_cpus == (None if listed is None else CPUSet.parse(listed))


def test_reserved_list_override_keeps_other_resources() -> None:
    config = cfg(
        kubeReserved={"cpu": "3", "memory": "1Gi"},
        systemReserved={"cpu": "1"},
        reservedSystemCPUs="2-3",
    )
    assert dict(config.effective_kube_reserved()) == {"memory": 2**30}
    assert dict(config.effective_system_reserved()) == {"cpu": 2}


def test_reserved_cpus_must_be_online() -> None:
    config = cfg(reservedSystemCPUs="6-9")
    config.check_reserved_cpus_on(CPUSet.parse("0-15"))
    with pytest.raises(
        ConfigError, match=r"^reserved-cpus: 6-9 is not a subset of online-cpus: 0-7;"
    ):
        config.check_reserved_cpus_on(CPUSet.parse("0-7"))


DURATIONS = [
    ("10s", Fraction(10)),
    ("500ms", Fraction(1, 2)),
    ("1m30s", Fraction(90)),
    ("1h", Fraction(3600)),
    ("1.5s", Fraction(3, 2)),
    ("250us", Fraction(1, 4000)),
    ("0", Fraction(0)),
]


@pytest.mark.parametrize(("text", "seconds"), DURATIONS)
def test_go_durations(text: str, seconds: Fraction) -> None:
    assert parse_go_duration(text) == seconds


BAD_DURATIONS = [
    ("", 'time: invalid duration ""'),
    ("10", 'time: missing unit in duration "10"'),
    ("s", 'time: invalid duration "s"'),
    ("1d", 'time: unknown unit "d" in duration "1d"'),
    ("1 s", 'time: unknown unit " s" in duration "1 s"'),
    ("-", 'time: invalid duration "-"'),
    ("9223372036854775808ns", 'time: invalid duration "9223372036854775808ns"'),
]


@pytest.mark.parametrize(("text", "go_error"), BAD_DURATIONS)
def test_bad_durations(text: str, go_error: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_go_duration(text, field="cpuManagerReconcilePeriod")
    assert caught.value.message.startswith(f"cpuManagerReconcilePeriod: {go_error}; ")


INVALID = [
    (
        dict(STATIC),
        "[cpumanager] unable to determine reserved CPU resources for static policy; ",
    ),
    (
        {**STATIC, "kubeReserved": {"cpu": "0"}, "systemReserved": {"cpu": "0"}},
        "[cpumanager] unable to determine reserved CPU resources for static policy",
    ),
    ({"cpuManagerPolicy": "Static"}, 'unknown policy: "Static"'),
    ({"memoryManagerPolicy": "static"}, 'unknown policy: "static"'),
    (
        {"topologyManagerPolicy": "strict"},
        'invalid configuration: topologyManagerPolicy (--topology-manager-policy) "strict" must '
        'be one of: ["none" "best-effort" "restricted" "single-numa-node"]',
    ),
    (
        {"topologyManagerScope": "node"},
        'invalid configuration: topologyManagerScope (--topology-manager-scope) "node" must be '
        'one of: "container", or "pod"',
    ),
    (
        {"reservedSystemCPUs": "0-x"},
        "invalid configuration: unable to parse reservedSystemCPUs (--reserved-cpus) 0-x, error:",
    ),
    (
        {"reservedSystemCPUs": "0", "systemReservedCgroup": "/system.slice"},
        "invalid configuration: can't use reservedSystemCPUs (--reserved-cpus) with",
    ),
    ({"kubeReserved": {"gpu": "1"}}, 'kubeReserved: cannot reserve "gpu" resource'),
    ({"systemReserved": {"cpu": "-1"}}, 'systemReserved: resource quantity for "cpu" cannot be'),
    ({"kubeReserved": {"cpu": "lots"}}, "kubeReserved.cpu: 'lots' is not a quantity"),
    ({"kubeReserved": {"cpu": True}}, "kubeReserved.cpu: expected a quantity"),
    ({"kubeReserved": ["cpu"]}, "kubeReserved: expected a mapping"),
    (
        {"cpuManagerReconcilePeriod": "soon"},
        'cpuManagerReconcilePeriod: time: invalid duration "soon"',
    ),
    ({"cpuManagerPolicy": 1}, "cpuManagerPolicy: expected a string, got 1"),
    ({"cpuManagerPolicyOptions": {"full-pcpus-only": None}}, "cpuManagerPolicyOptions.full-pcpus"),
    ({"featureGates": {"X": "yes"}}, "featureGates.X: expected true or false, got 'yes'"),
    (
        {"kind": "KubeProxyConfiguration"},
        "kind 'KubeProxyConfiguration' is not KubeletConfiguration",
    ),
    ({"evictionHard": {"memory.available": 5}}, "evictionHard.memory.available: expected a string"),
    (
        {"memoryManagerPolicy": "Static"},
        "[memorymanager] you should specify the system reserved memory",
    ),
    (
        {"reservedMemory": [{"numaNode": 0, "limits": {"cpu": "1"}}]},
        'invalid configuration: the limit type "cpu" for NUMA node 0 is not supported',
    ),
    (
        {"reservedMemory": [{"numaNode": 1, "limits": {"memory": "0"}}]},
        "invalid configuration: reserved memory may not be zero for NUMA node 1 and resource "
        '"memory"',
    ),
    (
        {
            "reservedMemory": [
                {"numaNode": 0, "limits": {"memory": "1Gi"}},
                {"numaNode": 0, "limits": {"memory": "2Gi"}},
            ]
        },
        "invalid configuration: the reserved memory has a duplicate value for NUMA node 0 and "
        'resource "memory"',
    ),
    ({"reservedMemory": [{"numaNode": -1}]}, "reservedMemory[0].numaNode: expected a NUMA node id"),
    ({"reservedMemory": {"numaNode": 0}}, "reservedMemory: expected a list"),
    (
        {"reservedMemory": [{"numaNode": 0, "limits": {"memory": "1.5"}}]},
        "reservedMemory[0].limits.memory: '1.5' is not a whole number of bytes",
    ),
]


@pytest.mark.parametrize(("fields", "message"), INVALID, ids=[m[:60] for _, m in INVALID])
def test_invalid_configurations(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        KubeletConfig.from_mapping(fields)
    assert caught.value.message.startswith(message), caught.value.message
    assert "\n" not in caught.value.message


def test_not_a_mapping() -> None:
    with pytest.raises(ConfigError, match="configuration: expected a mapping"):
        KubeletConfig.from_mapping(["cpuManagerPolicy"])


# --- reserved memory against the machine ---------------------------------------------------

MEMORY = {"memoryManagerPolicy": "Static", "kubeReserved": {"memory": "512Mi"}}


def test_reserved_memory_adds_up_with_default_eviction() -> None:
    config = cfg(
        **MEMORY,
        reservedMemory=[
            {"numaNode": 0, "limits": {"memory": "312Mi"}},
            {"numaNode": 1, "limits": {"memory": "300Mi"}},
        ],
    )
    assert reserved_memory_per_node(config, (0, 1)) == {
        0: {"memory": 312 * 2**20},
        1: {"memory": 300 * 2**20},
    }


def test_reserved_memory_total_mismatch() -> None:
    config = cfg(**MEMORY, reservedMemory=[{"numaNode": 0, "limits": {"memory": "1Gi"}}])
    with pytest.raises(
        ConfigError,
        match=r'^the total amount "1Gi" of type "memory" is not equal to the value "612Mi" '
        r"determined by Node Allocatable feature;",
    ):
        reserved_memory_per_node(config, (0, 1))


def test_reserved_memory_unknown_node() -> None:
    config = cfg(**MEMORY, reservedMemory=[{"numaNode": 3, "limits": {"memory": "612Mi"}}])
    with pytest.raises(ConfigError, match="references a NUMA node 3 that does not exist"):
        reserved_memory_per_node(config, (0, 1))


def test_reserved_memory_percentage_eviction_needs_capacity() -> None:
    # The kubelet's 10% of 10Gi is 1073741840 bytes (float32 arithmetic), not 1Gi: with
    # kubeReserved 512Mi the reservation must add up to 1610612752 bytes, and "1536Mi"
    # (what exact arithmetic gives) is refused.
    exact = cfg(
        **MEMORY,
        evictionHard={"memory.available": "10%"},
        reservedMemory=[{"numaNode": 0, "limits": {"memory": "1610612752"}}],
    )
    assert reserved_memory_per_node(exact, (0,), memory_capacity_bytes=10 * 2**30) == {
        0: {"memory": 1610612752}
    }
    with pytest.raises(ConfigError, match="is a percentage"):
        reserved_memory_per_node(exact, (0,))
    rounded = cfg(
        **MEMORY,
        evictionHard={"memory.available": "10%"},
        reservedMemory=[{"numaNode": 0, "limits": {"memory": "1536Mi"}}],
    )
    with pytest.raises(ConfigError, match='"1536Mi" of type "memory" is not equal'):
        reserved_memory_per_node(rounded, (0,), memory_capacity_bytes=10 * 2**30)


# The kubelet's GetThresholdQuantity, measured with Go: float32(percent) / 100 in float32,
# times the capacity in float64, truncated.
@pytest.mark.parametrize(
    ("threshold", "capacity", "kubelet"),
    [
        ("10%", 10 * 2**30, 1073741840),
        ("5%", 128 * 2**30, 6871947776),
        ("2.5%", 10 * 2**30, 268435460),
        ("2.5%", 7 * 2**30, 187904822),
        ("7.3%", 12 * 2**30, 940597824),
        ("33.3%", 10 * 2**30, 3575560320),
        ("0.5%", 128 * 2**30, 687194752),
        ("0%", 10 * 2**30, 0),
        ("100%", 10 * 2**30, 0),  # ignored by the kubelet's parser, as 0% is
    ],
)
def test_percentage_eviction_is_the_kubelets_arithmetic(
    threshold: str, capacity: int, kubelet: int
) -> None:
    assert eviction_bytes(threshold, capacity) == kubelet


# The kubelet's refusals, measured with its memory manager (v1.32): each total is printed in
# the Quantity format it keeps (the last reservation's; the node-allocatable reservation's
# first non-zero term's), e.g. "550M" rather than 550000000 bytes.
@pytest.mark.parametrize(
    ("fields", "reserved", "kubelet"),
    [
        ({"kubeReserved": {"memory": "500M"}, "evictionHard": {"memory.available": "0%"}},
         [(0, "400M"), (1, "150M")], ('"550M"', '"500M"')),
        ({"kubeReserved": {"memory": "500M"}, "evictionHard": {"memory.available": "100Mi"}},
         [(0, "500M")], ('"500M"', '"604857600"')),
        ({"kubeReserved": {"memory": "1G"}, "systemReserved": {"memory": "500M"},
          "evictionHard": {"memory.available": "0%"}}, [(0, "1G")], ('"1G"', '"1500M"')),
        ({"kubeReserved": {"memory": "1Gi"}, "evictionHard": {"memory.available": "0%"}},
         [(0, "1000Mi")], ('"1000Mi"', '"1Gi"')),
        ({"kubeReserved": {"memory": "1Gi"}, "evictionHard": {"memory.available": "0%"}},
         [(0, "1024Mi"), (1, "1Ki")], ('"1048577Ki"', '"1Gi"')),
        ({"kubeReserved": {"memory": "1.5Gi"}, "evictionHard": {"memory.available": "0%"}},
         [(0, "1G")], ('"1G"', '"1536Mi"')),
        ({"kubeReserved": {"memory": "1001k"}, "evictionHard": {"memory.available": "0%"}},
         [(0, "1M")], ('"1M"', '"1001k"')),
    ],
)  # fmt: skip
def test_reserved_memory_refusal_prints_the_kubelets_quantities(
    fields: dict[str, Any], reserved: list[tuple[int, str]], kubelet: tuple[str, str]
) -> None:
    entries = [{"numaNode": node, "limits": {"memory": amount}} for node, amount in reserved]
    config = cfg(memoryManagerPolicy="Static", reservedMemory=entries, **fields)
    have, want = kubelet
    expected = (
        f'^the total amount {have} of type "memory" is not equal to the value {want} '
        "determined by Node Allocatable feature;"
    )
    with pytest.raises(ConfigError, match=expected):
        reserved_memory_per_node(config, (0, 1))


def test_hugepages_reservation_must_match_too() -> None:
    config = cfg(
        memoryManagerPolicy="Static",
        evictionHard={},
        kubeReserved={"memory": "1Gi"},
        reservedMemory=[{"numaNode": 0, "limits": {"memory": "1Gi", "hugepages-2Mi": "4Mi"}}],
    )
    with pytest.raises(
        ConfigError, match='"4Mi" of type "hugepages-2Mi" is not equal to the value'
    ):
        reserved_memory_per_node(config, (0,))


def test_none_policy_skips_the_total_check() -> None:
    config = cfg(reservedMemory=[{"numaNode": 0, "limits": {"memory": "1Gi"}}])
    assert reserved_memory_per_node(config, (0,)) == {0: {"memory": 2**30}}


# --- the file adapter ----------------------------------------------------------------------


def test_read_file(tmp_path: Path) -> None:
    path = tmp_path / "kubelet.yaml"
    path.write_text(
        "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
        "cpuManagerPolicy: static\nreservedSystemCPUs: '0,1'\n",
        encoding="utf-8",
    )
    assert read_kubelet_config(path).reserved_cpus == CPUSet.parse("0-1")


def test_empty_file_is_all_defaults(tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text("", encoding="utf-8")
    assert read_kubelet_config(path) == KubeletConfig()


def test_file_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not exist"):
        read_kubelet_config(tmp_path / "missing.yaml")
    with pytest.raises(ConfigError, match=r"^k\.yaml: not valid YAML or JSON at line 1"):
        kubelet_config_from_text("cpuManagerPolicy: [", source="k.yaml")
    with pytest.raises(ConfigError, match=r'^k\.yaml: unknown policy: "x"'):
        kubelet_config_from_text("cpuManagerPolicy: x", source="k.yaml")


# Go's resource.Quantity (apimachinery, Kubernetes 1.32): String() of NewQuantity(value,
# format), and the format MustParse gives each text, measured.
@pytest.mark.parametrize(
    ("amount", "fmt", "go"),
    [
        (1 << 40, "BinarySI", "1Ti"),
        (1000, "BinarySI", "1k"),
        (1025, "BinarySI", "1025"),
        (3 << 60, "BinarySI", "3Ei"),
        (1500000000, "DecimalSI", "1500M"),
        (123456789, "DecimalSI", "123456789"),
        (5 << 50, "DecimalSI", "5629499534213120"),
        (1000000000, "DecimalExponent", "1e9"),
        (1500000000, "DecimalExponent", "1500e6"),
    ],
)
def test_quantity_text_is_gos(amount: int, fmt: str, go: str) -> None:
    assert go_quantity_text(amount, fmt) == go


@pytest.mark.parametrize(
    ("text", "fmt"),
    [("1e9", "DecimalExponent"), ("2e3", "DecimalExponent"), ("1E", "DecimalSI"),
     ("5Ki", "BinarySI"), ("1.5Gi", "BinarySI"), ("500M", "DecimalSI"), ("12", "DecimalSI"),
     ("1m", "DecimalSI"), (12, "DecimalSI")],
)  # fmt: skip
def test_quantity_format_is_gos(text: object, fmt: str) -> None:
    assert quantity_format(text) == fmt
