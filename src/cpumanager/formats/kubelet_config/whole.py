"""The whole KubeletConfiguration as a kubelet release decodes, defaults and validates it (pure).

The rest of this package reads the fields the resource managers use; the kubelet refuses a
file for *any* bad field. Its stages over every v1beta1 field, gathered here:

* **decoding** (``go_decode.py``: ``decode_fields``) and **defaulting** (``v1beta1.py``:
  ``defaulted``);
* **feature gates** (``gates.py``: ``gate_error``): ``SetFromMap``'s refusals (an unknown
  gate, a locked gate set to the other value);
* **validation** (``validation_messages``, here, with its longer sections in ``checks.py``):
  ``ValidateKubeletConfiguration`` check by check, in its order, with its messages; rules
  that came in a given release are keyed by release (:data:`RULE_SOURCES`).

:func:`aggregate` joins messages as the kubelet's aggregate error prints them;
:func:`kubelet_text` is the line the kubelet ends with at a stage.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Final

from cpumanager.core.versions import Release
from cpumanager.formats.kubelet_config.checks import (
    cpuset_error,
    crash_loop_messages,
    enforcement_messages,
    go_duration_text,
    go_float,
    go_q,
    go_struct_duration,
    negative,
    pod_logs_messages,
    reserved_memory_messages,
    shutdown_messages,
    swap_messages,
    taint_messages,
)
from cpumanager.formats.kubelet_config.component_checks import logging_messages, tracing_messages
from cpumanager.formats.kubelet_config.gates import (
    enabled,
    gate_error,
    gate_refusal,
    gates_panic,
)
from cpumanager.formats.kubelet_config.go_decode import decode_fields
from cpumanager.formats.kubelet_config.v1beta1 import FIELD_KINDS, defaulted

_S = 10**9  # nanoseconds per second

__all__ = [
    "FIELD_KINDS",
    "RULE_SINCE",
    "RULE_SOURCES",
    "aggregate",
    "decode_fields",
    "defaulted",
    "gate_error",
    "gate_refusal",
    "gates_panic",
    "kubelet_text",
    "go_duration_text",
    "validation_messages",
]


# --- ValidateKubeletConfiguration --------------------------------------------------------

# rule -> the first release that has it, and how that is known ("gate X": the field came
# with feature gate X, dated by 1.32's registry; "#N": the kubernetes/kubernetes PR; "open":
# assumed, see the open questions in docs/versions.md). A rule with no entry is in every
# modelled release (1.18 on).
RULE_SOURCES: Final[Mapping[str, tuple[Release, str]]] = {
    "imageMaximumGCAge": ((1, 29), "gate ImageMaximumGCAge"),
    "containerRuntimeEndpoint": ((1, 27), "open"),
    "containerLogMaxWorkers": ((1, 30), "open"),
    "containerLogMonitorInterval": ((1, 30), "open"),
    "podLogsDir": ((1, 30), "#112957"),
    "runOnce": ((1, 32), "open: #126336 merged for 1.31 or 1.32"),
    "crashLoopBackOff": ((1, 32), "gate KubeletCrashLoopBackOffMax"),
    "enableSystemLogQuery": ((1, 27), "gate NodeLogQuery"),
    "maxParallelImagePulls": ((1, 27), "open"),
    "memorySwap": ((1, 22), "gate NodeSwap"),
    "shutdownGracePeriodByPodPriority": ((1, 23), "gate GracefulNodeShutdownBasedOnPodPriority"),
    "memoryThrottlingFactor": ((1, 22), "gate MemoryQoS"),
    "tracing": ((1, 25), "gate KubeletTracing"),
    "enforce-compressible": ((1, 31), "open"),
    "containerLogMaxFiles": ((1, 33), "#129072"),
    "imageMinimumGCAge-negative": ((1, 36), "#135997"),
}
RULE_SINCE: Final[Mapping[str, Release]] = {
    rule: since for rule, (since, _) in RULE_SOURCES.items()
}


def _has(rule: str, release: Release) -> bool:
    return RULE_SINCE.get(rule, (1, 0)) <= release


_ENFORCE = "enforceNodeAllocatable (--enforce-node-allocatable)"
_ENFORCEMENT_KEYS = ("pods", "system-reserved", "system-reserved-compressible",
                     "kube-reserved", "kube-reserved-compressible", "none")  # fmt: skip
_TOPOLOGY_POLICIES = ("none", "best-effort", "restricted", "single-numa-node")
_HAIRPIN = ("none", "hairpin-veth", "promiscuous-bridge")
_CPUSET = re.compile(r"^$|^\d+(-\d+)?(,\d+(-\d+)?)*$")


def validation_messages(
    kc: Mapping[str, object], release: Release, gates: Mapping[str, bool]
) -> list[str]:
    """``ValidateKubeletConfiguration``'s messages for a decoded, defaulted configuration."""
    errors: list[str] = []
    add = errors.append

    def num(name: str) -> int:
        value = kc.get(name, 0)
        return value if isinstance(value, int) else 0

    def on(gate: str) -> bool:
        return enabled(gates, gate, release)

    if num("nodeLeaseDurationSeconds") <= 0:
        add("invalid configuration: nodeLeaseDurationSeconds must be greater than 0")
    if kc.get("systemCgroups") and not kc.get("cgroupRoot"):
        add(
            "invalid configuration: systemCgroups (--system-cgroups) was specified and "
            "cgroupRoot (--cgroup-root) was not specified"
        )
    for name, flag in (("eventBurst", "event-burst"), ("eventRecordQPS", "event-qps")):
        if num(name) < 0:
            add(negative(name, flag, num(name)))
    port = num("healthzPort")
    if port != 0 and not 1 <= port <= 65535:
        add(
            f"invalid configuration: healthzPort (--healthz-port) {port} must be between 1 "
            "and 65535, inclusive"
        )
    quota = kc.get("cpuCFSQuotaPeriod", 100 * 10**6)
    assert isinstance(quota, int)
    if not on("CustomCPUCFSQuotaPeriod") and quota != 100 * 10**6:
        add(
            f"invalid configuration: cpuCFSQuotaPeriod (--cpu-cfs-quota-period) "
            f"{go_struct_duration(quota)} requires feature gate CustomCPUCFSQuotaPeriod"
        )
    if on("CustomCPUCFSQuotaPeriod") and not 10**6 <= quota <= _S:
        add(
            f"invalid configuration: cpuCFSQuotaPeriod (--cpu-cfs-quota-period) "
            f"{go_struct_duration(quota)} must be between 1ms and 1sec, inclusive"
        )
    high, low = num("imageGCHighThresholdPercent"), num("imageGCLowThresholdPercent")
    for name, flag, value in (
        ("imageGCHighThresholdPercent", "image-gc-high-threshold", high),
        ("imageGCLowThresholdPercent", "image-gc-low-threshold", low),
    ):
        if not 0 <= value <= 100:
            add(
                f"invalid configuration: {name} (--{flag}) {value} must be between 0 and 100, "
                "inclusive"
            )
    if low >= high:
        add(
            f"invalid configuration: imageGCLowThresholdPercent (--image-gc-low-threshold) {low}"
            f" must be less than imageGCHighThresholdPercent (--image-gc-high-threshold) {high}"
        )
    if _has("imageMaximumGCAge", release):
        oldest, youngest = num("imageMaximumGCAge"), num("imageMinimumGCAge")
        if oldest != 0 and not on("ImageMaximumGCAge"):
            add(
                "invalid configuration: ImageMaximumGCAge feature gate is required for Kubelet "
                "configuration option imageMaximumGCAge"
            )
        if youngest < 0 and _has("imageMinimumGCAge-negative", release):
            add(
                f"invalid configuration: imageMinimumGCAge {go_duration_text(youngest)} must not "
                "be negative"
            )
        if oldest < 0:
            add(
                f"invalid configuration: imageMaximumGCAge {go_duration_text(oldest)} must not "
                "be negative"
            )
        if oldest > 0 and oldest <= youngest:
            add(
                f"invalid configuration: imageMaximumGCAge {go_duration_text(oldest)} must be "
                f"greater than imageMinimumGCAge {go_duration_text(youngest)}"
            )
    for name, flag in (("iptablesDropBit", "iptables-drop-bit"),
                       ("iptablesMasqueradeBit", "iptables-masquerade-bit")):  # fmt: skip
        if not 0 <= num(name) <= 31:
            add(
                f"invalid configuration: {name} (--{flag}) {num(name)} must be between 0 and 31,"
                " inclusive"
            )
    for name, flag in (("kubeAPIBurst", "kube-api-burst"), ("kubeAPIQPS", "kube-api-qps")):
        if num(name) < 0:
            add(negative(name, flag, num(name)))
    if num("nodeStatusMaxImages") < -1:
        add(
            "invalid configuration: nodeStatusMaxImages (--node-status-max-images) "
            f"{num('nodeStatusMaxImages')} must be -1 or greater"
        )
    for name, flag in (("maxOpenFiles", "max-open-files"), ("maxPods", "max-pods")):
        if num(name) < 0:
            add(negative(name, flag, num(name)))
    if not -1000 <= num("oomScoreAdj") <= 1000:
        add(
            f"invalid configuration: oomScoreAdj (--oom-score-adj) {num('oomScoreAdj')} must be "
            "between -1000 and 1000, inclusive"
        )
    if num("podsPerCore") < 0:
        add(
            f"invalid configuration: podsPerCore (--pods-per-core) {num('podsPerCore')} must not "
            "be a negative number"
        )
    if not 1 <= num("port") <= 65535:
        add(
            f"invalid configuration: port (--port) {num('port')} must be between 1 and 65535, "
            "inclusive"
        )
    read_only = num("readOnlyPort")
    if read_only != 0 and not 1 <= read_only <= 65535:
        add(
            f"invalid configuration: readOnlyPort (--read-only-port) {read_only} must be between "
            "0 and 65535, inclusive"
        )
    for name, flag in (("registryBurst", "registry-burst"), ("registryPullQPS", "registry-qps")):
        if num(name) < 0:
            add(negative(name, flag, num(name)))
    parallel = kc.get("maxParallelImagePulls")
    if _has("maxParallelImagePulls", release) and isinstance(parallel, int):
        if parallel < 1:
            add(
                f"invalid configuration: maxParallelImagePulls {parallel} must be a positive number"
            )
        if kc.get("serializeImagePulls") and parallel > 1:
            add(
                "invalid configuration: maxParallelImagePulls cannot be larger than 1 unless "
                "SerializeImagePulls (--serialize-image-pulls) is set to false"
            )
    if kc.get("serverTLSBootstrap") and not on("RotateKubeletServerCertificate"):
        add(
            "invalid configuration: serverTLSBootstrap true requires feature gate "
            "RotateKubeletServerCertificate"
        )
    if kc.get("runOnce") and _has("runOnce", release):
        add(
            "invalid configuration: runOnce (--runOnce) true, Runonce mode has been deprecated "
            "and should not be set"
        )
    errors += taint_messages(kc.get("registerWithTaints"))
    policy = str(kc.get("topologyManagerPolicy", "none"))
    if policy not in _TOPOLOGY_POLICIES:
        choices = " ".join(go_q(p) for p in _TOPOLOGY_POLICIES)
        add(
            f"invalid configuration: topologyManagerPolicy (--topology-manager-policy) "
            f"{go_q(policy)} must be one of: [{choices}]"
        )
    scope = str(kc.get("topologyManagerScope", "container"))
    if scope not in ("container", "pod"):
        add(
            f"invalid configuration: topologyManagerScope (--topology-manager-scope) {go_q(scope)} "
            'must be one of: "container", or "pod"'
        )
    errors += shutdown_messages(kc, on)
    if _has("memorySwap", release):
        errors += swap_messages(kc, on)
    if _has("crashLoopBackOff", release):
        errors += crash_loop_messages(kc, on)
    errors += enforcement_messages(kc, compressible=_has("enforce-compressible", release))
    hairpin = str(kc.get("hairpinMode", "promiscuous-bridge"))
    if hairpin not in _HAIRPIN:
        add(
            f"invalid configuration: option {go_q(hairpin)} specified for hairpinMode "
            '(--hairpin-mode). Valid options are "none", "hairpin-veth" or "promiscuous-bridge"'
        )
    reserved = str(kc.get("reservedSystemCPUs", ""))
    if reserved:
        if kc.get("systemReservedCgroup") or kc.get("kubeReservedCgroup"):
            add(
                "invalid configuration: can't use reservedSystemCPUs (--reserved-cpus) with "
                "systemReservedCgroup (--system-reserved-cgroup) or kubeReservedCgroup "
                "(--kube-reserved-cgroup)"
            )
        problem = cpuset_error(reserved)
        if problem:
            add(
                f"invalid configuration: unable to parse reservedSystemCPUs (--reserved-cpus) "
                f"{reserved}, error: {problem}"
            )
    errors += reserved_memory_messages(kc.get("reservedMemory"))
    hidden = kc.get("showHiddenMetricsForVersion", "")
    previous = f"{release[0]}.{release[1] - 1}"
    if hidden and hidden != previous:
        add(
            "--show-hidden-metrics-for-version must be omitted or have the value "
            f"'{previous}'. Only the previous minor version is allowed"
        )
    errors += logging_messages(kc.get("logging"))
    if _has("tracing", release):
        errors += tracing_messages(kc.get("tracing"), gate_on=on("KubeletTracing"))
    factor = kc.get("memoryThrottlingFactor")
    in_range = isinstance(factor, float) and 0 < factor <= 1.0
    if isinstance(factor, float) and _has("memoryThrottlingFactor", release) and not in_range:
        add(
            f"invalid configuration: memoryThrottlingFactor {go_float(factor)} must be "
            "greater than 0 and less than or equal to 1.0"
        )
    if _has("containerRuntimeEndpoint", release) and not kc.get("containerRuntimeEndpoint"):
        add("invalid configuration: the containerRuntimeEndpoint was not specified or empty")
    if _has("enableSystemLogQuery", release) and kc.get("enableSystemLogQuery"):
        if not on("NodeLogQuery"):
            add(
                "invalid configuration: NodeLogQuery feature gate is required for "
                "enableSystemLogHandler"
            )
        if not kc.get("enableSystemLogHandler"):
            add(
                "invalid configuration: enableSystemLogHandler is required for enableSystemLogQuery"
            )
    if _has("containerLogMaxWorkers", release) and num("containerLogMaxWorkers") < 1:
        add("invalid configuration: containerLogMaxWorkers must be greater than or equal to 1")
    if _has("containerLogMonitorInterval", release) and num("containerLogMonitorInterval") < 3 * _S:
        add(
            "invalid configuration: containerLogMonitorInterval must be a positive time "
            "duration greater than or equal to 3s"
        )
    if _has("containerLogMaxFiles", release) and num("containerLogMaxFiles") <= 1:
        add("invalid configuration: containerLogMaxFiles must be greater than 1")
    if _has("podLogsDir", release):
        errors += pod_logs_messages(str(kc.get("podLogsDir", "")))
    return errors


def kubelet_text(stage: str, messages: Sequence[str]) -> str:
    """The line the kubelet ends with at ``stage``: validation's aggregate wrapped as
    ``failed to validate kubelet configuration, error: ...``, else the first refusal (the
    kubelet stops at the first file, gate or manager that refuses)."""
    first = messages[0]
    if stage == "starts":
        # the managers' own text (our remedy after "; " dropped), as Run wraps it
        return f"failed to run Kubelet: {first.split('; ')[0]}"
    if stage != "validates" or first.startswith("failed to set feature gates"):
        return first
    return f"failed to validate kubelet configuration, error: {aggregate(messages)}"


def aggregate(messages: Sequence[str]) -> str:
    """The kubelet's aggregate error text: one message alone, else ``[a, b]`` (duplicates once)."""
    unique = list(dict.fromkeys(messages))
    if len(unique) == 1:
        return unique[0]
    return "[" + ", ".join(unique) + "]"
