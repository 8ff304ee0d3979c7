"""The whole KubeletConfiguration as each release validates it (whole.py, gates.py).

Cases come from ValidateKubeletConfiguration and v1beta1 defaulting as released: 1.32's
code line by line (its messages), and the rules whose release is established (the gate
histories of 1.32's registry, the release table in core/versions.py).
"""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from cpumanager.core.versions import RELEASES, Release
from cpumanager.formats.kubelet_config import whole
from cpumanager.formats.kubelet_config.gates import gate_spec, known_gates

V132: Release = (1, 32)
IC = "invalid configuration: "


def messages(fields: Mapping[str, object], release: Release = V132) -> list[str]:
    typed = whole.decode_fields(fields)
    gates = typed.get("featureGates")
    gate_map = dict(gates) if isinstance(gates, Mapping) else {}
    return whole.validation_messages(whole.defaulted(typed, release), release, gate_map)


# (fields, the messages 1.32 gives, in its order)
VALIDATION_1_32 = [
    ({}, []),
    ({"nodeLeaseDurationSeconds": -1}, [IC + "nodeLeaseDurationSeconds must be greater than 0"]),
    ({"nodeLeaseDurationSeconds": 0}, []),  # zero is unset: defaulted to 40
    (
        {"shutdownGracePeriod": "500ms"},
        [IC + "shutdownGracePeriod {500ms} must be either zero or otherwise >= 1 sec"],
    ),
    (
        {"shutdownGracePeriod": "10s", "shutdownGracePeriodCriticalPods": "20s"},
        [IC + "shutdownGracePeriodCriticalPods {20s} must be <= shutdownGracePeriod {10s}"],
    ),
    (
        {"shutdownGracePeriod": "-1s", "shutdownGracePeriodCriticalPods": "500ms"},
        [
            IC + "shutdownGracePeriodCriticalPods {500ms} must be <= shutdownGracePeriod {-1s}",
            IC + "shutdownGracePeriod {-1s} must be either zero or otherwise >= 1 sec",
            IC
            + "shutdownGracePeriodCriticalPods {500ms} must be either zero or otherwise >= 1 sec",
        ],
    ),
    (
        {"featureGates": {"GracefulNodeShutdown": False}, "shutdownGracePeriod": "10s"},
        [
            IC + "specifying shutdownGracePeriod or shutdownGracePeriodCriticalPods requires "
            "feature gate GracefulNodeShutdown"
        ],
    ),
    (
        {"shutdownGracePeriod": "10s", "shutdownGracePeriodByPodPriority": [{"priority": 1}]},
        [
            IC + "Cannot specify both shutdownGracePeriodByPodPriority and shutdownGracePeriod "
            "at the same time"
        ],
    ),
    (
        {"imageMaximumGCAge": "1m"},  # the minimum defaults to 2m
        [IC + "imageMaximumGCAge 1m0s must be greater than imageMinimumGCAge 2m0s"],
    ),
    (
        {"imageMaximumGCAge": "2m", "imageMinimumGCAge": "2m"},
        [IC + "imageMaximumGCAge 2m0s must be greater than imageMinimumGCAge 2m0s"],
    ),
    ({"imageMaximumGCAge": "-1m"}, [IC + "imageMaximumGCAge -1m0s must not be negative"]),
    ({"imageMaximumGCAge": "3m"}, []),
    (
        {"featureGates": {"ImageMaximumGCAge": False}, "imageMaximumGCAge": "3m"},
        [
            IC + "ImageMaximumGCAge feature gate is required for Kubelet configuration option "
            "imageMaximumGCAge"
        ],
    ),
    (
        {"hairpinMode": "veth"},
        [
            IC + 'option "veth" specified for hairpinMode (--hairpin-mode). Valid options are '
            '"none", "hairpin-veth" or "promiscuous-bridge"'
        ],
    ),
    ({"hairpinMode": "hairpin-veth"}, []),
    (
        {"runOnce": True},
        [IC + "runOnce (--runOnce) true, Runonce mode has been deprecated and should not be set"],
    ),
    (
        {"imageGCHighThresholdPercent": 101, "imageGCLowThresholdPercent": -1},
        [
            IC + "imageGCHighThresholdPercent (--image-gc-high-threshold) 101 must be between 0 "
            "and 100, inclusive",
            IC + "imageGCLowThresholdPercent (--image-gc-low-threshold) -1 must be between 0 "
            "and 100, inclusive",
        ],
    ),
    (
        {"imageGCHighThresholdPercent": 80},  # low defaults to 80
        [
            IC + "imageGCLowThresholdPercent (--image-gc-low-threshold) 80 must be less than "
            "imageGCHighThresholdPercent (--image-gc-high-threshold) 80"
        ],
    ),
    (
        {"systemCgroups": "/system"},
        [
            IC + "systemCgroups (--system-cgroups) was specified and cgroupRoot (--cgroup-root) "
            "was not specified"
        ],
    ),
    (
        {"healthzPort": 70000, "readOnlyPort": 70000},
        [
            IC + "healthzPort (--healthz-port) 70000 must be between 1 and 65535, inclusive",
            IC + "readOnlyPort (--read-only-port) 70000 must be between 0 and 65535, inclusive",
        ],
    ),
    (
        {"cpuCFSQuotaPeriod": "50ms"},
        [
            IC + "cpuCFSQuotaPeriod (--cpu-cfs-quota-period) {50ms} requires feature gate "
            "CustomCPUCFSQuotaPeriod"
        ],
    ),
    (
        {"featureGates": {"CustomCPUCFSQuotaPeriod": True}, "cpuCFSQuotaPeriod": "2s"},
        [
            IC + "cpuCFSQuotaPeriod (--cpu-cfs-quota-period) {2s} must be between 1ms and 1sec, "
            "inclusive"
        ],
    ),
    (
        {"iptablesDropBit": 32, "iptablesMasqueradeBit": -1},
        [
            IC + "iptablesDropBit (--iptables-drop-bit) 32 must be between 0 and 31, inclusive",
            IC + "iptablesMasqueradeBit (--iptables-masquerade-bit) -1 must be between 0 and "
            "31, inclusive",
        ],
    ),
    (
        {"nodeStatusMaxImages": -2, "oomScoreAdj": -1001},
        [
            IC + "nodeStatusMaxImages (--node-status-max-images) -2 must be -1 or greater",
            IC + "oomScoreAdj (--oom-score-adj) -1001 must be between -1000 and 1000, inclusive",
        ],
    ),
    (
        {"eventBurst": -1, "registryPullQPS": -1, "maxPods": -1},
        [
            IC + "eventBurst (--event-burst) -1 must not be a negative number",
            IC + "maxPods (--max-pods) -1 must not be a negative number",
            IC + "registryPullQPS (--registry-qps) -1 must not be a negative number",
        ],
    ),
    (
        {"maxParallelImagePulls": 3, "serializeImagePulls": True},
        [
            IC + "maxParallelImagePulls cannot be larger than 1 unless SerializeImagePulls "
            "(--serialize-image-pulls) is set to false"
        ],
    ),
    ({"maxParallelImagePulls": 3}, []),  # serializeImagePulls then defaults to false
    ({"maxParallelImagePulls": 0}, [IC + "maxParallelImagePulls 0 must be a positive number"]),
    (
        {"registerWithTaints": [{"key": "bad key!", "effect": "NoSchedule"}]},
        ["invalid taint: {bad key!  NoSchedule <nil>}"],
    ),
    ({"registerWithTaints": [{"key": "example.com/gpu", "effect": "NoSchedule"}]}, []),
    (
        {"topologyManagerPolicy": "strict", "topologyManagerScope": "node"},
        [
            IC + 'topologyManagerPolicy (--topology-manager-policy) "strict" must be one of: '
            '["none" "best-effort" "restricted" "single-numa-node"]',
            IC + 'topologyManagerScope (--topology-manager-scope) "node" must be one of: '
            '"container", or "pod"',
        ],
    ),
    (
        {"memorySwap": {"swapBehavior": "Unlimited"}},
        [IC + 'memorySwap.swapBehavior "Unlimited" must be one of: "", "LimitedSwap" or "NoSwap"'],
    ),
    (
        {"featureGates": {"NodeSwap": False}, "memorySwap": {"swapBehavior": "LimitedSwap"}},
        [IC + "memorySwap.swapBehavior cannot be set when NodeSwap feature flag is disabled"],
    ),
    (
        {"crashLoopBackOff": {"maxContainerRestartPeriod": "10s"}},
        [
            IC + "FeatureGate KubeletCrashLoopBackOffMax not enabled, "
            "CrashLoopBackOff.MaxContainerRestartPeriod must not be set"
        ],
    ),
    (
        {
            "featureGates": {"KubeletCrashLoopBackOffMax": True},
            "crashLoopBackOff": {"maxContainerRestartPeriod": "500s"},
        },
        [
            IC + "CrashLoopBackOff.MaxContainerRestartPeriod (got: 500 seconds) must be set "
            "between 1s and 300s"
        ],
    ),
    ({"featureGates": {"KubeletCrashLoopBackOffMax": True}}, []),  # defaulted to 300s
    (
        {"enforceNodeAllocatable": ["pods", "bogus", "pods"], "cgroupsPerQOS": False},
        [
            IC + 'cgroupsPerQOS (--cgroups-per-qos) must be set to true when "pods" contained '
            "in enforceNodeAllocatable (--enforce-node-allocatable)",
            IC + 'option "bogus" specified for enforceNodeAllocatable '
            '(--enforce-node-allocatable). Valid options are "pods", "system-reserved", '
            '"system-reserved-compressible", "kube-reserved", "kube-reserved-compressible" or '
            '"none"',
            IC + 'duplicated enforcements "pods" in enforceNodeAllocatable '
            "(--enforce-node-allocatable)",
        ],
    ),
    (
        {"reservedSystemCPUs": "x", "systemReservedCgroup": "/system"},
        [
            IC + "can't use reservedSystemCPUs (--reserved-cpus) with systemReservedCgroup "
            "(--system-reserved-cgroup) or kubeReservedCgroup (--kube-reserved-cgroup)",
            IC + "unable to parse reservedSystemCPUs (--reserved-cpus) x, error: strconv.Atoi: "
            'parsing "x": invalid syntax',
        ],
    ),
    (
        {"memoryThrottlingFactor": 2},
        [IC + "memoryThrottlingFactor 2 must be greater than 0 and less than or equal to 1.0"],
    ),
    ({"containerRuntimeEndpoint": ""}, []),  # empty is unset: defaulted
    (
        {"enableSystemLogQuery": True, "enableSystemLogHandler": False},
        [
            IC + "NodeLogQuery feature gate is required for enableSystemLogHandler",
            IC + "enableSystemLogHandler is required for enableSystemLogQuery",
        ],
    ),
    (
        {"containerLogMaxWorkers": 0, "containerLogMonitorInterval": "1s"},
        [
            IC + "containerLogMaxWorkers must be greater than or equal to 1",
            IC + "containerLogMonitorInterval must be a positive time duration greater than or "
            "equal to 3s",
        ],
    ),
    (
        {"podLogsDir": "var/../log"},
        [
            IC + 'pod logs path "var/../log" must be absolute path',
            IC + 'pod logs path "var/../log" must be normalized',
        ],
    ),
    (
        {"podLogsDir": "/var/log/p\u00f6ds"},
        [IC + 'pod logs path "/var/log/p\u00f6ds" mut contains ASCII characters only'],
    ),
    (
        {"showHiddenMetricsForVersion": "1.30"},
        [
            "--show-hidden-metrics-for-version must be omitted or have the value '1.31'. Only "
            "the previous minor version is allowed"
        ],
    ),
    ({"showHiddenMetricsForVersion": "1.31"}, []),
    (
        {"reservedSystemCPUs": "1-2-3"},
        [
            IC + "unable to parse reservedSystemCPUs (--reserved-cpus) 1-2-3, error: strconv.Atoi: "
            'parsing "2-3": invalid syntax'
        ],
    ),
    (
        {"reservedSystemCPUs": "3-1"},
        [
            IC + "unable to parse reservedSystemCPUs (--reserved-cpus) 3-1, error: invalid range "
            '"3-1" (3 > 1)'
        ],
    ),
    (
        {"registerWithTaints": [{"key": "a", "effect": "NoSchedule", "timeAdded": "2020-01-01"}]},
        [IC + "taint.TimeAdded is not nil"],
    ),
    (
        {"featureGates": {"CustomCPUCFSQuotaPeriod": True}, "cpuCFSQuotaPeriod": "500us"},
        [
            IC + "cpuCFSQuotaPeriod (--cpu-cfs-quota-period) {500\u00b5s} must be between 1ms and "
            "1sec, inclusive"
        ],
    ),
    (
        {
            "featureGates": {"KubeletCrashLoopBackOffMax": True},
            "crashLoopBackOff": {"maxContainerRestartPeriod": "500ms"},
        },
        [
            IC + "CrashLoopBackOff.MaxContainerRestartPeriod (got: 0.5 seconds) must be set "
            "between 1s and 300s"
        ],
    ),
    (
        {"memoryThrottlingFactor": 0},
        [IC + "memoryThrottlingFactor 0 must be greater than 0 and less than or equal to 1.0"],
    ),
]


@pytest.mark.parametrize(("fields", "expected"), VALIDATION_1_32)
def test_validation_1_32(fields: dict[str, object], expected: list[str]) -> None:
    assert messages(fields) == expected


# (release, fields, expected): rules and defaults that differ per release.
PER_RELEASE = [
    # imageMaximumGCAge: no field before 1.29, alpha (off) in 1.29, beta (on) from 1.30
    ((1, 28), {"imageMaximumGCAge": "1m"}, []),
    (
        (1, 29),
        {"imageMaximumGCAge": "3m"},
        [
            IC + "ImageMaximumGCAge feature gate is required for Kubelet configuration option "
            "imageMaximumGCAge"
        ],
    ),
    ((1, 30), {"imageMaximumGCAge": "3m"}, []),
    # GracefulNodeShutdown: alpha (off) in 1.20, beta (on) from 1.21
    (
        (1, 20),
        {"shutdownGracePeriod": "30s"},
        [
            IC + "specifying shutdownGracePeriod or shutdownGracePeriodCriticalPods requires "
            "feature gate GracefulNodeShutdown"
        ],
    ),
    ((1, 21), {"shutdownGracePeriod": "30s"}, []),
    # NodeSwap: beta off until 1.29, on from 1.30
    (
        (1, 29),
        {"memorySwap": {"swapBehavior": "LimitedSwap"}},
        [IC + "memorySwap.swapBehavior cannot be set when NodeSwap feature flag is disabled"],
    ),
    ((1, 30), {"memorySwap": {"swapBehavior": "LimitedSwap"}}, []),
    # the previous minor is the only hidden-metrics version
    (
        (1, 37),
        {"showHiddenMetricsForVersion": "1.31"},
        [
            "--show-hidden-metrics-for-version must be omitted or have the value '1.36'. Only "
            "the previous minor version is allowed"
        ],
    ),
    # the kubelet's port: checked at every release (0 is unset: defaulted to 10250)
    (
        (1, 32),
        {"port": 70000},
        [IC + "port (--port) 70000 must be between 1 and 65535, inclusive"],
    ),
    ((1, 32), {"port": 0}, []),
    # containerLogMaxFiles > 1 from 1.33 (#129072); an explicit value, defaulted only when unset
    ((1, 32), {"containerLogMaxFiles": 1}, []),
    ((1, 33), {"containerLogMaxFiles": 1}, [IC + "containerLogMaxFiles must be greater than 1"]),
    # a negative imageMinimumGCAge is refused from 1.36 (#135997)
    ((1, 35), {"imageMinimumGCAge": "-1m"}, []),
    (
        (1, 36),
        {"imageMinimumGCAge": "-1m"},
        [IC + "imageMinimumGCAge -1m0s must not be negative"],
    ),
    # containerLogMaxWorkers / containerLogMonitorInterval arrived in 1.30
    ((1, 29), {"containerLogMaxWorkers": 0}, []),
    (
        (1, 30),
        {"containerLogMaxWorkers": 0},
        [IC + "containerLogMaxWorkers must be greater than or equal to 1"],
    ),
]


@pytest.mark.parametrize(("release", "fields", "expected"), PER_RELEASE)
def test_rules_per_release(
    release: Release, fields: dict[str, object], expected: list[str]
) -> None:
    assert messages(fields, release) == expected


GATES = [
    ((1, 32), {"NoSuchGate": True}, "unrecognized feature gate: NoSuchGate"),
    (
        (1, 32),
        {"MemoryManager": False},
        "cannot set feature gate MemoryManager to false, feature is locked to true",
    ),
    (
        (1, 26),
        {"CPUManager": False},
        "cannot set feature gate CPUManager to false, feature is locked to true",
    ),
    ((1, 25), {"CPUManager": False}, None),
    ((1, 32), {"CPUManager": True}, None),  # GA and locked on: setting it on is allowed
    ((1, 33), {"CPUManager": True}, "unrecognized feature gate: CPUManager"),  # removed
    ((1, 36), {"MemoryManager": True}, "unrecognized feature gate: MemoryManager"),
    # 1.32's registry dates each gate: one introduced later does not exist yet
    (
        (1, 31),
        {"KubeletCrashLoopBackOffMax": True},
        "unrecognized feature gate: KubeletCrashLoopBackOffMax",
    ),
    ((1, 32), {"KubeletCrashLoopBackOffMax": True}, None),
    ((1, 32), {"AllAlpha": False, "ContextualLogging": True}, None),
    # from 1.32 every locked gate is refused at once; an unknown one stops the walk
    (
        (1, 32),
        {"MemoryManager": False, "CPUManager": False},
        "[cannot set feature gate MemoryManager to false, feature is locked to true, "
        "cannot set feature gate CPUManager to false, feature is locked to true]",
    ),
    (
        (1, 31),
        {"CPUManager": False, "NoSuchGate": True},
        "cannot set feature gate CPUManager to false, feature is locked to true",
    ),
]


@pytest.mark.parametrize(("release", "gates", "expected"), GATES)
def test_feature_gates(release: Release, gates: dict[str, bool], expected: str | None) -> None:
    assert whole.gate_error(gates, release) == expected


def test_the_1_32_registry_is_whole_and_dated() -> None:
    names = known_gates(V132)
    assert names is not None
    assert {"CPUManager", "MemoryManager", "GracefulNodeShutdown", "NodeSwap"} <= names
    assert known_gates((1, 31)) is None  # not established: unknown gates are not refused
    assert gate_spec("GracefulNodeShutdown", (1, 20)) == (False, False)
    assert gate_spec("GracefulNodeShutdown", (1, 21)) == (True, False)
    assert gate_spec("MemoryManager", V132) == (True, True)


def test_a_gate_in_the_file_panics_from_1_32() -> None:
    assert whole.gates_panic(V132, {"NoSuchGate": True})
    assert not whole.gates_panic((1, 31), {"NoSuchGate": True})
    assert not whole.gates_panic(V132, None)
    text = whole.gate_refusal("unrecognized feature gate: X", V132, from_file=True)
    assert text == (
        "panic: failed to merge global and in-flight KubeletConfiguration while setting "
        "defaults, error: unrecognized feature gate: X"
    )
    assert whole.gate_refusal("unrecognized feature gate: X", (1, 31), from_file=True) == (
        "failed to set feature gates from initial flags-based config: unrecognized feature gate: X"
    )


TYPE_ERRORS = [
    (
        {"maxPods": "many"},
        "json: cannot unmarshal string into Go struct field "
        "KubeletConfiguration.maxPods of type int32",
    ),
    (
        {"maxPods": 1.5},
        "json: cannot unmarshal number 1.5 into Go struct field "
        "KubeletConfiguration.maxPods of type int32",
    ),
    (
        {"maxPods": 2**32},
        "json: cannot unmarshal number 4294967296 into Go struct field "
        "KubeletConfiguration.maxPods of type int32",
    ),
    (
        {"runOnce": "true"},
        "json: cannot unmarshal string into Go struct field "
        "KubeletConfiguration.runOnce of type bool",
    ),
    (
        {"shutdownGracePeriod": 10},
        "json: cannot unmarshal number into Go struct field "
        "KubeletConfiguration.shutdownGracePeriod of type string",
    ),
    # YAML reaches the decoder as JSON with sorted keys: the first error by key order
    (
        {"maxPods": "many", "cpuManagerPolicy": 3},
        "json: cannot unmarshal number into Go "
        "struct field KubeletConfiguration.cpuManagerPolicy of type string",
    ),
    ({"shutdownGracePeriod": "soon"}, 'time: invalid duration "soon"'),
    (
        {"featureGates": {"NodeSwap": "false"}},
        "json: cannot unmarshal string into Go struct "
        "field KubeletConfiguration.featureGates of type bool",
    ),
    # measured on 1.32 with random files (bench/diff_kubelet_config.py): nested structs are
    # decoded field by field, named by their Go types ...
    (
        {"reservedMemory": [{"numaNode": "0"}]},
        "json: cannot unmarshal string into Go struct field "
        "MemoryReservation.reservedMemory.numaNode of type int32",
    ),
    (
        {"reservedMemory": True},
        "json: cannot unmarshal bool into Go struct field "
        "KubeletConfiguration.reservedMemory of type []v1beta1.MemoryReservation",
    ),
    (
        {"reservedMemory": ["x"]},
        "json: cannot unmarshal string into Go struct field "
        "KubeletConfiguration.reservedMemory of type v1beta1.MemoryReservation",
    ),
    (
        {"authentication": {"anonymous": {"enabled": "x"}}},
        "json: cannot unmarshal string into Go struct field "
        "KubeletAnonymousAuthentication.authentication.anonymous.enabled of type bool",
    ),
    (
        {"logging": 3},
        "json: cannot unmarshal number into Go struct field "
        "KubeletConfiguration.logging of type v1.LoggingConfiguration",
    ),
    (
        {"registerWithTaints": [{"effect": 1}]},
        "json: cannot unmarshal number into Go struct field "
        "Taint.registerWithTaints.effect of type v1.TaintEffect",
    ),
    # ... a quantity's own decoder refuses at once, as a duration's does, even after an
    # earlier (kept) type mismatch ...
    (
        {"maxPods": "x", "reservedMemory": [{"numaNode": 0, "limits": {"memory": "x"}}]},
        "quantities must match the regular expression "
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    ),
    (
        {"reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Ki2"}}]},
        "unable to parse quantity's suffix",
    ),
    # ... a duration held by value reads null as "" ...
    ({"maxPods": "x", "syncFrequency": None}, 'time: invalid duration ""'),
    # ... logging's flush frequency is a duration or nanoseconds, refused at once ...
    ({"maxPods": "x", "logging": {"flushFrequency": "x"}}, 'time: invalid duration "x"'),
    (
        {"logging": {"flushFrequency": 1.5}},
        'invalid duration "1.5": json: cannot unmarshal number 1.5 into Go value of type '
        "time.Duration",
    ),
    # ... and a YAML number beyond int64 reaches the decoder as Go prints a float64
    (
        {"iptablesDropBit": -(2**63) - 1},
        "json: cannot unmarshal number -9223372036854776000 into Go struct field "
        "KubeletConfiguration.iptablesDropBit of type int32",
    ),
    (
        {"iptablesDropBit": 10**30},
        "json: cannot unmarshal number 1e+30 into Go struct field "
        "KubeletConfiguration.iptablesDropBit of type int32",
    ),
]


@pytest.mark.parametrize(("fields", "expected"), TYPE_ERRORS)
def test_type_errors_stop_decoding(fields: dict[str, object], expected: str) -> None:
    from cpumanager.errors import ConfigError

    with pytest.raises(ConfigError) as caught:
        whole.decode_fields(fields)
    assert caught.value.message == expected


def test_a_json_file_is_decoded_in_its_own_order_with_its_literals() -> None:
    import json

    from cpumanager.errors import ConfigError
    from cpumanager.formats.kubelet_config.go_decode import JsonFloat

    body = json.loads('{"podsPerCore": "x", "maxPods": 1.0}', parse_float=JsonFloat)
    with pytest.raises(ConfigError) as caught:  # measured: the file's order, not sorted
        whole.decode_fields(body, from_json=True)
    assert "podsPerCore of type int32" in caught.value.message
    with pytest.raises(ConfigError) as caught:  # measured: JSON's 1.0 is no int32
        whole.decode_fields(json.loads('{"maxPods": 1.0}', parse_float=JsonFloat), from_json=True)
    assert caught.value.message == (
        "json: cannot unmarshal number 1.0 into Go struct field KubeletConfiguration.maxPods "
        "of type int32"
    )
    assert whole.decode_fields({"maxPods": 1.0}) == {"maxPods": 1}  # YAML's 1.0 arrives as 1
    from cpumanager.formats.kubelet_config.go_decode import JsonInt

    body = json.loads('{"memoryThrottlingFactor": -0}', parse_int=JsonInt)
    assert messages(whole.decode_fields(body, from_json=True)) == [
        "invalid configuration: memoryThrottlingFactor -0 must be greater than 0 and less than "
        "or equal to 1.0"
    ]  # measured: JSON's -0 is a negative zero to Go


def test_a_repeated_json_key_is_decoded_where_each_appears() -> None:
    from cpumanager.errors import ConfigError

    pairs = [("nodeStatusUpdateFrequency", "ms"), ("nodeStatusUpdateFrequency", {"": ""})]
    body = {"nodeStatusUpdateFrequency": {"": ""}}
    with pytest.raises(ConfigError) as caught:  # measured: the first value's error
        whole.decode_fields(body, from_json=True, pairs=pairs)
    assert caught.value.message == 'time: invalid duration "ms"'


def test_a_null_in_a_string_list_is_the_empty_string() -> None:
    typed = whole.decode_fields({"enforceNodeAllocatable": [None]})
    assert typed["enforceNodeAllocatable"] == [""]
    assert messages({"enforceNodeAllocatable": [None]}, (1, 32))[0].startswith(
        'invalid configuration: option "" specified for enforceNodeAllocatable'
    )  # measured


def test_all_beta_and_all_alpha_set_the_gates_not_named() -> None:
    # measured: AllBeta=false turns GracefulNodeShutdown (beta) off, so its checks go
    fields = {"featureGates": {"AllBeta": False}, "shutdownGracePeriodCriticalPods": "-5s"}
    assert messages(fields) == []
    assert messages({**fields, "featureGates": {"AllBeta": False, "GracefulNodeShutdown": True}})
    assert messages({"featureGates": {"AllAlpha": True}, "cpuCFSQuotaPeriod": "50ms"}) == []


def test_floats_are_printed_as_go_prints_them() -> None:
    from cpumanager.formats.kubelet_config.checks import go_float

    assert messages({"memoryThrottlingFactor": 1099511627776}) == [
        "invalid configuration: memoryThrottlingFactor 1.099511627776e+12 must be greater than 0 "
        "and less than or equal to 1.0"
    ]  # measured
    assert [go_float(v) for v in (1e6, 123456.0, 1e-5, 0.0001, -0.0)] == [
        "1e+06", "123456", "1e-05", "0.0001", "-0"
    ]  # fmt: skip


TRACING = [  # measured on 1.32 (KubeletTracing is beta, on)
    (
        {"tracing": {"samplingRatePerMillion": -1}},
        "tracing.samplingRatePerMillion: Invalid value: -1: sampling rate must be positive",
    ),
    (
        {"tracing": {"endpoint": "http://x:1"}},
        'tracing.endpoint: Invalid value: "http://x:1": unsupported scheme: http.  Options are '
        "none, dns, unix, or unix-abstract.  See "
        "https://github.com/grpc/grpc/blob/master/doc/naming.md",
    ),
    (
        {"tracing": {"endpoint": "a:b"}},
        'tracing.endpoint: Invalid value: "dns://a:b": parse "dns://a:b": invalid port ":b" '
        "after host",
    ),
    (
        {"featureGates": {"KubeletTracing": False}, "tracing": {}},
        "invalid configuration: tracing should not be configured if KubeletTracing feature "
        "flag is disabled.",
    ),
]


@pytest.mark.parametrize(("fields", "expected"), TRACING)
def test_tracing(fields: dict[str, object], expected: str) -> None:
    assert messages(fields, (1, 32)) == [expected]
    assert messages({"tracing": {"endpoint": "unix:///t.sock"}}, (1, 32)) == []


def test_null_fields_stay_unset_and_unknown_fields_are_dropped() -> None:
    assert whole.decode_fields({"maxPods": None, "fooBar": 1}) == {}


def test_aggregate_is_the_kubelets() -> None:
    assert whole.aggregate(["a"]) == "a"
    assert whole.aggregate(["a", "b", "a"]) == "[a, b]"
    assert whole.kubelet_text("validates", ["a", "b"]) == (
        "failed to validate kubelet configuration, error: [a, b]"
    )
    assert whole.kubelet_text("starts", ['unknown policy: "Static"; use "static"', "b"]) == (
        'failed to run Kubelet: unknown policy: "Static"'
    )
    assert whole.kubelet_text("loads", ["first", "second"]) == "first"


@pytest.mark.parametrize("release", RELEASES)
def test_every_release_accepts_the_defaults(release: Release) -> None:
    assert messages({}, release) == []


def test_docs_list_every_release_keyed_rule() -> None:
    from pathlib import Path

    text = (Path(__file__).parents[3] / "docs" / "versions.md").read_text()
    for rule, (since, source) in whole.RULE_SOURCES.items():
        assert f"| `config.{rule}` | {since[0]}.{since[1]} |" in text, (rule, source)
    assert "| `config.evictionHard` | 1.30 | 5 signals | #121834 |" in text


def _refused_in(*spans: tuple[int, int]) -> dict[Release, bool]:
    """Release -> refused?, from inclusive minor spans (1.a .. 1.b)."""
    return {r: any(a <= r[1] <= b for a, b in spans) for r in RELEASES}


# (configuration, where the kubelet refuses it): the version matrix of the release-keyed
# rules, every modelled release (ranges from the rows of docs/versions.md).
MATRIX = [
    ({"imageMaximumGCAge": "3m"}, _refused_in((29, 29))),  # no field before, alpha in 1.29
    ({"runOnce": True}, _refused_in((32, 37))),
    ({"containerLogMaxFiles": 1}, _refused_in((33, 37))),
    ({"imageMinimumGCAge": "-1m"}, _refused_in((36, 37))),
    ({"memorySwap": {"swapBehavior": "LimitedSwap"}}, _refused_in((22, 29))),
    ({"shutdownGracePeriod": "30s"}, _refused_in((20, 20))),  # no gate before 1.20: unset
    ({"featureGates": {"MemoryManager": False}}, _refused_in((18, 20), (32, 37))),
    ({"featureGates": {"CPUManager": False}}, _refused_in((26, 37))),
    ({"hairpinMode": "veth"}, _refused_in((18, 37))),
    ({"nodeLeaseDurationSeconds": -1}, _refused_in((18, 37))),
]


@pytest.mark.parametrize(("fields", "refused"), MATRIX)
def test_the_version_matrix(fields: dict[str, object], refused: dict[Release, bool]) -> None:
    for release in RELEASES:
        typed = whole.decode_fields(fields)
        gates = typed.get("featureGates")
        gate_map = dict(gates) if isinstance(gates, Mapping) else {}
        verdict = whole.gate_error(gate_map, release) is not None or bool(messages(fields, release))
        assert verdict == refused[release], release
