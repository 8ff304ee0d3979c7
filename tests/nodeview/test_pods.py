"""Reducing a node's pod list to what admission reads."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from cpumanager.core.ids import ContainerID
from cpumanager.core.workload import ContainerKind, QoSClass, qos_class
from cpumanager.errors import WorkloadError
from cpumanager.nodeview.pods import MAX_PODS, reduce_pod_list, running_containers

NODES = Path(__file__).resolve().parent.parent / "data" / "nodes"


def _kubeadm_list() -> dict:
    return json.loads((NODES / "kubeadm" / "pods.json").read_text())


def _pod(name: str, node: str = "n1", **spec: object) -> dict:
    containers = spec.pop("containers", [{"name": "c"}])
    return {
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {"nodeName": node, "containers": containers, **spec},
        "status": {"phase": "Running"},
    }


def test_secrets_env_and_foreign_annotations_are_dropped() -> None:
    _node, pods = reduce_pod_list(_kubeadm_list(), node_name=None)
    text = json.dumps([p.manifest for p in pods])
    for leaked in (
        "hunter2",
        "secretKeyRef",
        "DB_PASSWORD",
        "last-applied",
        "volumeMounts",
        "db-credentials",
        "managedFields",
        "prometheus.io",
        "hostIP",
        "image",
    ):
        assert leaked not in text, leaked


def test_what_admission_reads_is_kept() -> None:
    node, pods = reduce_pod_list(_kubeadm_list(), node_name=None)
    assert node == "kubeadm-node-1"
    by_name = {p.pod.name: p for p in pods}
    cache = by_name["cache-0"].pod
    assert [c.name for c in cache.containers] == ["redis", "exporter"]
    assert cache.containers[0].requests["cpu"] == 2
    assert qos_class(cache) is QoSClass.GUARANTEED
    assert by_name["report-28911"].terminal
    assert not by_name["db-0"].terminal


def test_mirror_pod_is_keyed_by_its_config_hash() -> None:
    # The kubelet's uid for a static pod is its config hash; the API server's mirror pod has
    # its own uid and carries the hash in kubernetes.io/config.mirror.
    _node, pods = reduce_pod_list(_kubeadm_list(), node_name=None)
    apiserver = next(p for p in pods if p.pod.name.startswith("kube-apiserver"))
    assert apiserver.pod.uid == "5f0e8a1c4b3d2e6f7a8b9c0d1e2f3a4b"
    assert apiserver.manifest["metadata"]["annotations"]["kubernetes.io/config.mirror"]


def test_container_ids_drop_the_runtime_prefix_and_list_the_previous_instance_first() -> None:
    doc = {"kind": "PodList", "items": [_pod("a")]}  # the kubelet's /pods is a PodList
    doc["items"][0]["status"]["containerStatuses"] = [
        {
            "name": "c",
            "containerID": "containerd://new",
            "lastState": {"terminated": {"containerID": "containerd://old"}},
            "state": {"running": {}},
        }
    ]
    _node, pods = reduce_pod_list(doc, node_name="n1")
    assert running_containers(pods) == [
        (ContainerID("old"), "uid-a", "c"),
        (ContainerID("new"), "uid-a", "c"),
    ]
    assert pods[0].statuses[0].state == "running"


def test_sidecar_and_pod_level_resources_survive() -> None:
    item = _pod(
        "p",
        initContainers=[{"name": "proxy", "restartPolicy": "Always", "env": [{"name": "X"}]}],
        resources={"limits": {"cpu": "2", "memory": "1Gi"}},
    )
    _node, pods = reduce_pod_list({"kind": "List", "items": [item]}, node_name="n1")
    pod = pods[0].pod
    assert pod.init_containers[0].kind is ContainerKind.SIDECAR
    assert pod.limits["cpu"] == 2
    assert "env" not in json.dumps(pods[0].manifest)


@pytest.mark.parametrize(
    ("doc", "node", "expected"),
    [
        ({"kind": "List", "items": [_pod("a", "n2")]}, "n1", "runs on 'n2', not on 'n1'"),
        ({"kind": "List", "items": [_pod("a"), _pod("b", "n2")]}, None, "several nodes"),
        ({"kind": "Pod"}, None, "is not a List or PodList"),
        ({"kind": "List", "items": [{"kind": "Service"}]}, None, "'Service' is not a Pod"),
        ({"kind": "List", "items": {}}, None, "expected a list"),
        (
            {
                "kind": "List",
                "items": [
                    _pod(
                        "a",
                        containers=[{"name": "c", "resources": {"limits": {"cpu": "1e100000"}}}],
                    )
                ],
            },
            None,
            "cpu",
        ),
        (
            {
                "kind": "List",
                "items": [
                    _pod("a", containers=[{"name": "c", "resources": {"limits": {"cpu": "lots"}}}])
                ],
            },
            None,
            "is not a quantity",
        ),
    ],
    ids=[
        "other-node",
        "several-nodes",
        "not-a-list",
        "not-a-pod",
        "items-object",
        "absurd-quantity",
        "bad-quantity",
    ],
)
def test_bad_pod_lists_are_one_line_errors(doc: dict, node: str | None, expected: str) -> None:
    with pytest.raises(WorkloadError) as caught:
        reduce_pod_list(doc, node_name=node)
    assert expected in caught.value.message
    assert "\n" not in caught.value.message
    assert caught.value.message.startswith("pod list: ")


def test_pod_count_is_bounded() -> None:
    doc = {"kind": "List", "items": [{}] * (MAX_PODS + 1)}
    with pytest.raises(WorkloadError, match="more than"):
        reduce_pod_list(doc, node_name=None)


def test_overhead_survives_the_reduction() -> None:
    raw = _pod("kata", overhead={"cpu": "250m", "memory": "120Mi"}, runtimeClassName="kata")
    _node, pods = reduce_pod_list({"kind": "PodList", "items": [raw]}, node_name=None)
    assert pods[0].pod.overhead == {"cpu": Fraction(1, 4), "memory": 120 * 2**20}
