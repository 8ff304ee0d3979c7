"""The version table: every rule key, at the release before and at the one that changed it."""

from __future__ import annotations

import pytest

from cpumanager.core import versions
from cpumanager.errors import InputError


def test_parse_release() -> None:
    assert versions.parse_release("1.30") == (1, 30)
    assert versions.parse_release("v1.34.2-eks-1") == (1, 34)
    with pytest.raises(InputError, match="outside the releases"):
        versions.parse_release("1.17")
    with pytest.raises(InputError, match="not a version"):
        versions.parse_release("latest")


@pytest.mark.parametrize("rule", versions.RULES, ids=lambda r: f"{r.key}@{r.since[1]}")
def test_each_rule_takes_effect_at_its_release(rule: versions.Rule) -> None:
    """The folded profile shows the rule's value at ``since`` (gate on and off)."""
    for gate in (False, True):
        p = versions.profile(rule.since, {"PodLevelResourceManagers": gate})
        kind, _, name = rule.key.partition(".")
        if kind == "gate":
            level, default, *lock = rule.value  # type: ignore[misc]
            assert p.gate_levels[name] == level
            assert (name in p.locked_gates) is (lock == ["locked"])
            if level != "absent" and name != "PodLevelResourceManagers":
                assert p.gates[name] is default
        elif kind == "option":
            assert p.options[name] == rule.value
        elif rule.key in ("cpu.write", "memory.write"):
            value = str(rule.value)
            expected = value.split("|")[1 if gate else 0] if "|" in value else value
            assert (p.cpu_write if kind == "cpu" else p.memory_write) == expected
        elif rule.key in ("cpu.read", "memory.read"):
            read = p.cpu_read if kind == "cpu" else p.memory_read
            assert read == rule.value or (rule.since == (1, 36) and not gate)
        elif kind == "resize":
            if name == "static-cpu":
                assert p.resize_static_cpu == rule.value
        elif rule.key == "alloc.uncore-partial":
            assert p.uncore_partial == rule.value
        elif rule.key == "alloc.distributed-socket":
            assert p.distributed_socket == rule.value
        elif rule.key == "alloc.free-test":
            assert p.free_test == rule.value
        elif rule.key == "text.corrupt":
            assert p.corrupt_text == rule.value
        elif rule.key == "text.unreadable-data":
            assert p.data_error_text == rule.value
        elif rule.key == "text.resize-cpu":
            assert p.resize_cpu_text == rule.value
        elif rule.key == "text.resize-memory":
            assert p.resize_memory_text == rule.value
        elif rule.key == "text.topology-option-gate":
            assert p.topology_option_gate_text == rule.value
        else:  # pragma: no cover - a new key needs a check here
            pytest.fail(f"no check for {rule.key}")


def test_released_kubelets_read_v1_first() -> None:
    assert versions.cpu_formats_read((1, 30)) == ("v1", "v2")
    assert versions.cpu_formats_read((1, 36), gate=True) == ("v3", "v2", "v1")
    assert versions.cpu_formats_read((1, 36), gate=False) == ("v2", "v1")
    assert versions.profile().release == versions.NEWEST


def test_option_availability_follows_maturity_gates() -> None:
    p = versions.profile((1, 32))
    assert p.option_available("strict-cpu-reservation") == (
        False,
        "strict-cpu-reservation is alpha in kubelet 1.32: enable CPUManagerPolicyAlphaOptions",
    )
    on = versions.profile((1, 32), {"CPUManagerPolicyAlphaOptions": True})
    assert on.option_available("strict-cpu-reservation") == (True, "")
    assert versions.profile((1, 30)).option_available("max-allowable-numa-nodes")[0] is False
    assert versions.profile((1, 31)).option_available("max-allowable-numa-nodes")[0] is True


def test_every_rule_names_its_evidence() -> None:
    """A row cites a PR, a KEP or kube_features.go ("kf"); "-" only for "absent" at 1.18."""
    for rule in versions.RULES:
        if rule.pr == "-":
            assert rule.since == versions.OLDEST or rule.key == "text.corrupt", rule
        else:
            assert rule.pr == "kf" or rule.pr.startswith(("#", "KEP-")), rule


def test_options_graduated_to_ga_need_no_maturity_gate() -> None:
    """strict-cpu-reservation GA in 1.35 (#134388), uncorecache GA in 1.36 (#137055)."""
    off = {"CPUManagerPolicyAlphaOptions": False, "CPUManagerPolicyBetaOptions": False}
    beta = versions.profile((1, 34), off).option_available("strict-cpu-reservation")
    assert beta == (
        False,
        "strict-cpu-reservation is beta in kubelet 1.34: enable CPUManagerPolicyBetaOptions",
    )
    assert versions.profile((1, 35), off).option_available("strict-cpu-reservation") == (True, "")
    uncore = "prefer-align-cpus-by-uncorecache"
    assert versions.profile((1, 35), off).option_available(uncore)[0] is False
    assert versions.profile((1, 36), off).option_available(uncore) == (True, "")


def test_policy_options_gate_guards_every_option() -> None:
    """1.22 had no maturity gates: full-pcpus-only needed only CPUManagerPolicyOptions (alpha)."""
    assert versions.profile((1, 22)).option_available("full-pcpus-only") == (
        False,
        "full-pcpus-only needs CPUManagerPolicyOptions in kubelet 1.22: enable it",
    )
    on = versions.profile((1, 22), {"CPUManagerPolicyOptions": True})
    assert on.option_available("full-pcpus-only") == (True, "")
    off = versions.profile((1, 30), {"CPUManagerPolicyOptions": False})
    assert off.option_available("full-pcpus-only")[0] is False
    # 1.26-1.27: prefer-closest-numa-nodes needs the (alpha) master gate and the alpha gate.
    alpha = {"TopologyManagerPolicyAlphaOptions": True}
    assert versions.profile((1, 27), alpha).option_available("prefer-closest-numa-nodes") == (
        False,
        "prefer-closest-numa-nodes needs TopologyManagerPolicyOptions in kubelet 1.27: enable it",
    )
    both = versions.profile((1, 27), {**alpha, "TopologyManagerPolicyOptions": True})
    assert both.option_available("prefer-closest-numa-nodes") == (True, "")
    assert versions.profile((1, 28)).option_available("prefer-closest-numa-nodes") == (True, "")


def test_removed_gates_are_unknown_again() -> None:
    """TopologyManager removed in 1.29, CPUManager in 1.33, MemoryManager 1.36, sidecars 1.37."""
    assert versions.profile((1, 28)).gate_levels["TopologyManager"] == "ga"
    assert versions.profile((1, 29)).gate_levels["TopologyManager"] == "absent"
    assert versions.profile((1, 32)).gate_levels["CPUManager"] == "ga"
    assert versions.profile((1, 33)).gate_levels["CPUManager"] == "absent"
    assert versions.profile((1, 35)).gate_levels["MemoryManager"] == "ga"
    assert versions.profile((1, 36)).gate_levels["MemoryManager"] == "absent"
    assert "MemoryManager" not in versions.profile((1, 36)).gates
    assert versions.profile((1, 36)).gate_levels["SidecarContainers"] == "ga"
    assert versions.profile((1, 37)).gate_levels["SidecarContainers"] == "absent"


def test_locked_gates_follow_their_lock() -> None:
    """TopologyManagerPolicyOptions could be turned off in 1.32-1.35, not from 1.36 (#136380);
    a locked gate stays locked until its removal."""
    assert "TopologyManagerPolicyOptions" not in versions.profile((1, 35)).locked_gates
    assert versions.profile((1, 36)).locked_gates["TopologyManagerPolicyOptions"] is True
    assert "CPUManager" not in versions.profile((1, 25)).locked_gates
    assert versions.profile((1, 26)).locked_gates["CPUManager"] is True
    assert versions.profile((1, 32)).locked_gates["CPUManager"] is True
    assert "CPUManager" not in versions.profile((1, 33)).locked_gates  # removed
    for p in map(versions.profile, versions.RELEASES):
        for gate, value in p.locked_gates.items():
            assert p.gate_levels[gate] == "ga"
            assert p.gates[gate] is value


def test_pod_level_resource_managers_beta_but_off_in_1_37() -> None:
    """#140573 made it beta for 1.37; #141209 turned the default off again before release."""
    p = versions.profile((1, 37))
    assert p.gate_levels["PodLevelResourceManagers"] == "beta"
    assert p.gates["PodLevelResourceManagers"] is False


def test_resize_rules_and_texts_per_release() -> None:
    """The static-node check came with #128287 (1.32); #132473 (1.34) narrowed it and its text."""
    assert versions.profile((1, 31)).resize_static_cpu == "gate"
    assert versions.profile((1, 32)).resize_static_cpu == "refuse-guaranteed"
    assert versions.profile((1, 33)).resize_cpu_text.endswith("CPU Manager static policy")
    assert versions.profile((1, 34)).resize_static_cpu == "refuse-request-change"
    assert versions.profile((1, 34)).resize_cpu_text.endswith('CPU Manager policy "static"')
    assert versions.profile((1, 34)).resize_memory_text.endswith('Memory Manager policy "Static"')
    assert versions.profile((1, 31)).resize_cpu_text == ""


def test_readers_of_ranges() -> None:
    accepted = {(1, m): m != 36 for m in range(18, 38)}
    assert versions.readers_of(accepted) == "1.18-1.35, 1.37"
    assert versions.readers_of({}) == "none"


def test_docs_list_every_rule() -> None:
    from pathlib import Path

    text = (Path(__file__).parents[2] / "docs" / "versions.md").read_text()
    for rule in versions.RULES:
        release = f"{rule.since[0]}.{rule.since[1]}"
        assert f"| `{rule.key}` | {release} |" in text, rule


def test_gate_values_fill_what_the_configuration_leaves_out() -> None:
    """Known gates: the value set, else the default; unknown ones: off before they existed,
    on after their removal as GA (the feature stayed)."""
    values = versions.gate_values((1, 33), {"PodLevelResources": True})
    assert values["PodLevelResources"] is True  # set (alpha, default off)
    assert versions.gate_values((1, 33), {})["PodLevelResources"] is False
    assert versions.gate_values((1, 34), {})["PodLevelResources"] is True
    assert versions.gate_values((1, 31), {})["PodLevelResources"] is False  # not yet there
    assert versions.gate_values((1, 33), {})["CPUManager"] is True  # removed after GA
    assert versions.gate_values((1, 20), {})["MemoryManager"] is False  # not yet there
    assert set(versions.gate_values((1, 37), {})) == {
        r.key.removeprefix("gate.") for r in versions.RULES if r.key.startswith("gate.")
    }
