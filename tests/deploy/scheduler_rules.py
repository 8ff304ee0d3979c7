"""kube-scheduler's rules for a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1),
as facts: what kube-scheduler v1.32 does with the file before it starts.

1. Strict decoding: every key is a field of its type (an unknown or misspelt key refuses the
   file), and each value has its type.
2. The v1 defaults: parallelism 16; one profile named ``default-scheduler`` when none is
   given (a single profile without a name gets that name); percentageOfNodesToScore 0;
   podInitialBackoffSeconds 1, podMaxBackoffSeconds 10; leaderElection: leaderElect true,
   resourceLock ``leases``, resourceNamespace ``kube-system``, resourceName
   ``kube-scheduler``, leaseDuration 15s, renewDeadline 10s, retryPeriod 2s;
   clientConnection: qps 50, burst 100.
3. Validation (``ValidateKubeSchedulerConfiguration``): each rule below is one function of
   :data:`RULES`, named after what it refuses.

:func:`validate` returns the refusals as ``path: message`` lines (empty: accepted).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

API_VERSION = "kubescheduler.config.k8s.io/v1"

# --- strict decoding: the v1 types' JSON fields -----------------------------------------

_DURATION = "duration"
_PLUGIN = {"name": str, "weight": int}
_PLUGIN_SET = {"enabled": [_PLUGIN], "disabled": [_PLUGIN]}
FIELDS: dict[str, Any] = {
    "apiVersion": str,
    "kind": str,
    "parallelism": int,
    "leaderElection": {
        "leaderElect": bool,
        "leaseDuration": _DURATION,
        "renewDeadline": _DURATION,
        "retryPeriod": _DURATION,
        "resourceLock": str,
        "resourceName": str,
        "resourceNamespace": str,
    },
    "clientConnection": {
        "kubeconfig": str,
        "acceptContentTypes": str,
        "contentType": str,
        "qps": float,
        "burst": int,
    },
    "enableProfiling": bool,
    "enableContentionProfiling": bool,
    "percentageOfNodesToScore": int,
    "podInitialBackoffSeconds": int,
    "podMaxBackoffSeconds": int,
    "delayCacheUntilActive": bool,
    "profiles": [
        {
            "schedulerName": str,
            "percentageOfNodesToScore": int,
            "plugins": dict.fromkeys(
                (
                    "preEnqueue",
                    "queueSort",
                    "preFilter",
                    "filter",
                    "postFilter",
                    "preScore",
                    "score",
                    "reserve",
                    "permit",
                    "preBind",
                    "bind",
                    "postBind",
                    "multiPoint",
                ),
                _PLUGIN_SET,
            ),
            "pluginConfig": [{"name": str, "args": dict}],
        }
    ],
    "extenders": [
        {
            "urlPrefix": str,
            "filterVerb": str,
            "preemptVerb": str,
            "prioritizeVerb": str,
            "weight": int,
            "bindVerb": str,
            "enableHTTPS": bool,
            "tlsConfig": {
                "insecure": bool,
                "serverName": str,
                "certFile": str,
                "keyFile": str,
                "caFile": str,
                "certData": str,
                "keyData": str,
                "caData": str,
            },
            "httpTimeout": _DURATION,
            "nodeCacheCapable": bool,
            "managedResources": [{"name": str, "ignoredByScheduler": bool}],
            "ignorable": bool,
        }
    ],
}

_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str) -> float | None:
    """Go's time.ParseDuration in seconds (None when it would refuse the text)."""
    body = text[1:] if text[:1] in "+-" else text
    if body == "0":
        return 0.0
    if not body:
        return None
    total = 0.0
    at = 0
    while at < len(body):
        match = _DURATION_PART.match(body, at)
        if match is None:
            return None
        total += float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
        at = match.end()
    return -total if text.startswith("-") else total


def decode_errors(value: Any, shape: Any, path: str) -> Iterator[str]:
    """Strict decoding's refusals of ``value`` against the field ``shape``."""
    if isinstance(shape, dict) and shape is not dict:
        if value is None:
            return
        if not isinstance(value, dict):
            yield f"{path}: expected an object"
            return
        for key, item in value.items():
            if key not in shape:
                yield f"{path}: unknown field {key!r}"
                continue
            yield from decode_errors(item, shape[key], f"{path}.{key}".lstrip("."))
        return
    if isinstance(shape, list):
        if value is None:
            return
        if not isinstance(value, list):
            yield f"{path}: expected a list"
            return
        for index, item in enumerate(value):
            yield from decode_errors(item, shape[0], f"{path}[{index}]")
        return
    if value is None:
        return
    if shape == _DURATION:
        if not isinstance(value, str) or parse_duration(value) is None:
            yield f"{path}: {value!r} is not a duration (e.g. 5s)"
    elif shape is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            yield f"{path}: expected a number"
    elif shape is int:
        if isinstance(value, bool) or not isinstance(value, int):
            yield f"{path}: expected an integer"
    elif not isinstance(value, shape):
        yield f"{path}: expected {shape.__name__}"


# --- the v1 defaults --------------------------------------------------------------------


def defaulted(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The configuration with kube-scheduler's v1 defaults filled in (durations in seconds)."""
    cfg = dict(doc)
    cfg.setdefault("parallelism", 16)
    profiles = [dict(p) for p in cfg.get("profiles") or []]
    if not profiles:
        profiles = [{}]
    if len(profiles) == 1 and profiles[0].get("schedulerName") is None:
        profiles[0]["schedulerName"] = "default-scheduler"
    cfg["profiles"] = profiles
    cfg.setdefault("percentageOfNodesToScore", 0)
    election = dict(cfg.get("leaderElection") or {})
    for key, value in (
        ("resourceLock", "leases"),
        ("resourceNamespace", "kube-system"),
        ("resourceName", "kube-scheduler"),
    ):
        election[key] = election.get(key) or value
    for key, seconds in (("leaseDuration", 15.0), ("renewDeadline", 10.0), ("retryPeriod", 2.0)):
        given = election.get(key)
        parsed = parse_duration(given) if isinstance(given, str) else None
        election[key] = parsed or seconds
    if election.get("leaderElect") is None:
        election["leaderElect"] = True
    cfg["leaderElection"] = election
    connection = dict(cfg.get("clientConnection") or {})
    if not connection.get("qps"):
        connection["qps"] = 50.0
    if not connection.get("burst"):
        connection["burst"] = 100
    cfg["clientConnection"] = connection
    cfg.setdefault("podInitialBackoffSeconds", 1)
    cfg.setdefault("podMaxBackoffSeconds", 10)
    cfg["extenders"] = [dict(e) for e in cfg.get("extenders") or []]
    return cfg


# --- validation -------------------------------------------------------------------------

_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
REMOVED_PLUGINS = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")
PLUGIN_STAGES = (
    "preEnqueue",
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "bind",
    "postBind",
)


def qualified_name_problems(name: str) -> list[str]:
    """apimachinery's IsQualifiedName: [prefix/]name, prefix a DNS-1123 subdomain (at most
    253 characters), name at most 63 alphanumerics, '-', '_' or '.', alphanumeric at both
    ends."""
    parts = name.split("/")
    if len(parts) == 1:
        short = parts[0]
    elif len(parts) == 2:
        prefix, short = parts
        if not prefix:
            return ["prefix part must be non-empty"]
        if len(prefix) > 253 or not _DNS1123_SUBDOMAIN.fullmatch(prefix):
            return ["prefix part must be a lowercase RFC 1123 subdomain"]
    else:
        return ["a qualified name has at most one '/'"]
    if not short:
        return ["name part must be non-empty"]
    problems = []
    if len(short) > 63:
        problems.append("name part must be no more than 63 characters")
    if not _QUALIFIED_NAME.fullmatch(short):
        problems.append("name part must consist of alphanumerics, '-', '_' or '.'")
    return problems


def is_extended_resource_name(name: str) -> bool:
    """v1helper.IsExtendedResourceName: not native (a name without '/' or in the
    kubernetes.io/ domain), not ``requests.``-prefixed, and ``requests.<name>`` qualified."""
    native = "/" not in name or "kubernetes.io/" in name
    if native or name.startswith("requests."):
        return False
    return not qualified_name_problems("requests." + name)


Rule = Callable[[dict[str, Any]], Iterator[str]]


def burst_not_negative(cfg: dict[str, Any]) -> Iterator[str]:
    if cfg["clientConnection"]["burst"] < 0:
        yield "clientConnection.burst: must be non-negative"


def leader_election_timings(cfg: dict[str, Any]) -> Iterator[str]:
    election = cfg["leaderElection"]
    if not election["leaderElect"]:
        return
    for key in ("leaseDuration", "renewDeadline", "retryPeriod"):
        if election[key] <= 0:
            yield f"leaderElection.{key}: must be greater than zero"
    if election["leaseDuration"] <= election["renewDeadline"]:
        yield "leaderElection.leaseDuration: LeaseDuration must be greater than RenewDeadline"
    for key in ("resourceLock", "resourceNamespace", "resourceName"):
        if not election[key]:
            yield f"leaderElection.{key}: {key} is required"


def leader_election_uses_leases(cfg: dict[str, Any]) -> Iterator[str]:
    election = cfg["leaderElection"]
    if election["leaderElect"] and election["resourceLock"] != "leases":
        yield 'leaderElection.resourceLock: resourceLock value must be "leases"'


def parallelism_positive(cfg: dict[str, Any]) -> Iterator[str]:
    if cfg["parallelism"] <= 0:
        yield "parallelism: should be an integer value greater than zero"


def profiles_named_and_unique(cfg: dict[str, Any]) -> Iterator[str]:
    seen: dict[str, int] = {}
    for index, profile in enumerate(cfg["profiles"]):
        name = profile.get("schedulerName") or ""
        if not name:
            yield f"profiles[{index}].schedulerName: Required value"
        if name in seen:
            yield f"profiles[{index}].schedulerName: Duplicate value"
        seen[name] = index


def percentage_in_range(cfg: dict[str, Any]) -> Iterator[str]:
    places = [("percentageOfNodesToScore", cfg.get("percentageOfNodesToScore"))]
    places += [
        (f"profiles[{i}].percentageOfNodesToScore", p.get("percentageOfNodesToScore"))
        for i, p in enumerate(cfg["profiles"])
    ]
    for path, value in places:
        if value is not None and not 0 <= value <= 100:
            yield f"{path}: not in valid range [0-100]"


def no_removed_plugins(cfg: dict[str, Any]) -> Iterator[str]:
    for index, profile in enumerate(cfg["profiles"]):
        plugins = profile.get("plugins") or {}
        for stage in PLUGIN_STAGES:
            for at, plugin in enumerate((plugins.get(stage) or {}).get("enabled") or []):
                if plugin.get("name") in REMOVED_PLUGINS:
                    yield f"profiles[{index}].plugins.{stage}.enabled[{at}]: was invalid in v1"
        for at, entry in enumerate(profile.get("pluginConfig") or []):
            if entry.get("name") in REMOVED_PLUGINS:
                yield f"profiles[{index}].pluginConfig[{at}]: was invalid in v1"


def plugin_config_unique(cfg: dict[str, Any]) -> Iterator[str]:
    for index, profile in enumerate(cfg["profiles"]):
        seen: set[str] = set()
        for at, entry in enumerate(profile.get("pluginConfig") or []):
            if entry.get("name") in seen:
                yield f"profiles[{index}].pluginConfig[{at}]: Duplicate value"
            seen.add(entry.get("name"))


def one_common_queue_sort(cfg: dict[str, Any]) -> Iterator[str]:
    def queue_sort(profile: Mapping[str, Any]) -> Any:
        return ((profile.get("plugins") or {}).get("queueSort")) or {}

    first = queue_sort(cfg["profiles"][0])
    if len(first.get("enabled") or []) > 1:
        yield "profiles[0].plugins.queueSort.Enabled: only one queue sort plugin can be enabled"
    for index, profile in enumerate(cfg["profiles"][1:], start=1):
        if queue_sort(profile) != first:
            path = f"profiles[{index}].plugins.queueSort"
            yield f"{path}: queueSort must be the same for all profiles"


def backoff_order(cfg: dict[str, Any]) -> Iterator[str]:
    if cfg["podInitialBackoffSeconds"] <= 0:
        yield "podInitialBackoffSeconds: must be greater than 0"
    if cfg["podMaxBackoffSeconds"] < cfg["podInitialBackoffSeconds"]:
        yield "podMaxBackoffSeconds: must be greater than or equal to PodInitialBackoffSeconds"


def prioritizing_extender_weighted(cfg: dict[str, Any]) -> Iterator[str]:
    for index, extender in enumerate(cfg["extenders"]):
        if extender.get("prioritizeVerb") and (extender.get("weight") or 0) <= 0:
            yield f"extenders[{index}].weight: must have a positive weight applied to it"


def managed_resources_extended(cfg: dict[str, Any]) -> Iterator[str]:
    seen: set[str] = set()
    for index, extender in enumerate(cfg["extenders"]):
        for at, resource in enumerate(extender.get("managedResources") or []):
            path = f"extenders[{index}].managedResources[{at}].name"
            name = resource.get("name") or ""
            problems = qualified_name_problems(name)
            for problem in problems:
                yield f"{path}: Invalid value: {name!r}: {problem}"
            if not problems and not is_extended_resource_name(name):
                yield f"{path}: Invalid value: {name!r}: is an invalid extended resource name"
            if name in seen:
                yield f"{path}: duplicate extender managed resource name"
            seen.add(name)


def one_binder(cfg: dict[str, Any]) -> Iterator[str]:
    binders = sum(1 for e in cfg["extenders"] if e.get("bindVerb"))
    if binders > 1:
        yield f"extenders: found {binders} extenders implementing bind: only one extender can"


RULES: tuple[Rule, ...] = (
    burst_not_negative,
    leader_election_timings,
    leader_election_uses_leases,
    parallelism_positive,
    profiles_named_and_unique,
    percentage_in_range,
    no_removed_plugins,
    plugin_config_unique,
    one_common_queue_sort,
    backoff_order,
    prioritizing_extender_weighted,
    managed_resources_extended,
    one_binder,
)


def validate(doc: Mapping[str, Any]) -> list[str]:
    """Every refusal kube-scheduler v1.32 would give the configuration (empty: it starts)."""
    if doc.get("apiVersion") != API_VERSION or doc.get("kind") != "KubeSchedulerConfiguration":
        return [f"not a {API_VERSION} KubeSchedulerConfiguration"]
    problems = list(decode_errors(doc, FIELDS, ""))
    if problems:
        return problems
    cfg = defaulted(doc)
    return [problem for rule in RULES for problem in rule(cfg)]
