"""The kubelet version of a Node object or of a pod list carrying Nodes."""

from __future__ import annotations

import pytest

from cpumanager.errors import InputError
from cpumanager.nodeview.node_info import (
    kubelet_version_of,
    version_among,
    version_in_pod_list,
)


def node(name: str, version: object = "v1.34.0") -> dict[str, object]:
    info = {} if version is None else {"nodeInfo": {"kubeletVersion": version}}
    return {"kind": "Node", "metadata": {"name": name}, "status": info}


def test_a_node_without_node_info_has_no_version() -> None:
    assert kubelet_version_of(node("a", None), node_name="a", where="f") is None
    assert kubelet_version_of(node("a"), node_name=None, where="f") == "v1.34.0"


def test_a_list_of_nodes_gives_the_named_one() -> None:
    doc = {"kind": "List", "items": [node("a", "v1.30.1"), node("b", "v1.31.0")]}
    assert kubelet_version_of(doc, node_name="b", where="f") == "v1.31.0"
    assert kubelet_version_of(doc, node_name="c", where="f") is None


@pytest.mark.parametrize("version", ["", "x" * 200, 7, "v2.0.0", "v1.10.0"])
def test_bad_versions_are_refused(version: object) -> None:
    with pytest.raises(InputError):
        kubelet_version_of(node("a", version), node_name="a", where="f")


def test_pod_list_nodes_are_split_off() -> None:
    doc = {"kind": "List", "items": [{"kind": "Pod"}, node("a")]}
    pods, nodes = version_in_pod_list(doc)
    assert pods == {"kind": "List", "items": [{"kind": "Pod"}]}
    assert version_among(nodes, "a", "f") == "v1.34.0"
    assert version_among(nodes, "b", "f") is None
    assert version_in_pod_list({"kind": "PodList", "items": []}) == (
        {"kind": "PodList", "items": []},
        [],
    )
