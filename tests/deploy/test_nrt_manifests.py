"""deploy/nrt-*.yaml: the CRD accepts what `node nrt` writes, the RBAC allows exactly what
the NRT-only agent calls, and the DaemonSet runs the maintaining mode."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from cpumanager.nodeanswers.nrt import node_resource_topology
from tests.nodeanswers.snapshots import fixture_snapshot
from tests.nodeview.fixture_nodes import NODES_DIR, fixture_answers

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def _docs(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((DEPLOY / name).read_text()) if d]


def _schema() -> dict[str, Any]:
    (crd,) = _docs("nrt-crd.yaml")
    (version,) = crd["spec"]["versions"]
    return version["schema"]["openAPIV3Schema"]  # type: ignore[no-any-return]


def validate(value: Any, schema: dict[str, Any], where: str = "$") -> list[str]:
    """The structural-schema checks the API server applies to these fields."""
    errors: list[str] = []
    if schema.get("x-kubernetes-int-or-string"):
        if not isinstance(value, (int, str)) or isinstance(value, bool):
            return [f"{where}: not an int or a string"]
        if isinstance(value, str) and not re.fullmatch(schema["pattern"], value):
            errors.append(f"{where}: {value!r} is not a quantity")
        return errors
    kind = schema.get("type")
    if kind == "object":
        if not isinstance(value, dict):
            return [f"{where}: not an object"]
        errors += [
            f"{where}: {key} missing" for key in schema.get("required", ()) if key not in value
        ]
        properties = schema.get("properties")
        for key, item in value.items():
            if properties is None:
                continue
            if key not in properties:
                errors.append(f"{where}: unknown field {key}")
            else:
                errors += validate(item, properties[key], f"{where}.{key}")
    elif kind == "array":
        if not isinstance(value, list):
            return [f"{where}: not an array"]
        for index, item in enumerate(value):
            errors += validate(item, schema["items"], f"{where}[{index}]")
    elif kind == "string" and not isinstance(value, str):
        errors.append(f"{where}: not a string")
    elif kind == "integer" and (not isinstance(value, int) or isinstance(value, bool)):
        errors.append(f"{where}: not an integer")
    return errors


def test_crd_names_the_api_the_plugin_reads() -> None:
    (crd,) = _docs("nrt-crd.yaml")
    spec = crd["spec"]
    assert crd["metadata"]["name"] == "noderesourcetopologies.topology.node.k8s.io"
    assert (spec["group"], spec["scope"], spec["names"]["kind"]) == (
        "topology.node.k8s.io", "Cluster", "NodeResourceTopology",
    )  # fmt: skip
    assert [(v["name"], v["served"], v["storage"]) for v in spec["versions"]] == [
        ("v1alpha2", True, True)
    ]


@pytest.mark.parametrize("name", ["kubeadm", "gpu", "memory-static", "offline-cpus"])
def test_fixture_objects_pass_the_crd_schema(name: str) -> None:
    snapshot = fixture_snapshot(name)
    if (NODES_DIR / name / "podresources.json").exists():
        snapshot = replace(snapshot, pod_resources=fixture_answers(NODES_DIR / name))
    document = node_resource_topology(snapshot)
    assert validate(document, _schema()) == []


def test_the_validator_catches_bad_objects() -> None:
    bad = {"zones": [{"name": "node-0", "type": "Node", "resources": [
        {"name": "cpu", "capacity": "eight", "allocatable": 8, "available": True},
    ]}], "extra": 1}  # fmt: skip
    errors = validate(bad, _schema())
    assert "$: unknown field extra" in errors
    assert any("'eight' is not a quantity" in e for e in errors)
    assert any("available: not an int" in e for e in errors)


def test_rbac_is_what_the_agent_calls() -> None:
    (role,) = [d for d in _docs("nrt-rbac.yaml") if d["kind"] == "ClusterRole"]
    rules = {(tuple(r["apiGroups"]), tuple(r["resources"])): set(r["verbs"]) for r in role["rules"]}
    assert rules == {
        (("topology.node.k8s.io",), ("noderesourcetopologies",)): {"get", "create", "update"},
        (("",), ("pods",)): {"list"},
    }


def test_daemonset_runs_the_maintaining_mode_with_the_node_name() -> None:
    (ds,) = _docs("nrt-daemonset.yaml")
    spec = ds["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    assert container["command"][:3] == ["cpumanager", "node", "nrt"]
    assert {"--live", "--apply", "--every", "--pods-from-apiserver"} <= set(container["command"])
    (env,) = container["env"]
    assert env["name"] == "NODE_NAME"
    assert env["valueFrom"]["fieldRef"]["fieldPath"] == "spec.nodeName"
    assert spec["serviceAccountName"] == "cpumanager-nrt"


def test_daemonsets_that_read_the_kubelets_files_run_as_their_owner() -> None:
    """The kubelet's checkpoints are 0600 root files and its PodResources socket is root's;
    the image runs as UID 65532 (deploy/Containerfile). A DaemonSet that mounts the
    kubelet's root dir runs as UID 0, with every capability dropped (root owns the files:
    none is needed), no privilege escalation and the runtime's seccomp profile; otherwise
    every checkpoint reads as unreadable."""
    from tests.deploy.test_manifests import documents

    readers = [
        doc
        for _, doc in documents()
        if doc["kind"] == "DaemonSet"
        and any(
            (v.get("hostPath") or {}).get("path") == "/var/lib/kubelet"
            for v in doc["spec"]["template"]["spec"].get("volumes", ())
        )
    ]
    assert {d["metadata"]["name"] for d in readers} >= {"cpumanager-agent", "cpumanager-nrt"}
    for ds in readers:
        spec = ds["spec"]["template"]["spec"]
        pod = spec.get("securityContext") or {}
        assert pod.get("seccompProfile", {}).get("type") == "RuntimeDefault", ds["metadata"]
        for container in spec["containers"]:
            security = {**pod, **(container.get("securityContext") or {})}
            assert security.get("runAsUser") == 0, ds["metadata"]["name"]
            assert security.get("allowPrivilegeEscalation") is False
            assert security.get("privileged", False) is False
            assert security["capabilities"]["drop"] == ["ALL"]
            assert "add" not in security["capabilities"]
