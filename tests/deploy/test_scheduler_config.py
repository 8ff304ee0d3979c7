"""The scheduler's rules (scheduler_rules.py): one test per rule, each a configuration the
rule refuses and its nearest accepted neighbour; then every KubeSchedulerConfiguration this
project ships (deploy/, ConfigMaps in deploy/, docs/) is accepted."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.deploy.scheduler_rules import (
    RULES,
    defaulted,
    is_extended_resource_name,
    parse_duration,
    qualified_name_problems,
    validate,
)

ROOT = Path(__file__).resolve().parents[2]
BASE: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "default-scheduler"}],
    "extenders": [
        {
            "urlPrefix": "https://extender:8443",
            "filterVerb": "filter",
            "prioritizeVerb": "prioritize",
            "weight": 1,
        }
    ],
}


def changed(**fields: Any) -> dict[str, Any]:
    doc = copy.deepcopy(BASE)
    doc.update(fields)
    return doc


def extender(**fields: Any) -> dict[str, Any]:
    doc = copy.deepcopy(BASE)
    doc["extenders"][0].update(fields)
    return doc


def refused(doc: dict[str, Any], pattern: str) -> None:
    problems = validate(doc)
    assert any(re.search(pattern, p) for p in problems), problems


def test_the_base_is_accepted_and_defaulted() -> None:
    assert validate(BASE) == []
    cfg = defaulted(BASE)
    assert cfg["parallelism"] == 16
    assert cfg["leaderElection"]["resourceLock"] == "leases"
    assert cfg["leaderElection"]["leaseDuration"] == 15.0
    assert cfg["clientConnection"] == {"qps": 50.0, "burst": 100}
    assert (cfg["podInitialBackoffSeconds"], cfg["podMaxBackoffSeconds"]) == (1, 10)
    assert defaulted(changed(profiles=[]))["profiles"] == [{"schedulerName": "default-scheduler"}]


def test_every_rule_is_tested_here() -> None:
    names = {rule.__name__ for rule in RULES}
    tested = {name[len("test_rule_") :] for name in globals() if name.startswith("test_rule_")}
    assert names == tested


def test_strict_decoding_refuses_unknown_fields_and_wrong_types() -> None:
    refused(extender(managedResource=[]), "unknown field 'managedResource'")
    refused(changed(parallelism="16"), "parallelism: expected an integer")
    refused(extender(httpTimeout="5 seconds"), "not a duration")
    refused(changed(profiles=[{"schedulerName": "a", "plugins": {"sort": {}}}]), "unknown field")
    assert validate(extender(httpTimeout="1m30s")) == []


def test_rule_burst_not_negative() -> None:
    refused(changed(clientConnection={"burst": -1}), r"clientConnection\.burst")
    assert validate(changed(clientConnection={"burst": 0})) == []  # 0 is defaulted to 100


def test_rule_leader_election_timings() -> None:
    refused(
        changed(leaderElection={"leaseDuration": "10s", "renewDeadline": "10s"}),
        "LeaseDuration must be greater than RenewDeadline",
    )
    refused(changed(leaderElection={"retryPeriod": "-1s"}), "retryPeriod: must be greater")
    assert validate(changed(leaderElection={"leaderElect": False, "retryPeriod": "-1s"})) == []


def test_rule_leader_election_uses_leases() -> None:
    refused(changed(leaderElection={"resourceLock": "endpoints"}), 'must be "leases"')
    assert validate(changed(leaderElection={"leaderElect": False, "resourceLock": "x"})) == []


def test_rule_parallelism_positive() -> None:
    refused(changed(parallelism=0), "parallelism")
    assert validate(changed(parallelism=1)) == []


def test_rule_profiles_named_and_unique() -> None:
    refused(changed(profiles=[{"schedulerName": "a"}, {}]), r"profiles\[1\].schedulerName: Req")
    refused(changed(profiles=[{"schedulerName": "a"}, {"schedulerName": "a"}]), "Duplicate")
    assert validate(changed(profiles=[{"schedulerName": "a"}, {"schedulerName": "b"}])) == []


def test_rule_percentage_in_range() -> None:
    refused(changed(percentageOfNodesToScore=101), r"^percentageOfNodesToScore")
    refused(
        changed(profiles=[{"schedulerName": "a", "percentageOfNodesToScore": -1}]),
        r"profiles\[0\]\.percentageOfNodesToScore",
    )
    assert validate(changed(percentageOfNodesToScore=100)) == []


def test_rule_no_removed_plugins() -> None:
    plugins = {"filter": {"enabled": [{"name": "EBSLimits"}]}}
    refused(changed(profiles=[{"schedulerName": "a", "plugins": plugins}]), "invalid in v1")
    refused(
        changed(profiles=[{"schedulerName": "a", "pluginConfig": [{"name": "GCEPDLimits"}]}]),
        r"pluginConfig\[0\]: was invalid",
    )
    plugins = {"filter": {"enabled": [{"name": "NodeResourcesFit"}]}}
    assert validate(changed(profiles=[{"schedulerName": "a", "plugins": plugins}])) == []


def test_rule_plugin_config_unique() -> None:
    twice = [{"name": "NodeAffinity", "args": {}}, {"name": "NodeAffinity", "args": {}}]
    refused(changed(profiles=[{"schedulerName": "a", "pluginConfig": twice}]), "Duplicate")
    assert validate(changed(profiles=[{"schedulerName": "a", "pluginConfig": twice[:1]}])) == []


def test_rule_one_common_queue_sort() -> None:
    two = {"queueSort": {"enabled": [{"name": "PrioritySort"}, {"name": "Other"}]}}
    refused(changed(profiles=[{"schedulerName": "a", "plugins": two}]), "only one queue sort")
    one = {"queueSort": {"enabled": [{"name": "PrioritySort"}]}}
    profiles = [{"schedulerName": "a", "plugins": one}, {"schedulerName": "b"}]
    refused(changed(profiles=profiles), "must be the same for all profiles")
    profiles[1]["plugins"] = one
    assert validate(changed(profiles=profiles)) == []


def test_rule_backoff_order() -> None:
    refused(changed(podInitialBackoffSeconds=0), "podInitialBackoffSeconds")
    refused(changed(podInitialBackoffSeconds=20), "podMaxBackoffSeconds")  # max defaults to 10
    assert validate(changed(podInitialBackoffSeconds=10)) == []


def test_rule_prioritizing_extender_weighted() -> None:
    refused(extender(weight=0), "positive weight")
    assert validate(extender(weight=0, prioritizeVerb="")) == []


def test_rule_managed_resources_extended() -> None:
    # The file deploy/ shipped before: kube-scheduler's own refusal.
    refused(
        extender(managedResources=[{"name": "cpu", "ignoredByScheduler": False}]),
        r"managedResources\[0\]\.name: Invalid value: 'cpu': is an invalid extended resource",
    )
    refused(extender(managedResources=[{"name": "kubernetes.io/x"}]), "invalid extended")
    refused(extender(managedResources=[{"name": "requests.example.com/x"}]), "invalid extended")
    refused(extender(managedResources=[{"name": "Example.com/x"}]), "prefix part")
    refused(
        extender(managedResources=[{"name": "example.com/x"}, {"name": "example.com/x"}]),
        "duplicate extender managed resource",
    )
    assert validate(extender(managedResources=[{"name": "example.com/gpu"}])) == []


def test_rule_one_binder() -> None:
    two = copy.deepcopy(BASE)
    two["extenders"] = [dict(BASE["extenders"][0], bindVerb="bind") for _ in range(2)]
    refused(two, "found 2 extenders implementing bind")
    two["extenders"][1].pop("bindVerb")
    assert validate(two) == []


def test_names_and_durations_follow_apimachinery() -> None:
    assert qualified_name_problems("example.com/" + "a" * 63) == []
    assert qualified_name_problems("a" * 64)
    assert qualified_name_problems("a/b/c")
    assert qualified_name_problems("-a")
    assert is_extended_resource_name("example.com/foo")
    assert not is_extended_resource_name("memory")
    assert not is_extended_resource_name("hugepages-2Mi")
    assert parse_duration("1h2m3.5s") == 3723.5
    assert parse_duration("0") == 0.0
    assert parse_duration("5") is None
    assert parse_duration("") is None


def shipped() -> list[tuple[str, dict[str, Any]]]:
    """Every KubeSchedulerConfiguration in deploy/ (files and ConfigMap values) and in the
    docs' yaml blocks."""
    found: list[tuple[str, dict[str, Any]]] = []

    def take(where: str, doc: Any) -> None:
        if not isinstance(doc, dict):
            return
        if doc.get("kind") == "KubeSchedulerConfiguration":
            found.append((where, doc))
        elif doc.get("kind") == "ConfigMap":
            for key, text in (doc.get("data") or {}).items():
                for inner in yaml.safe_load_all(text):
                    take(f"{where}:{key}", inner)

    for path in sorted((ROOT / "deploy").glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            take(f"deploy/{path.name}", doc)
    for path in sorted((ROOT / "docs").glob("*.md")):
        blocks = re.findall(r"```yaml\n(.*?)```", path.read_text(), re.DOTALL)
        for index, block in enumerate(blocks):
            for doc in yaml.safe_load_all(block):
                take(f"docs/{path.name}#{index}", doc)
    return found


def test_deploy_ships_both_scheduler_configurations() -> None:
    places = {where for where, _ in shipped()}
    assert "deploy/scheduler-config.yaml" in places
    assert "deploy/scheduler-second.yaml:config.yaml" in places


@pytest.mark.parametrize(("where", "doc"), shipped(), ids=lambda v: v if isinstance(v, str) else "")
def test_shipped_configurations_are_accepted(where: str, doc: dict[str, Any]) -> None:
    assert validate(doc) == [], where
    for item in doc.get("extenders") or []:
        # Our extender's verbs and the project's choices (docs/extender.md).
        assert item["filterVerb"] == "filter"
        assert item["prioritizeVerb"] == "prioritize"
        assert item.get("bindVerb") == "bind"
        assert item.get("nodeCacheCapable") is True
        assert item.get("enableHTTPS") is True
        assert "managedResources" not in item
