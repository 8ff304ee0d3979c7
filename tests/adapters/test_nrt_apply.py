"""adapters/nrt_apply: the node's NodeResourceTopology kept on a (fake) API server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cpumanager.adapters.nrt_apply import NRTWriter, list_node_pods, pci_numa_nodes
from cpumanager.errors import HostError
from tests.adapters.nrt_fakes import ApiError, FakeObjects


def _document(available: str = "8", name: str = "node-a") -> dict[str, Any]:
    return {
        "apiVersion": "topology.node.k8s.io/v1alpha2",
        "kind": "NodeResourceTopology",
        "metadata": {"name": name},
        "attributes": [{"name": "topologyManagerPolicy", "value": "single-numa-node"}],
        "zones": [
            {
                "name": "node-0",
                "type": "Node",
                "resources": [
                    {"name": "cpu", "capacity": "8", "allocatable": "8", "available": available}
                ],
            }
        ],
    }


def test_created_then_unchanged_then_updated_with_the_field_manager() -> None:
    api = FakeObjects()
    writer = NRTWriter(api)
    assert writer.write(_document()) == "created"
    assert writer.write(_document()) == "unchanged"
    assert writer.write(_document("6")) == "updated"
    assert [c for c in api.calls if c[0] != "get"] == [
        ("create", "node-a", "cpumanager-nrt"),
        ("replace", "node-a", "cpumanager-nrt"),
    ]
    stored = api.objects["node-a"]
    assert stored["zones"][0]["resources"][0]["available"] == "6"
    assert stored["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "cpumanager"}


def test_unchanged_content_costs_no_call_until_the_recheck() -> None:
    api = FakeObjects()
    writer = NRTWriter(api, recheck=3)
    writer.write(_document())
    calls = len(api.calls)
    assert writer.write(_document()) == "unchanged"
    assert writer.write(_document()) == "unchanged"
    assert len(api.calls) == calls
    del api.objects["node-a"]  # someone deleted it: the recheck finds out
    assert writer.write(_document()) == "created"


def test_an_equal_object_already_there_is_not_rewritten() -> None:
    api = FakeObjects()
    NRTWriter(api).write(_document())
    again = NRTWriter(api)  # a restarted agent
    assert again.write(_document()) == "unchanged"
    assert [c[0] for c in api.calls].count("replace") == 0


def test_others_labels_and_annotations_are_kept() -> None:
    api = FakeObjects()
    NRTWriter(api).write(_document())
    api.objects["node-a"]["metadata"]["labels"]["team"] = "infra"
    api.objects["node-a"]["metadata"]["annotations"] = {"note": "x"}
    NRTWriter(api).write(_document("2"))
    metadata = api.objects["node-a"]["metadata"]
    assert metadata["labels"]["team"] == "infra"
    assert metadata["annotations"] == {"note": "x"}


def test_a_conflict_is_one_line_and_the_next_round_rereads() -> None:
    api = FakeObjects()
    writer = NRTWriter(api)
    writer.write(_document())
    api.objects["node-a"]["metadata"]["resourceVersion"] = "99"  # another writer
    api.objects["node-a"]["zones"] = []
    original = api.replace_cluster_custom_object

    def stale(*args: Any, **kwargs: Any) -> Any:
        args[4]["metadata"]["resourceVersion"] = "1"
        return original(*args, **kwargs)

    api.replace_cluster_custom_object = stale  # type: ignore[method-assign]
    with pytest.raises(HostError, match=r"cannot update NodeResourceTopology node-a: Conflict"):
        writer.write(_document("4"))
    api.replace_cluster_custom_object = original  # type: ignore[method-assign]
    assert writer.write(_document("4")) == "updated"


def test_api_failures_are_host_errors() -> None:
    api = FakeObjects()
    api.fail_next = ApiError(403, "Forbidden")
    with pytest.raises(HostError, match=r"cannot read .* Forbidden \(HTTP 403\)"):
        NRTWriter(api).write(_document())


def test_a_malformed_answer_is_a_host_error() -> None:
    api = FakeObjects()
    NRTWriter(api).write(_document())
    api.objects["node-a"]["metadata"] = ["not", "a", "mapping"]
    with pytest.raises(HostError, match="sent no object"):
        NRTWriter(api).write(_document("1"))


def test_pci_numa_nodes(tmp_path: Path) -> None:
    devices = tmp_path / "sys/bus/pci/devices"
    for address, node in (("0000:3b:02.0", "1"), ("0000:00:1f.0", "-1"), ("0000:5e:00.1", "0")):
        (devices / address).mkdir(parents=True)
        (devices / address / "numa_node").write_text(f"{node}\n")
    (devices / "not-pci").mkdir()
    assert pci_numa_nodes(tmp_path) == {"0000:3b:02.0": 1, "0000:5e:00.1": 0}
    assert pci_numa_nodes(tmp_path / "missing") == {}


class _Answer:
    def __init__(self, data: bytes) -> None:
        self.data = data


class _Core:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.selector = ""

    def list_pod_for_all_namespaces(self, **kwargs: Any) -> _Answer:
        self.selector = kwargs["field_selector"]
        self.kwargs = kwargs
        return _Answer(self.data)


def test_list_node_pods_writes_a_list(tmp_path: Path) -> None:
    core = _Core(json.dumps({"kind": "PodList", "items": [{"metadata": {"name": "a"}}]}).encode())
    dest = tmp_path / "pods.json"
    assert list_node_pods(core, "node-a", dest) == 1
    assert core.selector == "spec.nodeName=node-a"
    assert json.loads(dest.read_text())["kind"] == "List"
    with pytest.raises(HostError, match="not a JSON object"):
        list_node_pods(_Core(b"[1"), "node-a", dest)
    assert json.loads(dest.read_text())["items"]  # the last good list is kept


def test_every_call_is_bounded_and_the_pod_list_comes_from_the_cache(tmp_path: Path) -> None:
    """A hung API server ends a round (the next one retries) instead of stopping the agent;
    the per-round pod list is served from the watch cache, not read from etcd."""
    objects = FakeObjects()
    writer = NRTWriter(objects, timeout=7.0)
    writer.write(_document("8"))
    writer.write(_document("7"))
    assert [c[0] for c in objects.calls] == ["get", "create", "get", "replace"]
    assert objects.timeouts == [7.0] * 4
    core = _Core(json.dumps({"kind": "PodList", "items": []}).encode())
    list_node_pods(core, "node-a", tmp_path / "pods.json", timeout=3.0)
    assert core.kwargs["_request_timeout"] == 3.0
    assert core.kwargs["resource_version"] == "0"


def test_the_client_follows_no_redirect(tmp_path: Path) -> None:
    """The bearer token stays with the API server: a 3xx is an error, never followed."""
    from cpumanager.adapters.nrt_apply import api_clients
    from tests.adapters.test_kube_api import Recorder, kubeconfig, serve

    api, elsewhere = Recorder(), Recorder()
    server, url = serve(api)
    other, other_url = serve(elsewhere)
    try:
        target = f"{other_url}/api/v1/pods"
        api.answers["/api/v1/pods"] = (302, {"Location": target}, b"")
        _, core = api_clients(kubeconfig(tmp_path, url))
        with pytest.raises(HostError, match="cannot list the pods of node n1"):
            list_node_pods(core, "n1", tmp_path / "pods.json")
        assert elsewhere.requests == []
    finally:
        for one in (server, other):
            one.shutdown()
            one.server_close()
