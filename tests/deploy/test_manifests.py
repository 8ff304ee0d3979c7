"""deploy/: every manifest parses and validates offline against the API's schemas (the
kubernetes client's models: every key known, types right, required fields present), and
the containers' commands are ones our CLI accepts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import kubernetes.client as k8s
import pytest
import yaml

from cpumanager.cli.group import cli
from tests.deploy.scheduler_rules import validate

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
KINDS = {
    ("v1", "Namespace"): "V1Namespace",
    ("v1", "ServiceAccount"): "V1ServiceAccount",
    ("v1", "Service"): "V1Service",
    ("v1", "ConfigMap"): "V1ConfigMap",
    ("policy/v1", "PodDisruptionBudget"): "V1PodDisruptionBudget",
    ("networking.k8s.io/v1", "NetworkPolicy"): "V1NetworkPolicy",
    ("rbac.authorization.k8s.io/v1", "Role"): "V1Role",
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): "V1RoleBinding",
    ("apps/v1", "DaemonSet"): "V1DaemonSet",
    ("apps/v1", "Deployment"): "V1Deployment",
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): "V1ClusterRole",
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): "V1ClusterRoleBinding",
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"): "V1CustomResourceDefinition",
}
PRIMITIVES = {"str": str, "int": int, "bool": bool, "float": (int, float)}


def documents() -> list[tuple[str, dict[str, Any]]]:
    found = []
    for path in sorted(DEPLOY.glob("*.yaml")):
        found.extend((path.name, doc) for doc in yaml.safe_load_all(path.read_text()) if doc)
    return found


def check(value: Any, type_name: str, where: str) -> None:
    """``value`` against the client's model ``type_name``; AssertionError names the path."""
    if type_name.lower().startswith("list["):
        assert isinstance(value, list), f"{where}: expected a list"
        for index, item in enumerate(value):
            check(item, type_name[5:-1], f"{where}[{index}]")
        return
    if type_name.lower().startswith(("dict(", "dict[")):
        assert isinstance(value, dict), f"{where}: expected a mapping"
        inner = type_name[type_name.index(",") + 1 : -1].strip()
        for key, item in value.items():
            check(item, inner, f"{where}.{key}")
        return
    if type_name in PRIMITIVES:
        assert isinstance(value, PRIMITIVES[type_name]), f"{where}: expected {type_name}"
        return
    if type_name in ("object", "datetime", "date"):  # IntOrString, times: free-form
        return
    model = getattr(k8s, type_name)
    assert isinstance(value, dict), f"{where}: expected a {type_name} object"
    by_key = {key: attr for attr, key in model.attribute_map.items()}
    for key, item in value.items():
        assert key in by_key, f"{where}: {key!r} is not a field of {type_name}"
        check(item, model.openapi_types[by_key[key]], f"{where}.{key}")


def build(value: Any, type_name: str) -> Any:
    """Construct the model (its setters refuse missing required fields)."""
    return k8s.ApiClient()._ApiClient__deserialize(value, type_name)


@pytest.mark.parametrize(
    ("name", "doc"), documents(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_manifest_validates(name: str, doc: dict[str, Any]) -> None:
    if doc["kind"] == "KubeSchedulerConfiguration":
        assert validate(doc) == [], name  # the scheduler's rules (test_scheduler_config.py)
        return
    type_name = KINDS[(doc["apiVersion"], doc["kind"])]
    check(doc, type_name, f"{name}:{doc['kind']}")
    assert build(doc, type_name) is not None


def test_the_checker_catches_unknown_fields_and_bad_types() -> None:
    with pytest.raises(AssertionError, match="not a field"):
        check({"metadata": {"nmae": "x"}}, "V1Namespace", "t")
    with pytest.raises(AssertionError, match="expected int"):
        check({"spec": {"replicas": "1"}}, "V1Deployment", "t")
    with pytest.raises(ValueError, match="selector"):
        build({"spec": {"template": {}}}, "V1DaemonSet")


def containers() -> list[tuple[str, list[str]]]:
    """Every container and init container of ours in deploy/: its command and args, as
    the runtime joins them (the image has no entrypoint)."""
    found = []
    for name, doc in documents():
        if doc["kind"] in ("DaemonSet", "Deployment", "StatefulSet", "Job"):
            spec = doc["spec"]["template"]["spec"]
            found.extend(
                (name, [*c.get("command", ()), *c.get("args", ())])
                for c in [*spec.get("initContainers", ()), *spec["containers"]]
                if "/cpumanager:" in c["image"]
            )
    return found


def test_every_command_of_ours_in_deploy_is_checked() -> None:
    names = {name for name, _ in containers()}
    assert {"agent-daemonset.yaml", "extender.yaml", "nrt-daemonset.yaml"} <= names


@pytest.mark.parametrize(("name", "command"), containers())
def test_container_commands_are_accepted_by_our_cli(name: str, command: list[str]) -> None:
    assert command[0] == "cpumanager"
    args = list(command[1:])
    current: click.Command = cli
    ctx = click.Context(cli, info_name="cpumanager")
    while isinstance(current, click.Group):
        sub = args.pop(0)
        found = current.get_command(ctx, sub)
        assert found is not None, f"{name}: no command {sub}"
        current = found
        ctx = click.Context(current, info_name=sub, parent=ctx)
    current.make_context(current.name or "", args)  # raises UsageError on a bad option


def test_daemonset_mounts_the_host_read_only() -> None:
    for doc in [d for _, d in documents() if d["kind"] == "DaemonSet"]:
        _mounts_read_only(doc["spec"]["template"]["spec"])


def _mounts_read_only(spec: dict[str, Any]) -> None:
    host_volumes = {v["name"] for v in spec["volumes"] if "hostPath" in v}
    for container in spec["containers"]:
        for mount in container["volumeMounts"]:
            if mount["name"] in host_volumes:
                assert mount.get("readOnly") is True, mount["name"]
        assert container["resources"]["requests"]
