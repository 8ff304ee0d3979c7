"""The whole KubeletConfiguration as a kubelet release decodes, defaults and validates it (pure).

The rest of this package reads the fields the resource managers use; the kubelet refuses a
file for *any* bad field. This module follows its three stages over every v1beta1 field:

* **decoding** (``decode_fields``): each field's JSON type, as Go's decoder reports a
  mismatch (``json: cannot unmarshal string into Go struct field
  KubeletConfiguration.maxPods of type int32``), durations with Go's ``time.ParseDuration``;
* **defaulting** (``defaulted``): v1beta1 ``SetDefaults_KubeletConfiguration`` for the fields
  validation reads, per release;
* **feature gates** (``gate_error``): ``SetFromMap``'s refusals (an unknown gate, a locked
  gate set to the other value);
* **validation** (``validation_messages``): ``ValidateKubeletConfiguration`` check by check,
  in its order, with its messages; rules that came or changed in a given release are keyed
  by release (:data:`RULE_SINCE`).

:func:`aggregate` joins messages as the kubelet's aggregate error prints them. The release
table lives in ``core/versions.py``; the gate lists in ``kubelet_config/gates.py``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Final

from cpumanager.core.versions import Release
from cpumanager.errors import ConfigError
from cpumanager.formats.kubelet_config.fields import go_duration_nanos
from cpumanager.formats.kubelet_config.gates import (
    gate_spec,
    introduced_in,
    known_gates,
    removed_in,
)

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

_S = 10**9  # nanoseconds per second

# v1beta1 field -> its Go type, as the JSON decoder sees it. Nested structs are "object"
# (their inner fields are decoded by the kubelet too; we check that they are objects).
FIELD_KINDS: Final[Mapping[str, str]] = {
    "apiVersion": "string",
    "kind": "string",
    "enableServer": "bool",
    "staticPodPath": "string",
    "podLogsDir": "string",
    "syncFrequency": "duration",
    "fileCheckFrequency": "duration",
    "httpCheckFrequency": "duration",
    "staticPodURL": "string",
    "staticPodURLHeader": "map[string][]string",
    "address": "string",
    "port": "int32",
    "readOnlyPort": "int32",
    "tlsCertFile": "string",
    "tlsPrivateKeyFile": "string",
    "tlsCipherSuites": "[]string",
    "tlsMinVersion": "string",
    "rotateCertificates": "bool",
    "serverTLSBootstrap": "bool",
    "authentication": "object",
    "authorization": "object",
    "registryPullQPS": "int32",
    "registryBurst": "int32",
    "eventRecordQPS": "int32",
    "eventBurst": "int32",
    "enableDebuggingHandlers": "bool",
    "enableContentionProfiling": "bool",
    "healthzPort": "int32",
    "healthzBindAddress": "string",
    "oomScoreAdj": "int32",
    "clusterDomain": "string",
    "clusterDNS": "[]string",
    "streamingConnectionIdleTimeout": "duration",
    "nodeStatusUpdateFrequency": "duration",
    "nodeStatusReportFrequency": "duration",
    "nodeLeaseDurationSeconds": "int32",
    "imageMinimumGCAge": "duration",
    "imageMaximumGCAge": "duration",
    "imageGCHighThresholdPercent": "int32",
    "imageGCLowThresholdPercent": "int32",
    "volumeStatsAggPeriod": "duration",
    "kubeletCgroups": "string",
    "systemCgroups": "string",
    "cgroupRoot": "string",
    "cgroupsPerQOS": "bool",
    "cgroupDriver": "string",
    "cpuManagerPolicy": "string",
    "singleProcessOOMKill": "bool",
    "cpuManagerPolicyOptions": "map[string]string",
    "cpuManagerReconcilePeriod": "duration",
    "memoryManagerPolicy": "string",
    "topologyManagerPolicy": "string",
    "topologyManagerScope": "string",
    "topologyManagerPolicyOptions": "map[string]string",
    "qosReserved": "map[string]string",
    "runtimeRequestTimeout": "duration",
    "hairpinMode": "string",
    "maxPods": "int32",
    "podCIDR": "string",
    "podPidsLimit": "int64",
    "resolvConf": "string",
    "runOnce": "bool",
    "cpuCFSQuota": "bool",
    "cpuCFSQuotaPeriod": "duration",
    "nodeStatusMaxImages": "int32",
    "maxOpenFiles": "int64",
    "contentType": "string",
    "kubeAPIQPS": "int32",
    "kubeAPIBurst": "int32",
    "serializeImagePulls": "bool",
    "maxParallelImagePulls": "int32",
    "evictionHard": "map[string]string",
    "evictionSoft": "map[string]string",
    "evictionSoftGracePeriod": "map[string]string",
    "evictionPressureTransitionPeriod": "duration",
    "evictionMaxPodGracePeriod": "int32",
    "evictionMinimumReclaim": "map[string]string",
    "mergeDefaultEvictionSettings": "bool",
    "podsPerCore": "int32",
    "enableControllerAttachDetach": "bool",
    "protectKernelDefaults": "bool",
    "makeIPTablesUtilChains": "bool",
    "iptablesMasqueradeBit": "int32",
    "iptablesDropBit": "int32",
    "featureGates": "map[string]bool",
    "failSwapOn": "bool",
    "memorySwap": "object",
    "containerLogMaxSize": "string",
    "containerLogMaxFiles": "int32",
    "containerLogMaxWorkers": "int32",
    "containerLogMonitorInterval": "duration",
    "configMapAndSecretChangeDetectionStrategy": "string",
    "systemReserved": "map[string]string",
    "kubeReserved": "map[string]string",
    "reservedSystemCPUs": "string",
    "showHiddenMetricsForVersion": "string",
    "systemReservedCgroup": "string",
    "kubeReservedCgroup": "string",
    "enforceNodeAllocatable": "[]string",
    "allowedUnsafeSysctls": "[]string",
    "volumePluginDir": "string",
    "providerID": "string",
    "kernelMemcgNotification": "bool",
    "logging": "object",
    "enableSystemLogHandler": "bool",
    "enableSystemLogQuery": "bool",
    "shutdownGracePeriod": "duration",
    "shutdownGracePeriodCriticalPods": "duration",
    "shutdownGracePeriodByPodPriority": "[]object",
    "crashLoopBackOff": "object",
    "reservedMemory": "[]object",
    "enableProfilingHandler": "bool",
    "enableDebugFlagsHandler": "bool",
    "seccompDefault": "bool",
    "memoryThrottlingFactor": "float64",
    "registerWithTaints": "[]object",
    "registerNode": "bool",
    "tracing": "object",
    "localStorageCapacityIsolation": "bool",
    "containerRuntimeEndpoint": "string",
    "imageServiceEndpoint": "string",
    "failCgroupV1": "bool",
}

_INT_RANGE = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


def _json_kind(value: object) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return "value"


def _type_error(value: object, path: str, go_type: str) -> ConfigError:
    kind = _json_kind(value)
    if kind == "number" and go_type in ("int32", "int64", "float64"):
        kind = f"number {_json_number(value)}"  # Go names the literal it cannot fit
    return ConfigError(
        f"json: cannot unmarshal {kind} into Go struct field KubeletConfiguration.{path} "
        f"of type {go_type}"
    )


def _json_number(value: object) -> str:
    if isinstance(value, float):
        return repr(value) if not value.is_integer() else f"{value:.1f}"
    return str(value)


def decode_fields(body: Mapping[str, object]) -> dict[str, object]:
    """Every field typed as Go decodes it (durations in nanoseconds); unknown fields dropped.

    Raises ConfigError with Go's text at the first mistyped field, in the file's order.
    JSON ``null`` leaves a field unset, as in Go.
    """
    out: dict[str, object] = {}
    # YAML reaches Go's decoder as JSON with sorted keys: the first error is by key order.
    for name, value in sorted(body.items()):
        kind = FIELD_KINDS.get(name)
        if kind is None or value is None:
            continue
        out[name] = _decode(name, kind, value)
    return out


def _decode(path: str, kind: str, value: object) -> object:
    if kind == "string":
        if not isinstance(value, str):
            raise _type_error(value, path, "string")
        return value
    if kind == "bool":
        if not isinstance(value, bool):
            raise _type_error(value, path, "bool")
        return value
    if kind in _INT_RANGE:
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            else:
                raise _type_error(value, path, kind)
        low, high = _INT_RANGE[kind]
        if not low <= value <= high:
            raise _type_error(value, path, kind)
        return value
    if kind == "float64":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _type_error(value, path, "float64")
        return float(value)
    if kind == "duration":
        if not isinstance(value, str):
            msg = (
                f"json: cannot unmarshal {_json_kind(value)} into Go struct field "
                f"KubeletConfiguration.{path} of type string"
            )
            raise ConfigError(msg)
        try:
            return go_duration_nanos(value)
        except ValueError as err:
            raise ConfigError(str(err)) from err
    if kind.startswith("map[string]"):
        if not isinstance(value, Mapping):
            raise _type_error(value, path, kind)
        inner = kind.removeprefix("map[string]")
        return {
            str(key): _decode(f"{path}", inner, item) if item is not None else None
            for key, item in value.items()
        }
    if kind == "[]string":
        if not isinstance(value, list):
            raise _type_error(value, path, kind)
        return [_decode(path, "string", item) for item in value]
    if kind == "[]object":
        if not isinstance(value, list):
            raise _type_error(value, path, "[]" + path)
        return list(value)
    if kind == "object":
        if not isinstance(value, Mapping):
            raise _type_error(value, path, path)
        return dict(value)
    return value


# --- defaulting (v1beta1 SetDefaults_KubeletConfiguration, the fields validation reads) ---

# field -> (unset?, default); a duration is in nanoseconds. Keyed fields exist from a release.
_ZERO_UNSET = ("nodeLeaseDurationSeconds", "registryBurst", "eventBurst", "maxPods",
               "maxOpenFiles", "kubeAPIBurst")  # fmt: skip
_DEFAULTS: Final[Mapping[str, object]] = {
    "nodeLeaseDurationSeconds": 40,
    "registryPullQPS": 5,
    "registryBurst": 10,
    "eventRecordQPS": 50,
    "eventBurst": 100,
    "healthzPort": 10248,
    "oomScoreAdj": -999,
    "imageMinimumGCAge": 120 * _S,
    "imageGCHighThresholdPercent": 85,
    "imageGCLowThresholdPercent": 80,
    "cgroupsPerQOS": True,
    "topologyManagerPolicy": "none",
    "topologyManagerScope": "container",
    "hairpinMode": "promiscuous-bridge",
    "maxPods": 110,
    "cpuCFSQuotaPeriod": 100 * 10**6,
    "nodeStatusMaxImages": 50,
    "maxOpenFiles": 1000000,
    "kubeAPIQPS": 50,
    "kubeAPIBurst": 100,
    "iptablesMasqueradeBit": 14,
    "iptablesDropBit": 15,
    "enforceNodeAllocatable": ["pods"],
    "enableSystemLogHandler": True,
    "memoryThrottlingFactor": 0.9,
    "containerRuntimeEndpoint": "unix:///run/containerd/containerd.sock",
    "containerLogMaxWorkers": 1,
    "containerLogMonitorInterval": 10 * _S,
    "containerLogMaxFiles": 5,
    "podLogsDir": "/var/log/pods",
    "port": 10250,
}
# Fields that a release does not have (so no default and no check): the first release with
# each. Before it, the kubelet's lenient decoder drops the field as unknown.
FIELD_SINCE: Final[Mapping[str, Release]] = {
    "containerRuntimeEndpoint": (1, 27),
    "imageMaximumGCAge": (1, 29),
    "podLogsDir": (1, 30),
    "containerLogMaxWorkers": (1, 30),
    "containerLogMonitorInterval": (1, 30),
    "crashLoopBackOff": (1, 32),
    "enableSystemLogQuery": (1, 27),
    "maxParallelImagePulls": (1, 27),
    "memoryThrottlingFactor": (1, 22),
    "shutdownGracePeriodByPodPriority": (1, 23),
    "singleProcessOOMKill": (1, 32),
    "failCgroupV1": (1, 31),
    "mergeDefaultEvictionSettings": (1, 34),
}


def defaulted(fields: Mapping[str, object], release: Release) -> dict[str, object]:
    """``fields`` with v1beta1 defaults for the fields validation reads (Go zero = unset)."""
    out = {
        name: value for name, value in fields.items() if FIELD_SINCE.get(name, (1, 0)) <= release
    }
    for name, default in _DEFAULTS.items():
        if FIELD_SINCE.get(name, (1, 0)) > release:
            continue
        value = out.get(name)
        zero = value is None or (name in _ZERO_UNSET and value == 0)
        if name in ("imageMinimumGCAge",) and value == 0:
            zero = True
        if name in ("topologyManagerPolicy", "topologyManagerScope", "hairpinMode",
                    "containerRuntimeEndpoint", "podLogsDir") and value == "":  # fmt: skip
            zero = True
        if zero:
            out[name] = list(default) if isinstance(default, list) else default
    if "serializeImagePulls" not in out:
        parallel = out.get("maxParallelImagePulls")
        out["serializeImagePulls"] = not (isinstance(parallel, int) and parallel >= 2)
    return out


# --- feature gates ---------------------------------------------------------------------


def gate_error(gates: Mapping[str, bool], release: Release) -> str | None:
    """``SetFromMap``'s refusal of the gates, or None.

    Go walks the map in random order and stops at the first bad gate; the first bad one in
    the file's order is given. Where the release's whole gate list is not established,
    only the gates the release table knows are checked (``gates.known_gates``).
    """
    known = known_gates(release)
    for name, value in gates.items():
        spec = gate_spec(name, release)
        if spec is None:
            later = introduced_in(name)
            if known is not None or _removed(name, release) or (later and later > release):
                return f"unrecognized feature gate: {name}"
            continue
        default, locked = spec
        if locked and value != default:
            return (
                f"cannot set feature gate {name} to {_go_bool(value)}, feature is locked to "
                f"{_go_bool(default)}"
            )
    return None


# From 1.32 v1beta1 defaulting merges the file's gates into a copy of the global gate and
# panics when that fails, so a bad gate in the file stops the kubelet while it loads.
GATES_PANIC_SINCE: Final[Release] = (1, 32)


def gates_panic(release: Release, file_gates: object) -> bool:
    """Whether the file's gates are what refuses, in defaulting (a panic at ``loads``)."""
    return release >= GATES_PANIC_SINCE and isinstance(file_gates, Mapping) and bool(file_gates)


def gate_refusal(problem: str, release: Release, *, from_file: bool) -> str:
    """The kubelet's text around ``SetFromMap``'s refusal."""
    if from_file and release >= GATES_PANIC_SINCE:
        return (
            "panic: failed to merge global and in-flight KubeletConfiguration while setting "
            f"defaults, error: {problem}"
        )
    return f"failed to set feature gates from initial flags-based config: {problem}"


def _removed(name: str, release: Release) -> bool:
    removed = removed_in(name)
    return removed is not None and removed <= release


def _go_bool(value: bool) -> str:
    return "true" if value else "false"


def _enabled(gates: Mapping[str, bool], name: str, release: Release) -> bool:
    if name in gates:
        return gates[name]
    spec = gate_spec(name, release)
    return spec[0] if spec is not None else False


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
    "enforce-compressible": ((1, 31), "open"),
}
RULE_SINCE: Final[Mapping[str, Release]] = {
    rule: since for rule, (since, _) in RULE_SOURCES.items()
}


def _has(rule: str, release: Release) -> bool:
    return RULE_SINCE.get(rule, (1, 0)) <= release


def go_duration_text(nanos: int) -> str:
    """Go's ``Duration.String()``: ``500ms``, ``1m0s``, ``-5s``, ``0s``."""
    if nanos == 0:
        return "0s"
    sign = "-" if nanos < 0 else ""
    n = abs(nanos)
    if n < _S:
        for unit, size in (("ms", 10**6), ("\u00b5s", 10**3), ("ns", 1)):
            if n >= size:
                return sign + _decimal(n, size) + unit
    hours, rest = divmod(n, 3600 * _S)
    minutes, rest = divmod(rest, 60 * _S)
    text = _decimal(rest, _S) + "s"
    if hours or minutes:
        text = f"{minutes}m{text}"
    if hours:
        text = f"{hours}h{text}"
    return sign + text


def _struct(nanos: int) -> str:
    """A ``metav1.Duration`` printed whole with ``%v``: ``{500ms}`` (the kubelet's messages
    print some durations this way, others as the inner ``time.Duration``)."""
    return "{" + go_duration_text(nanos) + "}"


def _decimal(amount: int, unit: int) -> str:
    whole, frac = divmod(amount, unit)
    if not frac:
        return str(whole)
    digits = len(str(unit)) - 1
    return f"{whole}.{str(frac).rjust(digits, '0').rstrip('0')}"


def _go_float(value: float) -> str:
    """Go's ``%v`` of a float64 (``strconv.FormatFloat(f, 'g', -1, 64)``)."""
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    if "e" in text:
        mantissa, exp = text.split("e")
        sign = exp[0] if exp[0] in "+-" else "+"
        digits = exp.lstrip("+-").rjust(2, "0")
        text = f"{mantissa}e{sign}{digits}"
    return text


def _q(text: str) -> str:
    from cpumanager.core.gocompat import go_quote

    return go_quote(text)


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
        return _enabled(gates, gate, release)

    if num("nodeLeaseDurationSeconds") <= 0:
        add("invalid configuration: nodeLeaseDurationSeconds must be greater than 0")
    if kc.get("systemCgroups") and not kc.get("cgroupRoot"):
        add(
            "invalid configuration: systemCgroups (--system-cgroups) was specified and "
            "cgroupRoot (--cgroup-root) was not specified"
        )
    for name, flag in (("eventBurst", "event-burst"), ("eventRecordQPS", "event-qps")):
        if num(name) < 0:
            add(_negative(name, flag, num(name)))
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
            f"{_struct(quota)} requires feature gate CustomCPUCFSQuotaPeriod"
        )
    if on("CustomCPUCFSQuotaPeriod") and not 10**6 <= quota <= _S:
        add(
            f"invalid configuration: cpuCFSQuotaPeriod (--cpu-cfs-quota-period) "
            f"{_struct(quota)} must be between 1ms and 1sec, inclusive"
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
            add(_negative(name, flag, num(name)))
    if num("nodeStatusMaxImages") < -1:
        add(
            "invalid configuration: nodeStatusMaxImages (--node-status-max-images) "
            f"{num('nodeStatusMaxImages')} must be -1 or greater"
        )
    for name, flag in (("maxOpenFiles", "max-open-files"), ("maxPods", "max-pods")):
        if num(name) < 0:
            add(_negative(name, flag, num(name)))
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
    read_only = num("readOnlyPort")
    if read_only != 0 and not 1 <= read_only <= 65535:
        add(
            f"invalid configuration: readOnlyPort (--read-only-port) {read_only} must be between "
            "0 and 65535, inclusive"
        )
    for name, flag in (("registryBurst", "registry-burst"), ("registryPullQPS", "registry-qps")):
        if num(name) < 0:
            add(_negative(name, flag, num(name)))
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
    errors += _taint_messages(kc.get("registerWithTaints"))
    policy = str(kc.get("topologyManagerPolicy", "none"))
    if policy not in _TOPOLOGY_POLICIES:
        choices = " ".join(_q(p) for p in _TOPOLOGY_POLICIES)
        add(
            f"invalid configuration: topologyManagerPolicy (--topology-manager-policy) "
            f"{_q(policy)} must be one of: [{choices}]"
        )
    scope = str(kc.get("topologyManagerScope", "container"))
    if scope not in ("container", "pod"):
        add(
            f"invalid configuration: topologyManagerScope (--topology-manager-scope) {_q(scope)} "
            'must be one of: "container", or "pod"'
        )
    errors += _shutdown_messages(kc, on)
    errors += _swap_messages(kc, on, release)
    if _has("crashLoopBackOff", release):
        errors += _crash_loop_messages(kc, on)
    errors += _enforcement_messages(kc, release)
    hairpin = str(kc.get("hairpinMode", "promiscuous-bridge"))
    if hairpin not in _HAIRPIN:
        add(
            f"invalid configuration: option {_q(hairpin)} specified for hairpinMode "
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
        problem = _cpuset_error(reserved)
        if problem:
            add(
                f"invalid configuration: unable to parse reservedSystemCPUs (--reserved-cpus) "
                f"{reserved}, error: {problem}"
            )
    errors += _reserved_memory_messages(kc.get("reservedMemory"))
    hidden = kc.get("showHiddenMetricsForVersion", "")
    previous = f"{release[0]}.{release[1] - 1}"
    if hidden and hidden != previous:
        add(
            "--show-hidden-metrics-for-version must be omitted or have the value "
            f"'{previous}'. Only the previous minor version is allowed"
        )
    errors += _logging_messages(kc.get("logging"))
    factor = kc.get("memoryThrottlingFactor")
    in_range = isinstance(factor, float) and 0 < factor <= 1.0
    if isinstance(factor, float) and _has("memoryThrottlingFactor", release) and not in_range:
        add(
            f"invalid configuration: memoryThrottlingFactor {_go_float(factor)} must be "
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
    if _has("podLogsDir", release):
        errors += _pod_logs_messages(str(kc.get("podLogsDir", "")))
    return errors


def _negative(name: str, flag: str, value: int) -> str:
    return f"invalid configuration: {name} (--{flag}) {value} must not be a negative number"


_LABEL_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def _qualified_name(text: str) -> bool:
    """apimachinery's ``IsQualifiedName``: ``[prefix/]name``."""
    prefix, slash, name = text.rpartition("/")
    if "/" in prefix:
        return False
    if slash and not (
        prefix and len(prefix) <= 253 and all(_DNS_LABEL.fullmatch(p) for p in prefix.split("."))
    ):
        return False
    return 0 < len(name) <= 63 and _LABEL_NAME.fullmatch(name) is not None


def _valid_taint(taint: Mapping[str, object]) -> bool:
    key, value, effect = (str(taint.get(k) or "") for k in ("key", "value", "effect"))
    if not _qualified_name(key):
        return False
    if value and not (len(value) <= 63 and _LABEL_NAME.fullmatch(value)):
        return False
    return not effect or effect in _EFFECTS


def _taint_messages(raw: object) -> list[str]:
    """Each ``registerWithTaints`` entry: ``utiltaints.CheckTaintValidation``, then TimeAdded.

    The kubelet prints a bad taint with Go's ``%v`` of the struct: ``{key value effect
    <nil>}`` (a set ``timeAdded`` would print as a pointer; only its own message is given).
    """
    if not isinstance(raw, list):
        return []
    out = []
    for taint in raw:
        if not isinstance(taint, Mapping):
            continue
        added = taint.get("timeAdded")
        if not _valid_taint(taint) and added is None:
            key, value, effect = (str(taint.get(k) or "") for k in ("key", "value", "effect"))
            out.append(f"invalid taint: {{{key} {value} {effect} <nil>}}")
        if added is not None:
            out.append("invalid configuration: taint.TimeAdded is not nil")
    return out


def _logging_messages(raw: object) -> list[str]:
    """component-base ``logsapi.Validate``: the format must be one the kubelet registers."""
    if not isinstance(raw, Mapping):
        return []
    log_format = raw.get("format") or "text"
    if isinstance(log_format, str) and log_format not in ("text", "json"):
        return [f"logging.format: Invalid value: {_q(log_format)}: Unsupported log format"]
    return []


def _shutdown_messages(kc: Mapping[str, object], on: Callable[[str], bool]) -> list[str]:
    out: list[str] = []
    period = _int(kc.get("shutdownGracePeriod"))
    critical = _int(kc.get("shutdownGracePeriodCriticalPods"))
    if on("GracefulNodeShutdown"):
        if critical > period:
            out.append(
                f"invalid configuration: shutdownGracePeriodCriticalPods "
                f"{_struct(critical)} must be <= shutdownGracePeriod {_struct(period)}"
            )
        for name, value in (("shutdownGracePeriod", period),
                            ("shutdownGracePeriodCriticalPods", critical)):  # fmt: skip
            if value < 0 or 0 < value < _S:
                out.append(
                    f"invalid configuration: {name} {_struct(value)} must be either "
                    "zero or otherwise >= 1 sec"
                )
    elif period > 0 or critical > 0:
        out.append(
            "invalid configuration: specifying shutdownGracePeriod or "
            "shutdownGracePeriodCriticalPods requires feature gate GracefulNodeShutdown"
        )
    by_priority = kc.get("shutdownGracePeriodByPodPriority")
    if by_priority:
        if on("GracefulNodeShutdownBasedOnPodPriority"):
            if period > 0 or critical > 0:
                out.append(
                    "invalid configuration: Cannot specify both shutdownGracePeriodByPodPriority "
                    "and shutdownGracePeriod at the same time"
                )
        else:
            out.append(
                "invalid configuration: Specifying shutdownGracePeriodByPodPriority requires "
                "feature gate GracefulNodeShutdownBasedOnPodPriority"
            )
    return out


def _swap_messages(
    kc: Mapping[str, object], on: Callable[[str], bool], release: Release
) -> list[str]:
    if not _has("memorySwap", release):
        return []
    swap = kc.get("memorySwap")
    behavior = swap.get("swapBehavior", "") if isinstance(swap, Mapping) else ""
    behavior = behavior if isinstance(behavior, str) else ""
    if on("NodeSwap"):
        if behavior not in ("", "NoSwap", "LimitedSwap"):
            return [
                f"invalid configuration: memorySwap.swapBehavior {_q(behavior)} must be one of: "
                '"", "LimitedSwap" or "NoSwap"'
            ]
        return []
    if behavior:
        return [
            "invalid configuration: memorySwap.swapBehavior cannot be set when NodeSwap feature "
            "flag is disabled"
        ]
    return []


def _crash_loop_messages(kc: Mapping[str, object], on: Callable[[str], bool]) -> list[str]:
    raw = kc.get("crashLoopBackOff")
    period = raw.get("maxContainerRestartPeriod") if isinstance(raw, Mapping) else None
    nanos: int | None = None
    if isinstance(period, str):
        try:
            nanos = go_duration_nanos(period)
        except ValueError:
            nanos = None
    if on("KubeletCrashLoopBackOffMax"):
        if nanos is None and period is None:
            nanos = 300 * _S  # defaulting sets it when the gate is on
        if nanos is None:
            return [
                "invalid configuration: FeatureGate KubeletCrashLoopBackOffMax is enabled, "
                "CrashLoopBackOff.MaxContainerRestartPeriod must be set"
            ]
        millis = int(nanos / 10**6) if nanos >= 0 else -int(-nanos // 10**6)
        if not 1000 <= millis <= 300000:
            return [
                "invalid configuration: CrashLoopBackOff.MaxContainerRestartPeriod (got: "
                f"{_go_float(nanos / _S)} seconds) must be set between 1s and 300s"
            ]
        return []
    if nanos is not None:
        return [
            "invalid configuration: FeatureGate KubeletCrashLoopBackOffMax not enabled, "
            "CrashLoopBackOff.MaxContainerRestartPeriod must not be set"
        ]
    return []


def _enforcement_messages(kc: Mapping[str, object], release: Release) -> list[str]:
    out: list[str] = []
    raw = kc.get("enforceNodeAllocatable", ["pods"])
    levels = [str(item) for item in raw] if isinstance(raw, list) else []
    compressible = _has("enforce-compressible", release)
    if compressible:
        out.extend(
            f'invalid configuration: both "{plain}" and "{plain}-compressible" cannot be '
            f"specified together in {_ENFORCE}"
            for plain in ("system-reserved", "kube-reserved")
            if plain in levels and f"{plain}-compressible" in levels
        )
    seen: set[str] = set()
    keys = _ENFORCEMENT_KEYS if compressible else ("pods", "system-reserved",
                                                   "kube-reserved", "none")  # fmt: skip
    for level in levels:
        if level in seen:
            out.append(f"invalid configuration: duplicated enforcements {_q(level)} in {_ENFORCE}")
            continue
        seen.add(level)
        if level == "pods":
            pass
        elif level in ("system-reserved", "system-reserved-compressible") and level in keys:
            if not kc.get("systemReservedCgroup"):
                out.append(_cgroup_needed("systemReservedCgroup (--system-reserved-cgroup)",
                                          "system-reserved", compressible))  # fmt: skip
        elif level in ("kube-reserved", "kube-reserved-compressible") and level in keys:
            if not kc.get("kubeReservedCgroup"):
                out.append(_cgroup_needed("kubeReservedCgroup (--kube-reserved-cgroup)",
                                          "kube-reserved", compressible))  # fmt: skip
        elif level == "none":
            if len(levels) > 1:
                out.append(
                    f"invalid configuration: {_ENFORCE} may not contain additional "
                    'enforcements when "none" is specified'
                )
            continue
        else:
            valid = ", ".join(_q(k) for k in keys[:-1])
            out.append(
                f"invalid configuration: option {_q(level)} specified for {_ENFORCE}. Valid "
                f'options are {valid} or "none"'
            )
            continue
        if kc.get("cgroupsPerQOS") is False:
            out.append(
                "invalid configuration: cgroupsPerQOS (--cgroups-per-qos) must be set to true "
                f"when {_q(level)} contained in {_ENFORCE}"
            )
    return out


def _cgroup_needed(field: str, plain: str, compressible: bool) -> str:
    which = f'"{plain}" or "{plain}-compressible"' if compressible else f'"{plain}"'
    return f"invalid configuration: {field} must be specified when {which} included in {_ENFORCE}"


def _cpuset_error(text: str) -> str:
    """``cpuset.Parse``'s error for a CPU list, or "" when it parses."""
    for part in text.split(","):
        bounds = part.split("-")
        if len(bounds) == 1:
            if not _is_go_int(bounds[0]):
                return f"strconv.Atoi: parsing {_q(bounds[0])}: invalid syntax"
        elif len(bounds) == 2:
            for bound in bounds:
                if not _is_go_int(bound):
                    return f"strconv.Atoi: parsing {_q(bound)}: invalid syntax"
            start, end = int(bounds[0]), int(bounds[1])
            if start > end:
                return f"invalid range {_q(part)} ({start} > {end})"
        else:
            return f"invalid range {_q(part)}"
    return ""


def _is_go_int(text: str) -> bool:
    return re.fullmatch(r"[+-]?\d+", text) is not None and len(text.lstrip("+-")) <= 18


def _reserved_memory_messages(raw: object) -> list[str]:
    if not isinstance(raw, list):
        return []
    out: list[str] = []
    seen: set[tuple[int, str]] = set()
    for entry in raw:
        if not isinstance(entry, Mapping):
            continue
        node = entry.get("numaNode", 0)
        limits = entry.get("limits") or {}
        if not isinstance(limits, Mapping):
            continue
        for resource, amount in limits.items():
            if not (resource == "memory" or str(resource).startswith("hugepages-")):
                out.append(
                    f"invalid configuration: the limit type {_q(str(resource))} for NUMA node "
                    f"{node} is not supported, only [memory hugepages-<HugePageSize>] is accepted"
                )
            if str(amount).strip() in ("0", "0Mi", "0Gi", "0Ki", "0m", "0.0"):
                out.append(
                    "invalid configuration: reserved memory may not be zero for NUMA node "
                    f"{node} and resource {_q(str(resource))}"
                )
            if (node, resource) in seen:
                out.append(
                    "invalid configuration: the reserved memory has a duplicate value for NUMA "
                    f"node {node} and resource {_q(str(resource))}"
                )
            seen.add((node, str(resource)))
    return out


def _pod_logs_messages(path: str) -> list[str]:
    out: list[str] = []
    if path == "":
        out.append("invalid configuration: podLogsDir was not specified")
    if not path.startswith("/"):
        out.append(f"invalid configuration: pod logs path {_q(path)} must be absolute path")
    if _go_clean(path) != path:
        out.append(f"invalid configuration: pod logs path {_q(path)} must be normalized")
    if any(ord(ch) > 127 for ch in path):
        out.append(
            f"invalid configuration: pod logs path {_q(path)} mut contains ASCII characters only"
        )
    return out


def _go_clean(path: str) -> str:
    """Go's ``filepath.Clean`` on Linux."""
    if path == "":
        return "."
    rooted = path.startswith("/")
    parts: list[str] = []
    for segment in path.split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if parts and parts[-1] != "..":
                parts.pop()
            elif not rooted:
                parts.append("..")
            continue
        parts.append(segment)
    cleaned = ("/" if rooted else "") + "/".join(parts)
    return cleaned or ("/" if rooted else ".")


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def kubelet_text(stage: str, messages: Sequence[str]) -> str:
    """The line the kubelet ends with at ``stage``: validation's aggregate wrapped as
    ``failed to validate kubelet configuration, error: ...``, else the first refusal (the
    kubelet stops at the first file, gate or manager that refuses)."""
    first = messages[0]
    if stage != "validates" or first.startswith("failed to set feature gates"):
        return first
    return f"failed to validate kubelet configuration, error: {aggregate(messages)}"


def aggregate(messages: Sequence[str]) -> str:
    """The kubelet's aggregate error text: one message alone, else ``[a, b]`` (duplicates once)."""
    unique = list(dict.fromkeys(messages))
    if len(unique) == 1:
        return unique[0]
    return "[" + ", ".join(unique) + "]"
