"""ValidateKubeletConfiguration's checks, section by section, and Go's printing (pure).

The parts of ``whole.validation_messages`` that take more than a line or two: taints,
graceful shutdown, swap, crash-loop back-off, node allocatable enforcement, reserved CPUs
and memory, pod logs (logging and tracing: ``component_checks.py``); and how Go prints
durations (``1m0s``, a ``metav1.Duration`` as ``{500ms}``), floats and quoted strings in
those messages.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from decimal import Decimal

from cpumanager.formats.kubelet_config.fields import go_duration_nanos

_S = 10**9
_ENFORCE = "enforceNodeAllocatable (--enforce-node-allocatable)"
_ENFORCEMENT_KEYS = ("pods", "system-reserved", "system-reserved-compressible",
                     "kube-reserved", "kube-reserved-compressible", "none")  # fmt: skip


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


def go_struct_duration(nanos: int) -> str:
    """A ``metav1.Duration`` printed whole with ``%v``: ``{500ms}`` (the kubelet's messages
    print some durations this way, others as the inner ``time.Duration``)."""
    return "{" + go_duration_text(nanos) + "}"


def _decimal(amount: int, unit: int) -> str:
    whole, frac = divmod(amount, unit)
    if not frac:
        return str(whole)
    digits = len(str(unit)) - 1
    return f"{whole}.{str(frac).rjust(digits, '0').rstrip('0')}"


def go_float(value: float) -> str:
    """Go's ``%v`` of a float64 (``strconv.FormatFloat(f, 'g', -1, 64)``): the shortest
    digits, in exponent form when the exponent is below -4 or 6 and above (``1e+06``)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    sign, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    assert isinstance(exponent, int)
    text = "".join(map(str, digits))
    point = len(text) + exponent  # digits before the decimal point
    exp = point - 1
    minus = "-" if sign else ""
    if exp < -4 or exp >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{minus}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if point <= 0:
        return f"{minus}0.{'0' * -point}{text}"
    if point >= len(text):
        return minus + text + "0" * (point - len(text))
    return f"{minus}{text[:point]}.{text[point:]}"


def go_q(text: str) -> str:
    from cpumanager.core.gocompat import go_quote

    return go_quote(text)


def negative(name: str, flag: str, value: int) -> str:
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


def taint_messages(raw: object) -> list[str]:
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


def shutdown_messages(kc: Mapping[str, object], on: Callable[[str], bool]) -> list[str]:
    out: list[str] = []
    period = as_int(kc.get("shutdownGracePeriod"))
    critical = as_int(kc.get("shutdownGracePeriodCriticalPods"))
    if on("GracefulNodeShutdown"):
        if critical > period:
            out.append(
                "invalid configuration: shutdownGracePeriodCriticalPods "
                f"{go_struct_duration(critical)} must be <= shutdownGracePeriod "
                f"{go_struct_duration(period)}"
            )
        for name, value in (("shutdownGracePeriod", period),
                            ("shutdownGracePeriodCriticalPods", critical)):  # fmt: skip
            if value < 0 or 0 < value < _S:
                out.append(
                    f"invalid configuration: {name} {go_struct_duration(value)} must be either "
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


def swap_messages(kc: Mapping[str, object], on: Callable[[str], bool]) -> list[str]:
    swap = kc.get("memorySwap")
    behavior = swap.get("swapBehavior", "") if isinstance(swap, Mapping) else ""
    behavior = behavior if isinstance(behavior, str) else ""
    if on("NodeSwap"):
        if behavior not in ("", "NoSwap", "LimitedSwap"):
            return [
                f"invalid configuration: memorySwap.swapBehavior {go_q(behavior)} must be one of: "
                '"", "LimitedSwap" or "NoSwap"'
            ]
        return []
    if behavior:
        return [
            "invalid configuration: memorySwap.swapBehavior cannot be set when NodeSwap feature "
            "flag is disabled"
        ]
    return []


def crash_loop_messages(kc: Mapping[str, object], on: Callable[[str], bool]) -> list[str]:
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
                f"{go_float(nanos / _S)} seconds) must be set between 1s and 300s"
            ]
        return []
    if nanos is not None:
        return [
            "invalid configuration: FeatureGate KubeletCrashLoopBackOffMax not enabled, "
            "CrashLoopBackOff.MaxContainerRestartPeriod must not be set"
        ]
    return []


def enforcement_messages(kc: Mapping[str, object], *, compressible: bool) -> list[str]:
    out: list[str] = []
    raw = kc.get("enforceNodeAllocatable", ["pods"])
    levels = [str(item) for item in raw] if isinstance(raw, list) else []
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
            out.append(
                f"invalid configuration: duplicated enforcements {go_q(level)} in {_ENFORCE}"
            )
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
            valid = ", ".join(go_q(k) for k in keys[:-1])
            out.append(
                f"invalid configuration: option {go_q(level)} specified for {_ENFORCE}. Valid "
                f'options are {valid} or "none"'
            )
            continue
        if kc.get("cgroupsPerQOS") is False:
            out.append(
                "invalid configuration: cgroupsPerQOS (--cgroups-per-qos) must be set to true "
                f"when {go_q(level)} contained in {_ENFORCE}"
            )
    return out


def _cgroup_needed(field: str, plain: str, compressible: bool) -> str:
    which = f'"{plain}" or "{plain}-compressible"' if compressible else f'"{plain}"'
    return f"invalid configuration: {field} must be specified when {which} included in {_ENFORCE}"


def cpuset_error(text: str) -> str:
    """``cpuset.Parse``'s error for a CPU list, or "" when it parses."""
    for part in text.split(","):
        bounds = part.split("-", 1)
        for bound in bounds:
            problem = _atoi_error(bound)
            if problem:
                return problem
        if len(bounds) == 2:
            start, end = int(bounds[0]), int(bounds[1])
            if start > end:
                return f"invalid range {go_q(part)} ({start} > {end})"
    return ""


def _atoi_error(text: str) -> str:
    """``strconv.Atoi``'s error for ``text``, or "" when it is an int64."""
    if re.fullmatch(r"[+-]?[0-9]+", text) is None:
        return f"strconv.Atoi: parsing {go_q(text)}: invalid syntax"
    sign = "-" if text.startswith("-") else ""
    digits = text.lstrip("+-").lstrip("0") or "0"
    if len(digits) > 19 or not -(2**63) <= int(sign + digits) < 2**63:
        return f"strconv.Atoi: parsing {go_q(text)}: value out of range"
    return ""


def reserved_memory_messages(raw: object) -> list[str]:
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
        for resource, amount in sorted(limits.items(), key=lambda item: str(item[0])):
            if not (resource == "memory" or str(resource).startswith("hugepages-")):
                out.append(
                    f"invalid configuration: the limit type {go_q(str(resource))} for NUMA node "
                    f"{node} is not supported, only [memory hugepages-<HugePageSize>] is accepted"
                )
            if str(amount).strip() in ("0", "0Mi", "0Gi", "0Ki", "0m", "0.0"):
                out.append(
                    "invalid configuration: reserved memory may not be zero for NUMA node "
                    f"{node} and resource {go_q(str(resource))}"
                )
            if (node, resource) in seen:
                out.append(
                    "invalid configuration: the reserved memory has a duplicate value for NUMA "
                    f"node {node} and resource {go_q(str(resource))}"
                )
            seen.add((node, str(resource)))
    return out


def pod_logs_messages(path: str) -> list[str]:
    out: list[str] = []
    if path == "":
        out.append("invalid configuration: podLogsDir was not specified")
    if not path.startswith("/"):
        out.append(f"invalid configuration: pod logs path {go_q(path)} must be absolute path")
    if _go_clean(path) != path:
        out.append(f"invalid configuration: pod logs path {go_q(path)} must be normalized")
    if any(ord(ch) > 127 for ch in path):
        out.append(
            f"invalid configuration: pod logs path {go_q(path)} mut contains ASCII characters only"
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


def as_int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
