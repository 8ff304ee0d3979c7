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
            level, default = rule.value  # type: ignore[misc]
            assert p.gate_levels[name] == level
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
        elif rule.key == "text.corrupt":
            assert p.corrupt_text == rule.value
        elif rule.key == "text.unreadable-data":
            assert p.data_error_text == rule.value
        else:  # pragma: no cover - a new key needs a check here
            pytest.fail(f"no check for {rule.key}")


def test_released_kubelets_read_v1_first() -> None:
    assert versions.cpu_formats_read((1, 30)) == ("v1", "v2")
    assert versions.cpu_formats_read((1, 36), gate=True) == ("v3", "v1", "v2")
    assert versions.cpu_formats_read((1, 36), gate=False) == ("v1", "v2")
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
