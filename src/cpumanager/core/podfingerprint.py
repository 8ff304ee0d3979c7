"""The pod-set fingerprint of a NodeResourceTopology object (pure).

The NodeResourceTopologyMatch scheduler plugin, with its reserve cache on
(``cacheResyncPeriodSeconds`` > 0), only takes a node's new NodeResourceTopology object
once the object's ``nodeTopologyPodsFingerprint`` attribute equals the fingerprint the
plugin computes over the pods it sees bound to that node; without the attribute the node
is never resynced. The format is the one of github.com/k8stopologyawareschedwg/podfingerprint
(``v001``):

* each pod is hashed as XXH64(name, seed = XXH64(namespace, seed 0));
* the pod hashes are sorted as unsigned integers and fed, each as 8 little-endian bytes,
  to one XXH64 (seed 0);
* the fingerprint is ``pfp0`` + ``v001`` + the 16 hex digits of that digest (big-endian).

The set is unordered: the same pods in any order give the same fingerprint; a pod named
twice counts twice, as in the library.

Which pods the plugin puts in the set (its cache code): the pods bound to the node whose
phase is not ``Pending`` (its default, dedicated pod informer) or only ``Running`` ones
(the shared informer). With the ``with-exclusive-resources`` method (the
``nodeTopologyPodsFingerprintMethod`` attribute, read when the plugin's resync method is
``Autodetect``), only pods with exclusive resources count, in the plugin's sense:
an app container or a restartable init container (ordinary init containers are skipped)
that requests a resource named in the object's zones and not native to Kubernetes (any
quantity), or, in a Guaranteed pod, an integral CPU count above zero, or any memory or
hugepages. Every Guaranteed pod therefore counts (it requests memory).
"""

from __future__ import annotations

import struct
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from fractions import Fraction

import xxhash

from cpumanager.core.workload import ContainerKind, Pod, QoSClass, qos_class

__all__ = [
    "ATTRIBUTE",
    "ATTRIBUTE_METHOD",
    "INFORMER_MODES",
    "METHODS",
    "METHOD_ALL",
    "METHOD_EXCLUSIVE",
    "PodEntry",
    "fingerprint",
    "has_exclusive_resources",
    "is_native_resource",
    "plugin_podset",
]

PREFIX = "pfp0"
VERSION = "v001"
ATTRIBUTE = "nodeTopologyPodsFingerprint"
ATTRIBUTE_METHOD = "nodeTopologyPodsFingerprintMethod"
METHOD_ALL = "all"
METHOD_EXCLUSIVE = "with-exclusive-resources"
METHODS = (METHOD_ALL, METHOD_EXCLUSIVE)
INFORMER_MODES = ("dedicated", "shared")
_NATIVE_PREFIX = "kubernetes.io/"


def _pod_hash(namespace: str, name: str) -> int:
    seed = xxhash.xxh64_intdigest(namespace.encode())
    return xxhash.xxh64_intdigest(name.encode(), seed=seed)


def fingerprint(pods: Iterable[tuple[str, str]]) -> str:
    """The fingerprint of a set of (namespace, name) pairs."""
    hashes = sorted(_pod_hash(namespace, name) for namespace, name in pods)
    digest = xxhash.xxh64(b"".join(struct.pack("<Q", value) for value in hashes))
    return PREFIX + VERSION + digest.hexdigest()


def is_native_resource(name: str) -> bool:
    """Kubernetes' IsNativeResource: no domain, or a ``kubernetes.io/`` one."""
    return "/" not in name or _NATIVE_PREFIX in name


def _exclusive(guaranteed: bool, resource: str, amount: Fraction, zoned: Collection[str]) -> bool:
    if not is_native_resource(resource):
        return resource in zoned
    if not guaranteed:
        return False
    if resource == "cpu":
        return amount > 0 and amount.denominator == 1
    if resource == "memory" or resource.startswith("hugepages-"):
        return amount > 0
    return False


def has_exclusive_resources(pod: Pod, zoned: Collection[str]) -> bool:
    """The plugin's test: does the pod hold exclusive resources in its steady state?

    ``zoned``: the resource names listed in the node's NodeResourceTopology zones."""
    guaranteed = qos_class(pod) is QoSClass.GUARANTEED
    for container in pod.all_containers():
        if container.kind is ContainerKind.INIT:
            continue
        for resource, amount in container.requests.items():
            if _exclusive(guaranteed, resource, amount, zoned):
                return True
    return False


@dataclass(frozen=True, slots=True)
class PodEntry:
    """A pod as the API server lists it: its identity, phase and parsed manifest."""

    pod: Pod
    phase: str
    bound: bool = True


def plugin_podset(
    pods: Iterable[PodEntry],
    *,
    method: str = METHOD_ALL,
    zoned: Collection[str] = (),
    informer: str = "dedicated",
) -> list[tuple[str, str]]:
    """The (namespace, name) pairs the plugin fingerprints for a node, sorted."""
    if method not in METHODS:
        msg = f"unknown fingerprint method {method!r} (one of {', '.join(METHODS)})"
        raise ValueError(msg)
    if informer not in INFORMER_MODES:
        msg = f"unknown informer mode {informer!r} (one of {', '.join(INFORMER_MODES)})"
        raise ValueError(msg)
    found = []
    for entry in pods:
        if informer == "shared":
            if entry.phase != "Running":
                continue
        elif entry.phase == "Pending" or not entry.bound:
            continue
        if method == METHOD_EXCLUSIVE and not has_exclusive_resources(entry.pod, zoned):
            continue
        found.append((entry.pod.namespace, entry.pod.name))
    return sorted(found)
