"""The kubelet's v1beta1 defaulting for the fields the resource managers read (pure).

``SetDefaults_KubeletConfiguration`` runs on the decoded file, where a field's Go zero value
means "unset": an empty string, a zero number, a ``0s`` duration, a nil map, list or pointer.
kubeadm writes every zero duration out (``cpuManagerReconcilePeriod: 0s``), so a file as
kubeadm writes it gets the same defaults as an empty one. Explicit empty maps and lists
(``evictionHard: {}``, ``enforceNodeAllocatable: []``) are not nil in Go and stay empty.

``evictionHard`` is defaulted by the kubelet's file loader, not by SetDefaults (its default
is OS-specific); the Linux default is used here, per release (:func:`eviction_hard_default`:
``imagefs.inodesFree: 5%`` joined the four older signals in 1.30, kubernetes#121834). With
``mergeDefaultEvictionSettings`` the default signals the configuration leaves out are added
after all sources are merged.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from fractions import Fraction
from types import MappingProxyType

from cpumanager.core.versions import NEWEST, Release
from cpumanager.errors import ConfigError
from cpumanager.formats.kubelet_config.fields import parse_go_duration

__all__ = [
    "DEFAULT_EVICTION_HARD",
    "DEFAULT_ROOT_DIR",
    "FIELD_DEFAULTS",
    "MANAGER_FIELDS",
    "EVICTION_HARD_INODES_SINCE",
    "apply_defaults",
    "eviction_hard_default",
    "merge_default_eviction",
]

# Linux's eviction.DefaultEvictionHard up to 1.29 ...
_EVICTION_HARD_1_18: Mapping[str, str] = MappingProxyType(
    {
        "memory.available": "100Mi",
        "nodefs.available": "10%",
        "nodefs.inodesFree": "5%",
        "imagefs.available": "15%",
    }
)
# ... and from 1.30 on (kubernetes#121834 added imagefs.inodesFree; 1.32's code has five).
EVICTION_HARD_INODES_SINCE: Release = (1, 30)
_EVICTION_HARD_1_30: Mapping[str, str] = MappingProxyType(
    {**_EVICTION_HARD_1_18, "imagefs.inodesFree": "5%"}
)


def eviction_hard_default(release: Release = NEWEST) -> Mapping[str, str]:
    """Linux's default ``evictionHard`` in kubelet ``release``."""
    return _EVICTION_HARD_1_30 if release >= EVICTION_HARD_INODES_SINCE else _EVICTION_HARD_1_18


# The newest release's default (the one used when no release is named).
DEFAULT_EVICTION_HARD: Mapping[str, str] = eviction_hard_default(NEWEST)
DEFAULT_ROOT_DIR = "/var/lib/kubelet"  # --root-dir, a flag with no configuration field


def _zero_string(value: object) -> bool:
    return value is None or value == ""


def _zero_number(value: object) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and value == 0)


def _zero_duration(value: object) -> bool:
    if value is None:
        return True
    if not isinstance(value, str):
        return False  # a type error: decoding reports it
    try:
        return parse_go_duration(value) == Fraction(0)
    except ConfigError:
        return False  # not a duration: decoding reports it


def _nil(value: object) -> bool:
    return value is None


# field -> (is it unset?, its default). Fields the kubelet leaves nil have no entry here.
FIELD_DEFAULTS: Mapping[str, tuple[Callable[[object], bool], object]] = MappingProxyType(
    {
        "cpuManagerPolicy": (_zero_string, "none"),
        "cpuManagerReconcilePeriod": (_zero_duration, "10s"),
        "memoryManagerPolicy": (_zero_string, "None"),
        "topologyManagerPolicy": (_zero_string, "none"),
        "topologyManagerScope": (_zero_string, "container"),
        "cgroupsPerQOS": (_nil, True),
        "cgroupDriver": (_zero_string, "cgroupfs"),
        "maxPods": (_zero_number, 110),
        "enforceNodeAllocatable": (_nil, ["pods"]),
        "mergeDefaultEvictionSettings": (_nil, False),
        "evictionHard": (_nil, dict(DEFAULT_EVICTION_HARD)),
    }
)

# Every field the CPU, memory, device and topology managers and node allocatable read.
MANAGER_FIELDS: tuple[str, ...] = (
    "cpuManagerPolicy",
    "cpuManagerPolicyOptions",
    "cpuManagerReconcilePeriod",
    "memoryManagerPolicy",
    "reservedMemory",
    "topologyManagerPolicy",
    "topologyManagerScope",
    "topologyManagerPolicyOptions",
    "reservedSystemCPUs",
    "kubeReserved",
    "systemReserved",
    "kubeReservedCgroup",
    "systemReservedCgroup",
    "enforceNodeAllocatable",
    "evictionHard",
    "mergeDefaultEvictionSettings",
    "cgroupsPerQOS",
    "cgroupDriver",
    "cgroupRoot",
    "maxPods",
    "podsPerCore",
    "featureGates",
)


def apply_defaults(
    raw: Mapping[str, object], *, release: Release = NEWEST
) -> tuple[dict[str, object], frozenset[str]]:
    """``raw`` with every unset manager field defaulted as kubelet ``release`` defaults it,
    and the names that were defaulted."""
    out = dict(raw)
    defaulted = set()
    for name, (unset, default) in FIELD_DEFAULTS.items():
        if unset(out.get(name)):
            value = dict(eviction_hard_default(release)) if name == "evictionHard" else default
            out[name] = _copy(value)
            defaulted.add(name)
    return out, frozenset(defaulted)


def merge_default_eviction(
    raw: Mapping[str, object], *, release: Release = NEWEST
) -> tuple[dict[str, object], bool]:
    """With ``mergeDefaultEvictionSettings: true``, the default signals left out are added."""
    out = dict(raw)
    current = out.get("evictionHard")
    if out.get("mergeDefaultEvictionSettings") is not True or not isinstance(current, Mapping):
        return out, False
    merged = {**eviction_hard_default(release), **current}
    out["evictionHard"] = merged
    return out, len(merged) != len(current)


def _copy(value: object) -> object:
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, list):
        return list(value)
    return value
