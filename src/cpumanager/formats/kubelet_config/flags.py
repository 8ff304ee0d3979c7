"""The kubelet's command-line flags for the fields we read, parsed as pflag does (pure).

A kubelet command line is a list of words (see ``launch.py`` for where they come from).
Flags we know are parsed with the kubelet's value types and errors; every other word is
skipped, since the kubelet has hundreds of flags we do not model (so the value of an
unknown ``--flag value`` pair is skipped as a stray word too).

pflag's rules kept here: ``--name=value`` or ``--name value`` (the next word, even one
starting with ``-``); booleans only take ``--name`` or ``--name=false``; ``_`` in a name
reads as ``-``; ``--`` ends the flags; a repeated plain flag keeps its last value; a repeated
map flag accumulates, but its first use replaces the whole map from the configuration file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from cpumanager.core.gocompat import parse_go_bool
from cpumanager.core.quantity import parse_quantity
from cpumanager.errors import WorkloadError
from cpumanager.formats.kubelet_config.fields import fail, go_duration_nanos

__all__ = ["FLAG_FIELDS", "KubeletFlags", "parse_kubelet_flags"]


@dataclass(frozen=True, slots=True)
class KubeletFlags:
    """What a kubelet command line sets: configuration fields and the flag-only paths."""

    fields: Mapping[str, object] = field(default_factory=dict)
    flag_names: Mapping[str, str] = field(default_factory=dict)  # field -> "--flag"
    config: str | None = None
    config_dir: str | None = None
    root_dir: str | None = None


_Kind = Callable[[str, str, object], object]  # (flag, text, previous value) -> new value


def _string(flag: str, text: str, previous: object) -> object:
    return text


def _duration(flag: str, text: str, previous: object) -> object:
    try:
        go_duration_nanos(text)
    except ValueError as err:
        fail(f'invalid argument "{text}" for "{flag}" flag: {err}')
    return text


def _int32(flag: str, text: str, previous: object) -> object:
    try:
        number = int(text, 0)
    except ValueError:
        number = None
    if number is None or not -(2**31) <= number < 2**31:
        fail(f'invalid argument "{text}" for "{flag}" flag: strconv.ParseInt: parsing "{text}"')
    return number


def _bool(flag: str, text: str, previous: object) -> object:
    value = parse_go_bool(text)
    if value is None:
        fail(f'invalid argument "{text}" for "{flag}" flag: strconv.ParseBool: parsing "{text}"')
    return value


def _string_slice(flag: str, text: str, previous: object) -> object:
    items = [item.strip() for item in text.split(",")] if text else []
    return [*previous, *items] if isinstance(previous, list) else items


def _pairs(flag: str, text: str, previous: object, *, sep: str, split: bool) -> dict[str, str]:
    out: dict[str, str] = dict(previous) if isinstance(previous, dict) else {}
    parts = text.split(",") if split else [text]
    for part in parts:
        if split and not part.strip():
            continue
        key, found, value = part.partition(sep)
        if not found:
            fail(
                f'invalid argument "{text}" for "{flag}" flag: malformed pair, expect '
                f"string{sep}string"
            )
        out[key.strip()] = value.strip()
    return out


def _map(flag: str, text: str, previous: object) -> object:
    return _pairs(flag, text, previous, sep="=", split=True)


def _map_no_split(flag: str, text: str, previous: object) -> object:
    return _pairs(flag, text, previous, sep="=", split=False)


def _langle_map(flag: str, text: str, previous: object) -> object:
    return _pairs(flag, text, previous, sep="<", split=True)


def _bool_map(flag: str, text: str, previous: object) -> object:
    out: dict[str, bool] = dict(previous) if isinstance(previous, dict) else {}
    for key, value in _pairs(flag, text, {}, sep="=", split=True).items():
        parsed = parse_go_bool(value)
        if parsed is None:
            fail(
                f'invalid argument "{text}" for "{flag}" flag: invalid value of {key}: {value}, '
                f'err: strconv.ParseBool: parsing "{value}": invalid syntax'
            )
        out[key] = parsed
    return out


def _reserved_memory(flag: str, text: str, previous: object) -> object:
    out: list[object] = list(previous) if isinstance(previous, list) else []
    if not text:
        return out
    bad = f'invalid argument "{text}" for "{flag}" flag: '
    for reservation in text.split(";"):
        node_text, found, limits_text = reservation.partition(":")
        if not found or ":" in limits_text:
            fail(
                bad + "the reserved memory has incorrect format, expected "
                f"numaNodeID:type=quantity[,type=quantity...], got {reservation}"
            )
        try:
            node = int(node_text)
        except ValueError:
            fail(bad + f"failed to convert the NUMA node ID, exptected integer, got {node_text}")
        limits: dict[str, str] = {}
        for limit in limits_text.split(","):
            name, found, amount = limit.partition("=")
            if not found or "=" in amount:
                fail(
                    bad + "the reserved limit has incorrect value, expected type=quantatity, "
                    f"got {limit}"
                )
            if name != "memory" and not name.startswith("hugepages-"):
                fail(bad + f'memory type conversion error, unknown type: "{name}"')
            try:
                parse_quantity(amount, field=name)
            except WorkloadError:
                fail(bad + f"failed to parse the quantatity, expected quantatity, got {amount}")
            limits[name] = amount
        out.append({"numaNode": node, "limits": limits})
    return out


# flag -> (v1beta1 field, value kind); "" marks the flag-only paths.
FLAG_FIELDS: Mapping[str, tuple[str, _Kind]] = {
    "cpu-manager-policy": ("cpuManagerPolicy", _string),
    "cpu-manager-policy-options": ("cpuManagerPolicyOptions", _map_no_split),
    "cpu-manager-reconcile-period": ("cpuManagerReconcilePeriod", _duration),
    "reserved-cpus": ("reservedSystemCPUs", _string),
    "kube-reserved": ("kubeReserved", _map),
    "system-reserved": ("systemReserved", _map),
    "kube-reserved-cgroup": ("kubeReservedCgroup", _string),
    "system-reserved-cgroup": ("systemReservedCgroup", _string),
    "enforce-node-allocatable": ("enforceNodeAllocatable", _string_slice),
    "eviction-hard": ("evictionHard", _langle_map),
    "topology-manager-policy": ("topologyManagerPolicy", _string),
    "topology-manager-scope": ("topologyManagerScope", _string),
    "topology-manager-policy-options": ("topologyManagerPolicyOptions", _map_no_split),
    "memory-manager-policy": ("memoryManagerPolicy", _string),
    "reserved-memory": ("reservedMemory", _reserved_memory),
    "feature-gates": ("featureGates", _bool_map),
    "cgroups-per-qos": ("cgroupsPerQOS", _bool),
    "cgroup-driver": ("cgroupDriver", _string),
    "cgroup-root": ("cgroupRoot", _string),
    "max-pods": ("maxPods", _int32),
    "pods-per-core": ("podsPerCore", _int32),
}
_PATH_FLAGS = ("config", "config-dir", "root-dir")


def parse_kubelet_flags(words: Sequence[str]) -> KubeletFlags:
    """The flags we know in a kubelet command line; ConfigError with pflag's wording."""
    values: dict[str, object] = {}
    names: dict[str, str] = {}
    paths: dict[str, str] = {}
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if word == "--":
            break
        if not word.startswith("--") or len(word) == 2:
            continue
        name, has_value, text = word[2:].partition("=")
        name = name.replace("_", "-")
        known = FLAG_FIELDS.get(name)
        if known is None and name not in _PATH_FLAGS:
            continue
        is_bool = known is not None and known[1] is _bool
        if not has_value:
            if is_bool:
                text = "true"
            elif index < len(words):
                text = words[index]
                index += 1
            else:
                fail(f"flag needs an argument: --{name}")
        if known is None:
            paths[name] = text
            continue
        target, kind = known
        values[target] = kind(f"--{name}", text, values.get(target))
        names[target] = f"--{name}"
    return KubeletFlags(
        fields=values,
        flag_names=names,
        config=paths.get("config"),
        config_dir=paths.get("config-dir"),
        root_dir=paths.get("root-dir"),
    )
