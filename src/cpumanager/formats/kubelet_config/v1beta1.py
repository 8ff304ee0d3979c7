"""Every v1beta1 KubeletConfiguration field, typed and defaulted as the kubelet does (pure).

* ``FIELD_KINDS``: each field's Go type (``go_decode.decode_fields`` decodes by it);
* ``defaulted``: v1beta1 ``SetDefaults_KubeletConfiguration`` for the fields validation
  reads, per release (a field a release does not have is dropped, as its lenient decoder
  drops unknown fields).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from cpumanager.core.versions import Release

__all__ = ["FIELD_KINDS", "FIELD_SINCE", "defaulted"]

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

# --- defaulting (v1beta1 SetDefaults_KubeletConfiguration, the fields validation reads) ---

# field -> (unset?, default); a duration is in nanoseconds. Keyed fields exist from a release.
_ZERO_UNSET = ("nodeLeaseDurationSeconds", "registryBurst", "eventBurst", "maxPods",
               "maxOpenFiles", "kubeAPIBurst", "port")  # fmt: skip
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
# each. Before it, the kubelet's lenient decoder drops the field as unknown. A field that
# came with a feature gate is dated by the gate (1.32's registry); the others carry the
# release of the rule that reads them (whole.RULE_SOURCES, "open" where not established;
# singleProcessOOMKill, failCgroupV1 and mergeDefaultEvictionSettings are not validated).
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
    "shutdownGracePeriod": (1, 20),  # with gate GracefulNodeShutdown
    "shutdownGracePeriodCriticalPods": (1, 20),
    "memorySwap": (1, 22),  # with gate NodeSwap
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
