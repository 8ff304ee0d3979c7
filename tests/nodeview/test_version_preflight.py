"""Pre-flight of a fixture node to another kubelet release: upgrade and downgrade."""

from __future__ import annotations

from pathlib import Path

from cpumanager.checkpoint import newer
from cpumanager.formats.kubelet_config import KubeletConfig
from cpumanager.nodeview.snapshot import CheckpointFile, NodeSnapshot
from cpumanager.nodeview.version_preflight import preflight_to_release

KUBEADM = Path(__file__).parents[1] / "data" / "nodes" / "kubeadm" / "var" / "lib" / "kubelet"


def node(**files: bytes) -> NodeSnapshot:
    checkpoints = {
        kind: CheckpointFile(kind, f"/var/lib/kubelet/{kind}", data, None)
        for kind, data in files.items()
    }
    return NodeSnapshot(
        "n", "", "", "/", "/var/lib/kubelet", None, None, checkpoints, None, None, ()
    )


def test_upgrade_of_the_kubeadm_node_keeps_everything() -> None:
    snapshot = node(cpu_manager_state=(KUBEADM / "cpu_manager_state").read_bytes())
    result = preflight_to_release(snapshot, (1, 37), config=KubeletConfig())
    assert result.verdict == "as-is", result.findings


def test_downgrade_across_the_format_change_needs_a_drain() -> None:
    v4 = newer.encode_cpu_v4("static", "0,3-7", {"p1": {"c": "1-2"}}, {"p1": "1-2"})
    result = preflight_to_release(node(cpu_manager_state=v4), (1, 35), config=KubeletConfig())
    assert result.verdict == "drain"
    assert result.drain == ("p1",)


def test_downgrade_of_a_v3_file_quotes_the_refusal() -> None:
    v3 = newer.encode_cpu_v3("static", "0,3-7", {"p1": {"c": "1-2"}}, {"p1": "1-2"})
    result = preflight_to_release(node(cpu_manager_state=v3), (1, 34), config=KubeletConfig())
    (finding,) = result.findings
    assert "could not restore state from checkpoint: checkpoint is corrupted" in finding.text
    assert finding.verdict == "drain"


def test_gated_136_converts_a_v4_file() -> None:
    v4 = newer.encode_cpu_v4("static", "0,3-7", {"p1": {"c": "1-2"}}, {"p1": "1-2"})
    config = KubeletConfig.from_mapping({"featureGates": {"PodLevelResourceManagers": True}})
    result = preflight_to_release(node(cpu_manager_state=v4), (1, 36), config=config)
    assert result.verdict == "convert"
    assert result.findings[0].target_format == "v3"


def test_options_and_gates_the_target_does_not_have() -> None:
    config = KubeletConfig.from_mapping(
        {
            "cpuManagerPolicy": "static",
            "reservedSystemCPUs": "0",
            "cpuManagerPolicyOptions": {"strict-cpu-reservation": "true"},
            "featureGates": {"PodLevelResourceManagers": True},
        }
    )
    result = preflight_to_release(node(), (1, 31), config=config)
    texts = [f.text for f in result.findings]
    assert "strict-cpu-reservation does not exist in kubelet 1.31" in texts
    assert any(t.startswith("unrecognized feature gate: PodLevelResourceManagers") for t in texts)
    assert result.verdict == "refuse"


def test_upgrade_past_a_gate_removal_is_refused() -> None:
    """MemoryManager was removed in 1.36 (#136381): the kubelet no longer starts with it set."""
    config = KubeletConfig.from_mapping({"featureGates": {"MemoryManager": True}})
    assert preflight_to_release(node(), (1, 35), config=config).verdict == "as-is"
    result = preflight_to_release(node(), (1, 36), config=config)
    assert result.verdict == "refuse"
    (finding,) = result.findings
    assert finding.text.startswith("unrecognized feature gate: MemoryManager")


def test_a_locked_gate_set_to_the_other_value_is_refused() -> None:
    """featuregate's LockToDefault: CPUManager=false stops kubelets 1.26-1.32; from 1.33 the
    gate is gone and the kubelet does not know it at all."""
    config = KubeletConfig.from_mapping({"featureGates": {"CPUManager": False}})
    assert preflight_to_release(node(), (1, 25), config=config).verdict == "as-is"
    result = preflight_to_release(node(), (1, 26), config=config)
    assert result.verdict == "refuse"
    (finding,) = result.findings
    assert finding.subject == "featureGates.CPUManager"
    assert finding.text.startswith(
        "cannot set feature gate CPUManager to false, feature is locked to true"
    )
    result = preflight_to_release(node(), (1, 33), config=config)
    (finding,) = result.findings
    assert finding.text.startswith("unrecognized feature gate: CPUManager")
    # set to the value it is locked to, a locked gate is accepted
    on = KubeletConfig.from_mapping({"featureGates": {"CPUManager": True}})
    assert preflight_to_release(node(), (1, 30), config=on).verdict == "as-is"


def test_topology_options_gate_locks_in_1_36() -> None:
    """TopologyManagerPolicyOptions could be turned off in 1.32-1.35 (#128124), not in 1.36."""
    config = KubeletConfig.from_mapping({"featureGates": {"TopologyManagerPolicyOptions": False}})
    assert preflight_to_release(node(), (1, 35), config=config).verdict == "as-is"
    result = preflight_to_release(node(), (1, 36), config=config)
    assert [f.verdict for f in result.findings] == ["refuse"]


def test_topology_options_of_the_none_policy_are_never_parsed() -> None:
    """The kubelet's topology manager returns before parsing its options under policy
    none: 1.32 (measured) starts with a beta option whose gate is off, even one below its
    minimum; under best-effort it refuses."""
    from cpumanager.nodeview.version_preflight import config_findings

    raw = {
        "cpuManagerPolicy": "static",
        "reservedSystemCPUs": "0",
        "topologyManagerPolicyOptions": {"max-allowable-numa-nodes": "4"},
        "featureGates": {"TopologyManagerPolicyBetaOptions": False},
    }
    assert config_findings(KubeletConfig.from_mapping(raw), (1, 32)) == []
    raw["topologyManagerPolicy"] = "best-effort"
    (finding,) = config_findings(KubeletConfig.from_mapping(raw), (1, 32))
    assert finding.verdict == "refuse"
    assert "TopologyManagerPolicyBetaOptions" in finding.text
    raw["topologyManagerPolicy"] = "none"
    raw["featureGates"] = {"TopologyManagerPolicyOptions": False}  # checked before the manager
    (finding,) = config_findings(KubeletConfig.from_mapping(raw), (1, 32))
    assert "TopologyManagerPolicyOptions" in finding.text
