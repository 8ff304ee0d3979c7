"""Kubelet flags as pflag parses them: value forms, map semantics, the kubelet's errors."""

from __future__ import annotations

import pytest

from cpumanager.errors import ConfigError
from cpumanager.formats.kubelet_config import parse_kubelet_flags

PARSED = [
    ("--cpu-manager-policy=static", "cpuManagerPolicy", "static"),
    ("--cpu-manager-policy static", "cpuManagerPolicy", "static"),
    ("--cpu_manager_policy=static", "cpuManagerPolicy", "static"),  # _ reads as -
    ("--cpu-manager-policy=none --cpu-manager-policy=static", "cpuManagerPolicy", "static"),
    ("--cpu-manager-reconcile-period=1m30s", "cpuManagerReconcilePeriod", "1m30s"),
    ("--reserved-cpus=0,16", "reservedSystemCPUs", "0,16"),
    ("--kube-reserved=cpu=1,memory=1Gi", "kubeReserved", {"cpu": "1", "memory": "1Gi"}),
    (
        "--kube-reserved=cpu=1 --kube-reserved=memory=2Gi",
        "kubeReserved",
        {"cpu": "1", "memory": "2Gi"},
    ),
    ("--system-reserved= cpu = 500m ,", "systemReserved", {"cpu": "500m"}),
    (
        "--eviction-hard=memory.available<1Gi,nodefs.available<10%",
        "evictionHard",
        {"memory.available": "1Gi", "nodefs.available": "10%"},
    ),
    (
        "--cpu-manager-policy-options=full-pcpus-only=true"
        " --cpu-manager-policy-options=distribute-cpus-across-numa=true",
        "cpuManagerPolicyOptions",
        {"full-pcpus-only": "true", "distribute-cpus-across-numa": "true"},
    ),
    (
        "--topology-manager-policy-options=max-allowable-numa-nodes=16",
        "topologyManagerPolicyOptions",
        {"max-allowable-numa-nodes": "16"},
    ),
    ("--feature-gates=A=true,B=false", "featureGates", {"A": True, "B": False}),
    ("--feature-gates=A=true --feature-gates=A=false", "featureGates", {"A": False}),
    (
        "--reserved-memory 0:memory=1Gi,hugepages-1Gi=2Gi --reserved-memory 1:memory=2Gi",
        "reservedMemory",
        [
            {"numaNode": 0, "limits": {"memory": "1Gi", "hugepages-1Gi": "2Gi"}},
            {"numaNode": 1, "limits": {"memory": "2Gi"}},
        ],
    ),
    (
        "--reserved-memory=0:memory=1Gi;1:memory=2Gi",
        "reservedMemory",
        [
            {"numaNode": 0, "limits": {"memory": "1Gi"}},
            {"numaNode": 1, "limits": {"memory": "2Gi"}},
        ],
    ),
    ("--cgroups-per-qos", "cgroupsPerQOS", True),
    ("--cgroups-per-qos=false", "cgroupsPerQOS", False),
    ("--max-pods=250", "maxPods", 250),
    (
        "--enforce-node-allocatable=pods,kube-reserved",
        "enforceNodeAllocatable",
        ["pods", "kube-reserved"],
    ),
    ("--enforce-node-allocatable=", "enforceNodeAllocatable", []),
    ("--topology-manager-scope=pod", "topologyManagerScope", "pod"),
    ("--memory-manager-policy=Static", "memoryManagerPolicy", "Static"),
]


@pytest.mark.parametrize(("line", "name", "value"), PARSED, ids=[p[0][:50] for p in PARSED])
def test_flag_values(line: str, name: str, value: object) -> None:
    flags = parse_kubelet_flags(line.split(" ") if "= " not in line else [line])
    assert flags.fields[name] == value
    assert flags.flag_names[name].startswith("--")


def test_unknown_flags_and_stray_words_are_skipped() -> None:
    words = ["/usr/bin/kubelet", "--node-ip", "10.0.0.1", "--v=2", "-h", "--max-pods", "9"]
    assert dict(parse_kubelet_flags(words).fields) == {"maxPods": 9}


def test_double_dash_ends_flags() -> None:
    assert parse_kubelet_flags(["--", "--cpu-manager-policy=static"]).fields == {}


def test_a_value_may_start_with_a_dash() -> None:
    # pflag takes the next word as the value whatever it looks like
    flags = parse_kubelet_flags(["--cpu-manager-policy", "--max-pods=3"])
    assert dict(flags.fields) == {"cpuManagerPolicy": "--max-pods=3"}


def test_path_flags() -> None:
    flags = parse_kubelet_flags(
        [
            "--config=/var/lib/kubelet/config.yaml",
            "--config-dir",
            "/etc/kubelet.d",
            "--root-dir=/data",
        ]
    )
    assert (flags.config, flags.config_dir, flags.root_dir) == (
        "/var/lib/kubelet/config.yaml",
        "/etc/kubelet.d",
        "/data",
    )


ERRORS = [
    (["--cpu-manager-policy"], "flag needs an argument: --cpu-manager-policy"),
    (
        ["--cpu-manager-reconcile-period=soon"],
        'invalid argument "soon" for "--cpu-manager-reconcile-period" flag: time: invalid duration',
    ),
    (
        ["--cpu-manager-reconcile-period=10"],
        'invalid argument "10" for "--cpu-manager-reconcile-period" flag: time: missing unit in '
        'duration "10"',
    ),
    (["--kube-reserved=cpu"], 'invalid argument "cpu" for "--kube-reserved" flag: malformed pair'),
    (["--eviction-hard=memory.available=1Gi"], "malformed pair, expect string<string"),
    (["--feature-gates=A=maybe"], "invalid value of A: maybe"),
    (["--max-pods=many"], 'invalid argument "many" for "--max-pods" flag: strconv.ParseInt'),
    (["--cgroups-per-qos=yes"], "strconv.ParseBool"),
    (["--reserved-memory=memory=1Gi"], "the reserved memory has incorrect format"),
    (["--reserved-memory=x:memory=1Gi"], "failed to convert the NUMA node ID"),
    (["--reserved-memory=0:memory"], "the reserved limit has incorrect value"),
    (["--reserved-memory=0:cpu=1"], 'memory type conversion error, unknown type: "cpu"'),
    (["--reserved-memory=0:memory=lots"], "failed to parse the quantatity"),
]


@pytest.mark.parametrize(("words", "message"), ERRORS, ids=[e[1][:40] for e in ERRORS])
def test_flag_errors(words: list[str], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_kubelet_flags(words)
    assert message in caught.value.message
    assert "\n" not in caught.value.message
