"""Every v1beta1 KubeletConfiguration field, decoded and defaulted as the kubelet does (pure).

* ``decode_fields``: each field's JSON type, as Go's decoder reports a mismatch
  (``json: cannot unmarshal string into Go struct field KubeletConfiguration.maxPods of
  type int32``), durations with Go's ``time.ParseDuration`` (in nanoseconds);
* ``defaulted``: v1beta1 ``SetDefaults_KubeletConfiguration`` for the fields validation
  reads, per release (a field a release does not have is dropped, as its lenient decoder
  drops unknown fields).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Final

from cpumanager.core.versions import Release
from cpumanager.errors import ConfigError
from cpumanager.formats.kubelet_config.fields import go_duration_nanos

__all__ = [
    "FIELD_KINDS",
    "FIELD_SINCE",
    "JsonFloat",
    "decode_fields",
    "defaulted",
    "go_json_number",
    "go_quantity_error",
    "quantity_problem",
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

_INT_RANGE = {
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint32": (0, 2**32 - 1),
}

# The Go type each non-scalar field decodes into, as Go's decoder names it in its errors
# (``of type []v1beta1.MemoryReservation``), and the fields of the nested structs: JSON name
# -> Go kind. A kind naming a struct (a key of _STRUCTS) is decoded field by field; "any" is
# not checked (logging's options, vmodule and flush frequency).
_GO_TYPES: Final[Mapping[str, str]] = {
    "authentication": "v1beta1.KubeletAuthentication",
    "authorization": "v1beta1.KubeletAuthorization",
    "memorySwap": "v1beta1.MemorySwapConfiguration",
    "logging": "v1.LoggingConfiguration",
    "shutdownGracePeriodByPodPriority": "[]v1beta1.ShutdownGracePeriodByPodPriority",
    "crashLoopBackOff": "v1beta1.CrashLoopBackOffConfig",
    "reservedMemory": "[]v1beta1.MemoryReservation",
    "registerWithTaints": "[]v1.Taint",
    "tracing": "v1.TracingConfiguration",
    "configMapAndSecretChangeDetectionStrategy": "v1beta1.ResourceChangeDetectionStrategy",
}
_STRUCTS: Final[Mapping[str, Mapping[str, str]]] = {
    "v1beta1.KubeletAuthentication": {
        "x509": "v1beta1.KubeletX509Authentication",
        "webhook": "v1beta1.KubeletWebhookAuthentication",
        "anonymous": "v1beta1.KubeletAnonymousAuthentication",
    },
    "v1beta1.KubeletX509Authentication": {"clientCAFile": "string"},
    "v1beta1.KubeletWebhookAuthentication": {"enabled": "bool", "cacheTTL": "duration"},
    "v1beta1.KubeletAnonymousAuthentication": {"enabled": "bool"},
    "v1beta1.KubeletAuthorization": {
        "mode": "v1beta1.KubeletAuthorizationMode",
        "webhook": "v1beta1.KubeletWebhookAuthorization",
    },
    "v1beta1.KubeletWebhookAuthorization": {
        "cacheAuthorizedTTL": "duration",
        "cacheUnauthorizedTTL": "duration",
    },
    "v1beta1.MemorySwapConfiguration": {"swapBehavior": "string"},
    "v1.LoggingConfiguration": {
        "format": "string",
        "flushFrequency": "any",
        "verbosity": "v1.VerbosityLevel",
        "vmodule": "any",
        "options": "any",
    },
    "v1beta1.ShutdownGracePeriodByPodPriority": {
        "priority": "int32",
        "shutdownGracePeriodSeconds": "int64",
    },
    "v1beta1.CrashLoopBackOffConfig": {"maxContainerRestartPeriod": "*duration"},
    "v1beta1.MemoryReservation": {"numaNode": "int32", "limits": "v1.ResourceList"},
    "v1.Taint": {
        "key": "string",
        "value": "string",
        "effect": "v1.TaintEffect",
        "timeAdded": "any",
    },
    "v1.TracingConfiguration": {"endpoint": "string", "samplingRatePerMillion": "int32"},
}
# Named Go types over a basic one: decoded as the basic type, named in errors.
_NAMED = {
    "v1beta1.KubeletAuthorizationMode": "string",
    "v1beta1.ResourceChangeDetectionStrategy": "string",
    "v1.TaintEffect": "string",
    "v1.VerbosityLevel": "uint32",
}
# Durations held by pointer (JSON null leaves them nil); the others are metav1.Duration
# values, whose decoder reads null as the empty duration and refuses it.
_POINTER_DURATIONS = frozenset({"cpuCFSQuotaPeriod", "containerLogMonitorInterval"})
_QUANTITY_FORMAT = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)


class JsonFloat(float):
    """A float read from a JSON file, with the literal as written (Go names the literal it
    cannot fit: ``number 1.0``)."""

    literal: str

    def __new__(cls, literal: str) -> JsonFloat:
        made = super().__new__(cls, literal)
        made.literal = literal
        return made


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


def go_json_number(value: int | float) -> str:
    """A number as the kubelet's decoder sees it: a JSON file's literal as written, a YAML
    number as Go's JSON encoder prints it (YAML reaches the decoder re-encoded as JSON).

    YAML integers beyond uint64 are floats to Go's YAML reader, printed shortest
    (``1e+30``, ``-9223372036854776000``).
    """
    if isinstance(value, JsonFloat):
        return value.literal
    if isinstance(value, int):
        if -(2**63) <= value < 2**64:
            return str(value)
        value = float(value)
    size = abs(value)
    if size != 0 and (size < 1e-6 or size >= 1e21):
        text = repr(value)
        mantissa, _, exponent = text.partition("e")
        sign = "-" if exponent.startswith("-") else "+"
        return f"{mantissa.removesuffix('.0')}e{sign}{exponent.lstrip('+-').lstrip('0') or '0'}"
    return format(Decimal(repr(value)).normalize(), "f")


class _Decoding:
    """One decode: Go's decoder keeps the first type mismatch and goes on, but a field's own
    decoder failing (a duration, a quantity) stops it at once."""

    def __init__(self, *, sort_keys: bool) -> None:
        self.sort_keys = sort_keys
        self.saved: str | None = None

    def mismatch(self, value: object, struct: str, path: str, go_type: str) -> None:
        if self.saved is None:
            self.saved = _mismatch_text(value, struct, path, go_type)

    def items(self, mapping: Mapping[str, object]) -> list[tuple[str, object]]:
        pairs = [(str(k), v) for k, v in mapping.items()]
        return sorted(pairs) if self.sort_keys else pairs


def _mismatch_text(value: object, struct: str, path: str, go_type: str) -> str:
    kind = _json_kind(value)
    basic = _NAMED.get(go_type, go_type)
    if kind == "number" and basic in ("int32", "int64", "uint32", "float64"):
        assert isinstance(value, int | float)
        kind = f"number {go_json_number(value)}"  # Go names the literal it cannot fit
    return f"json: cannot unmarshal {kind} into Go struct field {struct}.{path} of type {go_type}"


def decode_fields(body: Mapping[str, object], *, from_json: bool = False) -> dict[str, object]:
    """Every field typed as Go decodes it (durations in nanoseconds); unknown fields dropped.

    Raises ConfigError with Go's text: a duration or quantity that does not parse at once,
    else the first field of the wrong type. Go reads a YAML file re-encoded as JSON, so
    keys in sorted order; a JSON file in its own order (``from_json``). JSON ``null`` leaves
    a field unset, except a duration held by value (``time: invalid duration ""``).
    """
    decoding = _Decoding(sort_keys=not from_json)
    out: dict[str, object] = {}
    for name, value in decoding.items(body):
        kind = FIELD_KINDS.get(name)
        if kind is None:
            continue
        kind = _GO_TYPES.get(name, kind)
        if value is None and not (kind == "duration" and name not in _POINTER_DURATIONS):
            continue
        typed = _decode(decoding, "KubeletConfiguration", name, kind, value)
        if typed is not _BAD:
            out[name] = typed
    if decoding.saved is not None:
        raise ConfigError(decoding.saved)
    return out


_BAD = object()  # a value of the wrong type (the error is kept; decoding goes on)


def _decode(d: _Decoding, struct: str, path: str, kind: str, value: object) -> object:
    """``value`` decoded as Go type ``kind`` (``struct.path`` names it in errors); _BAD when
    of the wrong type (the mismatch is kept, decoding goes on)."""
    basic = _NAMED.get(kind, kind)
    if basic == "any":
        return value
    if basic in ("duration", "*duration"):
        return _duration(struct, path, value, pointer=basic == "*duration")
    if basic == "quantity":
        problem = quantity_problem(value)
        if problem:
            raise ConfigError(problem)
        return value
    typed = _BAD if value is None else _container(d, struct, path, basic, value)
    if typed is _NOT_CONTAINER:
        typed = _scalar(basic, value)
    if typed is _BAD:
        d.mismatch(value, struct, path, kind)
    return typed


_NOT_CONTAINER = object()


def _duration(struct: str, path: str, value: object, *, pointer: bool) -> object:
    """A ``metav1.Duration``: its own decoder refuses at once (a null held by value is the
    empty duration)."""
    if value is None:
        if pointer:
            return None
        value = ""
    if not isinstance(value, str):
        kind = _json_kind(value)
        msg = f"json: cannot unmarshal {kind} into Go struct field {struct}.{path} of type string"
        raise ConfigError(msg)
    try:
        return go_duration_nanos(value)
    except ValueError as err:
        raise ConfigError(str(err)) from err


def _scalar(basic: str, value: object) -> object:
    if basic == "string":
        return value if isinstance(value, str) else _BAD
    if basic == "bool":
        return value if isinstance(value, bool) else _BAD
    if basic in _INT_RANGE:
        number = _go_integer(value)
        low, high = _INT_RANGE[basic]
        return number if number is not None and low <= number <= high else _BAD
    if basic == "float64":
        number_ok = isinstance(value, int | float) and not isinstance(value, bool)
        return float(value) if number_ok and math.isfinite(value) else _BAD  # type: ignore[arg-type]
    return _BAD


def _container(d: _Decoding, struct: str, path: str, basic: str, value: object) -> object:
    """A map, list or struct decoded entry by entry; _BAD when the JSON value is not one;
    _NOT_CONTAINER when ``basic`` is a scalar type."""
    if basic.startswith("map[string]") or basic == "v1.ResourceList":
        if not isinstance(value, Mapping):
            return _BAD
        inner = "quantity" if basic == "v1.ResourceList" else basic.removeprefix("map[string]")
        out: dict[str, object] = {}
        for key, item in d.items(value):
            if item is None and inner != "quantity":
                out[key] = _ZERO.get(inner)  # Go stores the zero value
                continue
            typed = _decode(d, struct, path, inner, item)
            out[key] = item if typed is _BAD else typed
        return out
    if basic.startswith("[]"):
        if not isinstance(value, list):
            return _BAD
        for item in value:
            if item is not None:
                _decode(d, struct, path, basic.removeprefix("[]"), item)
        return list(value)
    fields = _STRUCTS.get(basic)
    if fields is None:
        return _NOT_CONTAINER
    if not isinstance(value, Mapping):
        return _BAD
    name = basic.rpartition(".")[2]
    for key, item in d.items(value):
        field_kind = fields.get(key)
        if field_kind is not None and (item is not None or field_kind == "duration"):
            _decode(d, name, f"{path}.{key}", field_kind, item)
    return dict(value)


_ZERO: Mapping[str, object] = {"string": "", "bool": False, "[]string": []}


def _go_integer(value: object) -> int | None:
    """The integer Go reads from a JSON number, or None (not a number, or not integral as
    written: a JSON file's ``1.0`` is refused, a YAML ``1.0`` arrives as ``1``)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    text = go_json_number(value)
    if not text.lstrip("-").isdigit():
        return None
    return int(text)


def quantity_problem(value: object) -> str | None:
    """``resource.Quantity``'s decoder refusing a JSON value, with its text, or None.

    A JSON number is read as its text; ``true``, a list or an object fail the format.
    """
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip(" \t\n\r\v\f")
    elif isinstance(value, int | float) and not isinstance(value, bool):
        text = go_json_number(value)
    else:
        return _QUANTITY_FORMAT
    return go_quantity_error(text)


_SUFFIX_CHARS = "eEinumkKMGTP"
_SUFFIXES = frozenset(
    {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n", "u", "m", "", "k", "M", "G", "T", "P", "E"}
)


def go_quantity_error(text: str) -> str | None:
    """``resource.ParseQuantity``'s error for ``text`` (format, then suffix), or None."""
    if text == "":
        return _QUANTITY_FORMAT
    if text == "0":
        return None
    pos = 1 if text[0] in "+-" else 0
    end = len(text)
    while pos < end and text[pos].isascii() and text[pos].isdigit():
        pos += 1
    if pos < end and text[pos] == ".":
        pos += 1
        while pos < end and text[pos].isascii() and text[pos].isdigit():
            pos += 1
    start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos].isascii() and text[pos].isdigit():
        pos += 1
    if pos < end:
        return _QUANTITY_FORMAT
    suffix = text[start:]
    if suffix in _SUFFIXES:
        return None
    exponent = suffix[1:]
    if suffix[:1] in ("e", "E") and re.fullmatch(r"[+-]?[0-9]+", exponent):
        return None if -(2**63) <= int(exponent) < 2**63 else "unable to parse quantity's suffix"
    return "unable to parse quantity's suffix"


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
