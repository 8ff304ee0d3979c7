"""Pods from parsed manifests: shapes, defaulting, QoS, sidecars and every malformed field."""

from __future__ import annotations

import copy
from fractions import Fraction
from typing import Any

import pytest

from cpumanager.core.workload import (
    ContainerKind,
    QoSClass,
    guaranteed_cpus,
    pod_guaranteed_cpus,
    qos_class,
)
from cpumanager.errors import InputError, WorkloadError
from cpumanager.formats.manifest import derived_pod_uid, pod_from_manifest, pods_from_documents


def ctr(name: str = "c", *, limits: Any = None, requests: Any = None, **extra: Any) -> dict:
    """One container manifest."""
    resources: dict[str, Any] = {}
    if limits is not None:
        resources["limits"] = limits
    if requests is not None:
        resources["requests"] = requests
    return {"name": name, "resources": resources, **extra}


def pod(name: str = "p", *containers: dict, init: tuple[dict, ...] = (), **meta: Any) -> dict:
    """One Pod manifest."""
    spec: dict[str, Any] = {"containers": list(containers) or [ctr()]}
    if init:
        spec["initContainers"] = list(init)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, **meta}, "spec": spec}


G = {"cpu": "2", "memory": "1Gi"}  # a Guaranteed container's limits


# --- shapes ----------------------------------------------------------------------------

KUBECTL_OUTPUT = {
    "apiVersion": "v1",
    "kind": "List",
    "items": [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "web-0",
                "namespace": "prod",
                "uid": "0f1e2d3c-aaaa-bbbb-cccc-000000000001",
                "resourceVersion": "1234",
                "creationTimestamp": "2024-01-01T00:00:00Z",
                "labels": {"app": "web"},
                "managedFields": [{"manager": "kubectl", "operation": "Update"}],
                "ownerReferences": [{"kind": "StatefulSet", "name": "web"}],
            },
            "spec": {
                "containers": [
                    {
                        "name": "app",
                        "image": "nginx:1.25",
                        "ports": [{"containerPort": 80}],
                        "resources": {
                            "limits": {"cpu": "4", "memory": "8Gi"},
                            "requests": {"cpu": "4", "memory": "8Gi"},
                        },
                        "volumeMounts": [{"mountPath": "/data", "name": "data"}],
                    }
                ],
                "nodeName": "node-1",
                "restartPolicy": "Always",
                "volumes": [{"name": "data", "emptyDir": {}}],
            },
            "status": {
                "phase": "Running",
                "qosClass": "Guaranteed",
                "containerStatuses": [{"name": "app", "ready": True, "restartCount": 0}],
            },
        }
    ],
    "metadata": {"resourceVersion": ""},
}


def test_single_pod() -> None:
    (only,) = pods_from_documents([pod("p1", ctr(limits=G))])
    assert (only.name, only.namespace, [c.name for c in only.containers]) == (
        "p1",
        "default",
        ["c"],
    )
    assert only.uid == derived_pod_uid("default", "p1")


def test_kubectl_get_list_output_loads_and_ignores_status() -> None:
    (only,) = pods_from_documents([KUBECTL_OUTPUT])
    assert (only.uid, only.namespace, only.name) == (
        "0f1e2d3c-aaaa-bbbb-cccc-000000000001",
        "prod",
        "web-0",
    )
    assert qos_class(only) is QoSClass.GUARANTEED
    assert guaranteed_cpus(only, only.containers[0]) == 4


def test_pod_list_items_without_kind() -> None:
    doc = {
        "kind": "PodList",
        "items": [{"metadata": {"name": "a"}, "spec": {"containers": [ctr()]}}],
    }
    assert [p.name for p in pods_from_documents([doc])] == ["a"]


def test_several_documents_in_order_and_empty_documents_skipped() -> None:
    docs = [pod("a"), None, {"kind": "List", "items": [pod("b"), pod("c")]}, pod("d")]
    assert [p.name for p in pods_from_documents(docs)] == ["a", "b", "c", "d"]


def test_empty_list_and_no_documents() -> None:
    assert pods_from_documents([{"kind": "List", "items": None}]) == []
    assert pods_from_documents([]) == []


def test_missing_kind_with_spec_is_a_pod() -> None:
    doc = {"metadata": {"name": "bare"}, "spec": {"containers": [ctr()]}}
    assert pods_from_documents([doc])[0].name == "bare"


def test_pod_from_manifest_wants_exactly_one() -> None:
    assert pod_from_manifest(pod("x")).name == "x"
    with pytest.raises(WorkloadError, match="expected exactly one Pod, found 2"):
        pod_from_manifest({"kind": "List", "items": [pod("a"), pod("b")]})


def test_derived_uid_is_stable_and_namespaced() -> None:
    first = pods_from_documents([pod("p", namespace="a")])[0].uid
    again = pods_from_documents([pod("p", namespace="a")])[0].uid
    other = pods_from_documents([pod("p", namespace="b")])[0].uid
    assert first == again != other


def test_derived_uid_literal() -> None:
    # Pinned: changing the derivation would silently change every derived uid.
    assert derived_pod_uid("default", "p1") == "eb82f94a-c021-5753-bc94-9a93ed6d9be8"


def test_explicit_uid_wins() -> None:
    assert pods_from_documents([pod("p", uid="u-1")])[0].uid == "u-1"


def test_uid_without_name_is_enough() -> None:
    doc = {"kind": "Pod", "metadata": {"uid": "u-2"}, "spec": {"containers": [ctr()]}}
    only = pods_from_documents([doc])[0]
    assert (only.uid, only.display_name) == ("u-2", "u-2")


# --- quantities and defaulting ---------------------------------------------------------

QUANTITIES = [
    pytest.param("2", Fraction(2), id="string-int"),
    pytest.param(2, Fraction(2), id="yaml-int"),
    pytest.param("1500m", Fraction(3, 2), id="milli"),
    pytest.param("2.5", Fraction(5, 2), id="decimal-string"),
    pytest.param(2.5, Fraction(5, 2), id="yaml-float"),
    pytest.param("0", Fraction(0), id="zero"),
    pytest.param("1e3", Fraction(1000), id="exponent"),
]


@pytest.mark.parametrize(("raw", "expected"), QUANTITIES)
def test_cpu_quantity_forms(raw: object, expected: Fraction) -> None:
    only = pods_from_documents([pod("p", ctr(limits={"cpu": raw}))])[0]
    assert only.containers[0].limits["cpu"] == expected


def test_requests_default_to_limits_per_resource() -> None:
    c = ctr(limits={"cpu": "2", "memory": "1Gi"}, requests={"memory": "512Mi"})
    only = pods_from_documents([pod("p", c)])[0].containers[0]
    assert dict(only.requests) == {"cpu": Fraction(2), "memory": Fraction(512 * 2**20)}


def test_requests_only_are_not_copied_to_limits() -> None:
    only = pods_from_documents([pod("p", ctr(requests={"cpu": "1"}))])[0].containers[0]
    assert (dict(only.requests), dict(only.limits)) == ({"cpu": Fraction(1)}, {})


def test_extended_resources_are_kept() -> None:
    limits = {**G, "nvidia.com/gpu": 2, "hugepages-2Mi": "4Mi", "example.com/nic": "1"}
    only = pods_from_documents([pod("p", ctr(limits=limits))])[0].containers[0]
    assert only.requests["nvidia.com/gpu"] == 2
    assert only.limits["hugepages-2Mi"] == 4 * 2**20
    assert only.requests["example.com/nic"] == 1


# --- QoS and exclusive CPUs (through manifests) ----------------------------------------

QOS = [
    pytest.param([ctr(limits=G)], QoSClass.GUARANTEED, 2, id="limits-only-guaranteed"),
    pytest.param([ctr(limits=G, requests=G)], QoSClass.GUARANTEED, 2, id="equal"),
    pytest.param(
        [ctr(limits={"cpu": "1500m", "memory": "1Gi"})], QoSClass.GUARANTEED, 0, id="fractional"
    ),
    pytest.param([ctr(limits={"cpu": "2"})], QoSClass.BURSTABLE, 0, id="no-memory-limit"),
    pytest.param(
        [ctr(limits=G, requests={"cpu": "1"})], QoSClass.BURSTABLE, 0, id="request-below-limit"
    ),
    pytest.param([ctr()], QoSClass.BEST_EFFORT, 0, id="no-resources"),
    pytest.param([ctr(limits={"nvidia.com/gpu": 1})], QoSClass.BEST_EFFORT, 0, id="only-extended"),
    pytest.param(
        [ctr("a", limits=G), ctr("b", limits={"cpu": "1"})],
        QoSClass.BURSTABLE,
        0,
        id="one-container-not-guaranteed",
    ),
    pytest.param(
        [ctr(limits={"cpu": "0", "memory": "0"})], QoSClass.BEST_EFFORT, 0, id="zero-is-unset"
    ),
]


@pytest.mark.parametrize(("containers", "qos", "cpus"), QOS)
def test_qos_and_exclusive_cpus(containers: list[dict], qos: QoSClass, cpus: int) -> None:
    only = pods_from_documents([pod("p", *containers)])[0]
    assert qos_class(only) is qos
    assert guaranteed_cpus(only, only.containers[0]) == cpus


def test_init_container_makes_pod_burstable() -> None:
    only = pods_from_documents([pod("p", ctr(limits=G), init=(ctr("i", limits={"cpu": "1"}),))])
    assert qos_class(only[0]) is QoSClass.BURSTABLE


# --- init containers and sidecars ------------------------------------------------------


def test_init_and_sidecar_kinds_in_order() -> None:
    inits = (ctr("setup", limits=G), ctr("proxy", limits=G, restartPolicy="Always"))
    only = pods_from_documents([pod("p", ctr("app", limits=G), init=inits)])[0]
    assert [(c.name, c.kind) for c in only.all_containers()] == [
        ("setup", ContainerKind.INIT),
        ("proxy", ContainerKind.SIDECAR),
        ("app", ContainerKind.APP),
    ]


def test_pod_guaranteed_cpus_counts_sidecars_throughout() -> None:
    four = {"cpu": "4", "memory": "1Gi"}
    one = {"cpu": "1", "memory": "1Gi"}
    inits = (ctr("side", limits=one, restartPolicy="Always"), ctr("init", limits=four))
    only = pods_from_documents([pod("p", ctr("app", limits=G), init=inits)])[0]
    assert pod_guaranteed_cpus(only) == 5  # max(1 + 4, 2 + 1)


def test_app_container_restart_policy_is_ignored() -> None:
    only = pods_from_documents([pod("p", ctr(restartPolicy="Never"))])[0]
    assert only.containers[0].kind is ContainerKind.APP


# --- malformed manifests: every field names its path -------------------------------------


def broken(mutate: Any) -> dict:
    doc = copy.deepcopy(pod("p", ctr("a", limits=dict(G)), ctr("b", limits=dict(G))))
    mutate(doc)
    return doc


def _set(path: str, value: object) -> Any:
    def apply(doc: dict) -> None:
        node: Any = doc
        keys = path.split(".")
        for key in keys[:-1]:
            node = node[int(key)] if key.isdigit() else node[key]
        last = keys[-1]
        if value is _DELETE:
            del node[last]
        elif last.isdigit():
            node[int(last)] = value
        else:
            node[last] = value

    return apply


_DELETE = object()

MALFORMED = [
    (
        _set("spec.containers.1.resources.limits.cpu", "abc"),
        "spec.containers[1].resources.limits.cpu: 'abc' is not a quantity",
    ),
    (
        _set("spec.containers.0.resources.requests", {"cpu": "1x"}),
        "spec.containers[0].resources.requests.cpu: '1x' is not a quantity",
    ),
    (
        _set("spec.containers.0.resources.limits.memory", {"Gi": 1}),
        "spec.containers[0].resources.limits.memory: expected a quantity",
    ),
    (
        _set("spec.containers.0.resources.limits.cpu", True),
        "spec.containers[0].resources.limits.cpu: expected a quantity",
    ),
    (
        _set("spec.containers.0.resources.limits.cpu", [1]),
        "spec.containers[0].resources.limits.cpu: expected a quantity",
    ),
    (
        _set("spec.containers.0.resources.limits.cpu", "-1"),
        "spec.containers[0].resources.limits.cpu: '-1' is negative",
    ),
    (
        _set("spec.containers.0.resources.requests", {"cpu": "3"}),
        "spec.containers[0].resources.requests.cpu: 3 must be less than or equal to the cpu "
        "limit 2",
    ),
    (
        _set("spec.containers.0.resources.limits", ["cpu"]),
        "spec.containers[0].resources.limits: expected a mapping, got a list",
    ),
    (
        _set("spec.containers.0.resources", "big"),
        "spec.containers[0].resources: expected a mapping, got a string",
    ),
    (
        _set("spec.containers.0.resources.limits", {"bad name!": 1}),
        "spec.containers[0].resources.limits: 'bad name!' is not a valid resource name",
    ),
    (_set("spec.containers.0.name", _DELETE), "spec.containers[0].name: every container needs"),
    (_set("spec.containers.0.name", 7), "spec.containers[0].name: expected a string, got int 7"),
    (_set("spec.containers.0.name", "Bad_Name"), "spec.containers[0].name: 'Bad_Name' is not"),
    (_set("spec.containers.1.name", "a"), "spec.containers[1].name: 'a' is also the name of"),
    (_set("spec.containers", []), "spec.containers: a Pod needs at least one container"),
    (_set("spec.containers", _DELETE), "spec.containers: a Pod needs at least one container"),
    (_set("spec.containers", {"a": 1}), "spec.containers: expected a list of containers"),
    (_set("spec.containers.0", "nginx"), "spec.containers[0]: expected a mapping, got a string"),
    (_set("spec", None), "spec: expected a mapping, got nothing (null)"),
    (
        _set("spec.initContainers", [ctr("i", restartPolicy="OnFailure")]),
        "spec.initContainers[0].restartPolicy: 'OnFailure' is not supported",
    ),
    (
        _set("spec.initContainers", [ctr("a")]),
        "spec.containers[0].name: 'a' is also the name of spec.initContainers[0]",
    ),
    (_set("metadata.name", _DELETE), "metadata.name: a Pod needs metadata.name"),
    (_set("metadata.name", "Web_1"), "metadata.name: 'Web_1' is not a valid name"),
    (_set("metadata.namespace", 3), "metadata.namespace: expected a string, got int 3"),
    (_set("metadata.uid", 42), "metadata.uid: expected a string, got int 42"),
    (_set("metadata", []), "metadata: expected a mapping, got a list"),
    (_set("kind", "Deployment"), "kind: 'Deployment' is not a Pod"),
]


@pytest.mark.parametrize(("mutate", "message"), MALFORMED, ids=[m for _, m in MALFORMED])
def test_malformed_field_is_named(mutate: Any, message: str) -> None:
    with pytest.raises(WorkloadError) as caught:
        pods_from_documents([broken(mutate)])
    assert caught.value.message.startswith(message), caught.value.message
    assert "\n" not in caught.value.message
    assert isinstance(caught.value, InputError)


DOCUMENT_ERRORS = [
    ([["a"]], "document: expected a mapping, got a list"),
    ([pod("a"), "text"], "document 2: expected a mapping, got a string ('text')"),
    ([{"kind": "List", "items": {"a": 1}}], "items: expected a list of Pods, got a mapping"),
    ([{"kind": "List", "items": [1]}], "items[0]: expected a mapping, got int 1"),
    ([{"kind": "List", "items": [{"kind": "Service"}]}], "items[0].kind: 'Service' is not a Pod"),
    ([{1: "x"}], "document: keys must be strings, got 1"),
    ([{"kind": None}], "kind: None is not a Pod"),
    (
        [pod("a"), {"kind": "List", "items": [pod("b", ctr(limits={"cpu": "z"}))]}],
        "document 2: items[0].spec.containers[0].resources.limits.cpu: 'z' is not a quantity",
    ),
    ([pod("a", uid="u"), pod("b", uid="u")], "pods default/a and default/b have the same uid"),
    ([pod("a"), pod("a")], "pods default/a and default/a have the same uid"),
]


@pytest.mark.parametrize(("docs", "message"), DOCUMENT_ERRORS, ids=[m for _, m in DOCUMENT_ERRORS])
def test_document_level_errors(docs: list[object], message: str) -> None:
    with pytest.raises(WorkloadError) as caught:
        pods_from_documents(docs)
    assert caught.value.message.startswith(message), caught.value.message


def test_overhead_is_parsed_and_checked() -> None:
    body = pod("kata", ctr(limits=G))
    body["spec"]["overhead"] = {"cpu": "250m", "memory": "120Mi"}
    parsed = pod_from_manifest(body)
    assert parsed.overhead == {"cpu": Fraction(1, 4), "memory": Fraction(120 * 2**20)}
    assert pod_from_manifest(pod("plain", ctr(limits=G))).overhead == {}
    body["spec"]["overhead"] = {"cpu": "lots"}
    with pytest.raises(WorkloadError, match=r"spec\.overhead\.cpu"):
        pod_from_manifest(body)
