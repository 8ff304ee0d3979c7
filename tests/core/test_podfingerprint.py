"""The pod-set fingerprint against the podfingerprint library's own answers.

tests/data/podfingerprint_vectors.json holds pod sets and the fingerprint the Go library
(github.com/k8stopologyawareschedwg/podfingerprint, ``Add`` then ``Sign``) gave for each;
the library's published vector (its 259-pod testdata file -> ``pfp0v001e477a4e3b2fc0ec6``)
was checked the same way when the file was made.
"""

from __future__ import annotations

import json
import random
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cpumanager.core.podfingerprint import (
    METHOD_ALL,
    METHOD_EXCLUSIVE,
    PodEntry,
    fingerprint,
    has_exclusive_resources,
    is_native_resource,
    plugin_podset,
)
from cpumanager.core.workload import Container, ContainerKind, Pod
from tests.builders import container, pod

VECTORS = json.loads(
    (Path(__file__).parents[1] / "data" / "podfingerprint_vectors.json").read_text("utf-8")
)


@pytest.mark.parametrize("case", VECTORS["cases"], ids=lambda c: str(c["name"]))
def test_library_vectors(case: dict[str, object]) -> None:
    pods = [(ns, name) for ns, name in case["pods"]]  # type: ignore[attr-defined]
    assert fingerprint(pods) == case["fingerprint"]


def test_vectors_cover_the_interesting_sets() -> None:
    names = {c["name"] for c in VECTORS["cases"]}
    assert {"empty", "duplicate", "unicode", "generated-300", "kubeadm-fixture"} <= names


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.text(max_size=12), st.text(max_size=12)), max_size=30), st.randoms())
def test_order_does_not_matter(pods: list[tuple[str, str]], rnd: random.Random) -> None:
    shuffled = list(pods)
    rnd.shuffle(shuffled)
    assert fingerprint(shuffled) == fingerprint(pods)


def test_namespace_and_name_are_not_concatenated() -> None:
    assert fingerprint([("ab", "c")]) != fingerprint([("a", "bc")])


def test_native_resources() -> None:
    assert is_native_resource("cpu")
    assert is_native_resource("hugepages-2Mi")
    assert is_native_resource("kubernetes.io/batch-cpu")
    assert not is_native_resource("nvidia.com/gpu")


def _burstable(uid: str, gpus: int = 0) -> Pod:
    return pod(uid, _shared("app", gpus))


def _shared(name: str, gpus: int, kind: ContainerKind = ContainerKind.APP) -> Container:
    """A Burstable container (500m of 1 CPU, 1Gi), with ``gpus`` nvidia.com/gpu."""
    body = container(name, "500m", limit="1", kind=kind)
    if not gpus:
        return body
    extra = {"nvidia.com/gpu": Fraction(gpus)}
    return replace(body, requests={**body.requests, **extra}, limits={**body.limits, **extra})


def test_exclusive_resources_as_the_plugin_sees_them() -> None:
    assert has_exclusive_resources(pod("int", container("a", "2")), ())
    # Every Guaranteed pod requests memory: it counts even with a fractional CPU.
    assert has_exclusive_resources(pod("frac", container("a", "500m")), ())
    assert not has_exclusive_resources(_burstable("b"), ())
    # A device counts only when the object's zones list its resource.
    assert not has_exclusive_resources(_burstable("d", gpus=1), ())
    assert has_exclusive_resources(_burstable("d", gpus=1), {"nvidia.com/gpu"})


def test_init_containers_count_only_as_sidecars() -> None:
    init = _shared("setup", 1, ContainerKind.INIT)
    shared = _shared("app", 0)
    plain = pod("p", shared, init=(init,))
    assert not has_exclusive_resources(plain, {"nvidia.com/gpu"})
    sidecar = _shared("proxy", 1, ContainerKind.SIDECAR)
    assert has_exclusive_resources(pod("s", shared, init=(sidecar,)), {"nvidia.com/gpu"})


def _entry(name: str, phase: str, *, guaranteed: bool) -> PodEntry:
    body = container("a", "2") if guaranteed else container("a", "500m", limit="1")
    return PodEntry(pod(name, body), phase)


def test_podset_by_informer_and_method() -> None:
    entries = [
        _entry("run-g", "Running", guaranteed=True),
        _entry("run-b", "Running", guaranteed=False),
        _entry("pending", "Pending", guaranteed=True),
        _entry("done", "Succeeded", guaranteed=True),
    ]

    def names(found: list[tuple[str, str]]) -> list[str]:
        return [n for _, n in found]

    assert names(plugin_podset(entries)) == ["done", "run-b", "run-g"]
    assert names(plugin_podset(entries, informer="shared")) == ["run-b", "run-g"]
    assert names(plugin_podset(entries, method=METHOD_EXCLUSIVE)) == ["done", "run-g"]
    assert plugin_podset(entries, method=METHOD_ALL, informer="shared") == [
        ("default", "run-b"), ("default", "run-g"),
    ]  # fmt: skip


def test_unbound_pods_never_count() -> None:
    entry = PodEntry(pod("x", container("a", "2")), "Running", bound=False)
    assert plugin_podset([entry]) == []


def test_unknown_method_or_informer_is_refused() -> None:
    with pytest.raises(ValueError, match="fingerprint method"):
        plugin_podset([], method="some")
    with pytest.raises(ValueError, match="informer mode"):
        plugin_podset([], informer="other")
