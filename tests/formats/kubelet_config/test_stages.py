"""Where the kubelet stops: ``loads``, ``validates`` or ``starts``, with its own text.

``assemble(release=...)`` runs the kubelet's stages in order and raises at the first that
refuses; without a release it keeps the older all-at-once report.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from cpumanager.core.versions import Release
from cpumanager.errors import KubeletConfigInvalidError
from cpumanager.formats.kubelet_config import ConfigSource, assemble, parse_kubelet_flags
from cpumanager.formats.kubelet_config.defaults import eviction_hard_default

HEAD = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration"}
V132: Release = (1, 32)

STAGES = [
    # manager start-up refusals: the file is valid, a manager refuses when built
    (
        {"cpuManagerPolicy": "static"},
        "starts",
        "[cpumanager] unable to determine reserved CPU resources for static policy",
    ),
    ({"cpuManagerPolicy": "Static"}, "starts", 'unknown policy: "Static"'),
    ({"cpuManagerPolicy": "dynamic"}, "starts", 'unknown policy: "dynamic"'),
    (
        {"memoryManagerPolicy": "Static"},
        "starts",
        "[memorymanager] you should specify the system reserved memory",
    ),
    # validation comes first: an invalid field hides the managers' refusals
    (
        {"cpuManagerPolicy": "Static", "hairpinMode": "veth"},
        "validates",
        'invalid configuration: option "veth" specified for hairpinMode',
    ),
    (
        {"nodeLeaseDurationSeconds": -1},
        "validates",
        "invalid configuration: nodeLeaseDurationSeconds",
    ),
    # the file's gates are merged while defaulting (1.32): a bad one panics while loading
    (
        {"featureGates": {"NoSuchGate": True}},
        "loads",
        "panic: failed to merge global and in-flight KubeletConfiguration while setting "
        "defaults, error: unrecognized feature gate: NoSuchGate",
    ),
    (
        {"featureGates": {"MemoryManager": False}},
        "loads",
        "panic: failed to merge global and in-flight KubeletConfiguration while setting "
        "defaults, error: cannot set feature gate MemoryManager to false, feature is locked "
        "to true",
    ),
    # the kubelet reads a reservation's resources when it starts, after validation
    # (measured: 1.32 loads and validates these)
    ({"kubeReserved": {"foo": "1"}}, "starts", 'kubeReserved: cannot reserve "foo" resource'),
    (
        {"kubeReserved": {"foo": "1"}, "hairpinMode": "veth"},
        "validates",
        'invalid configuration: option "veth" specified for hairpinMode',
    ),
    (
        {"maxPods": "many"},
        "loads",
        "failed to load kubelet config file, path: k.yaml, error: failed to load Kubelet config "
        "file k.yaml, error failed to decode: json: cannot unmarshal string into Go struct field "
        "KubeletConfiguration.maxPods of type int32",
    ),
]


@pytest.mark.parametrize(("fields", "stage", "text"), STAGES)
def test_the_first_stage_that_refuses(fields: dict[str, object], stage: str, text: str) -> None:
    with pytest.raises(KubeletConfigInvalidError) as caught:
        assemble(file=ConfigSource("k.yaml", {**HEAD, **fields}), release=V132)
    assert caught.value.stage == stage
    assert caught.value.errors[0].startswith(text)


def test_gates_from_flags_refuse_before_loading() -> None:
    flags = parse_kubelet_flags(["--feature-gates=NoSuchGate=true"])
    with pytest.raises(KubeletConfigInvalidError) as caught:
        assemble(file=ConfigSource("k.yaml", dict(HEAD)), flags=flags, release=V132)
    assert caught.value.stage == "validates"
    assert caught.value.errors == (
        "failed to set feature gates from initial flags-based config: unrecognized feature "
        "gate: NoSuchGate",
    )


def test_a_gate_in_the_file_before_1_32_is_refused_after_loading() -> None:
    with pytest.raises(KubeletConfigInvalidError) as caught:
        assemble(
            file=ConfigSource("k.yaml", {**HEAD, "featureGates": {"CPUManager": False}}),
            release=(1, 30),
        )
    assert caught.value.stage == "validates"
    assert caught.value.errors == (
        "failed to set feature gates from initial flags-based config: cannot set feature gate "
        "CPUManager to false, feature is locked to true",
    )


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("-5s", Fraction(-5)), ("-0s", Fraction(0)), ("-1m30.5s", Fraction(-181, 2))],
)
def test_negative_durations_load(text: str, seconds: Fraction) -> None:
    body = {**HEAD, "cpuManagerReconcilePeriod": text, "syncFrequency": "-1s"}
    effective = assemble(file=ConfigSource("k.yaml", body), release=V132)
    expected = Fraction(10) if seconds == 0 else seconds  # -0s is zero: defaulted
    assert effective.config.cpu_manager_reconcile_period_seconds == expected


@pytest.mark.parametrize(
    ("release", "signals"),
    [((1, 18), 4), ((1, 29), 4), ((1, 30), 5), ((1, 32), 5), ((1, 37), 5)],
)
def test_the_eviction_default_per_release(release: Release, signals: int) -> None:
    effective = assemble(file=ConfigSource("k.yaml", dict(HEAD)), release=release)
    assert dict(effective.config.eviction_hard) == dict(eviction_hard_default(release))
    assert len(effective.config.eviction_hard) == signals
    assert ("imagefs.inodesFree" in effective.config.eviction_hard) == (signals == 5)
    assert effective.config.eviction_hard["memory.available"] == "100Mi"


def test_merged_eviction_defaults_are_the_releases() -> None:
    body = {
        **HEAD,
        "evictionHard": {"memory.available": "1Gi"},
        "mergeDefaultEvictionSettings": True,
    }
    old = assemble(file=ConfigSource("k.yaml", body), release=(1, 29))
    new = assemble(file=ConfigSource("k.yaml", body), release=(1, 34))
    assert "imagefs.inodesFree" not in old.config.eviction_hard
    assert new.config.eviction_hard["imagefs.inodesFree"] == "5%"
    assert new.config.eviction_hard["memory.available"] == "1Gi"


def test_a_drop_ins_zero_is_defaulted_from_1_32() -> None:
    drop_in = ConfigSource("10-zero.conf", {**HEAD, "cpuManagerReconcilePeriod": "0s"})
    file = ConfigSource("k.yaml", {**HEAD, "cpuManagerReconcilePeriod": "5s"})
    newer = assemble(file=file, drop_ins=[drop_in], release=V132)
    assert newer.config.cpu_manager_reconcile_period_seconds == 10
    assert newer.origins["cpuManagerReconcilePeriod"] == "drop-in 10-zero.conf + defaults"
    older = assemble(file=file, drop_ins=[drop_in], release=(1, 31))
    assert older.config.cpu_manager_reconcile_period_seconds == 0


def test_a_drop_ins_mistyped_field_refuses_once_merged() -> None:
    drop_in = ConfigSource("10-x.conf", {**HEAD, "maxPods": "many"})
    with pytest.raises(KubeletConfigInvalidError) as caught:
        assemble(drop_ins=[drop_in], release=V132)
    assert caught.value.stage == "loads"
    assert caught.value.errors == (
        "failed to merge kubelet configs: failed to unmarshal merged JSON into kubelet "
        "configuration: json: cannot unmarshal string into Go struct field "
        "KubeletConfiguration.maxPods of type int32",
    )


def test_the_managers_refuse_in_the_order_they_are_built() -> None:
    body = {
        **HEAD,
        "memoryManagerPolicy": "Static",  # built last
        "cpuManagerPolicy": "static",  # no reservation: refused before its options
        "cpuManagerPolicyOptions": {"no-such-option": "true"},
        "topologyManagerPolicy": "best-effort",
        "topologyManagerPolicyOptions": {"no-such-option": "true"},  # built first
    }
    with pytest.raises(KubeletConfigInvalidError) as caught:
        assemble(file=ConfigSource("k.yaml", body), release=V132)
    assert caught.value.stage == "starts"
    topology, cpu, memory = caught.value.errors
    assert "no-such-option" in topology
    assert cpu.startswith("[cpumanager] unable to determine reserved CPU resources")
    assert memory.startswith("[memorymanager] you should specify the system reserved memory")


def test_topology_options_under_the_none_policy_are_never_parsed() -> None:
    """Measured against 1.32.10 (bench/diff_kubelet_cpu.py): with policy none the topology
    manager's constructor returns before it parses its options, so the kubelet starts."""
    body = {
        **HEAD,
        "cpuManagerPolicy": "static",
        "systemReserved": {"cpu": "1"},
        "topologyManagerPolicyOptions": {"no-such-option": "true"},
    }
    assemble(file=ConfigSource("k.yaml", body), release=V132)
    body["topologyManagerPolicy"] = "restricted"
    with pytest.raises(KubeletConfigInvalidError) as caught:
        assemble(file=ConfigSource("k.yaml", body), release=V132)
    (error,) = caught.value.errors
    assert error.startswith('unknown Topology Manager Policy option: "no-such-option"')


def test_a_field_the_release_lacks_is_unknown_to_it() -> None:
    # mergeDefaultEvictionSettings came in 1.34: 1.32 drops it unread (measured)
    fields = {"mergeDefaultEvictionSettings": 1, "evictionHard": {"memory.available": "1Gi"}}
    effective = assemble(file=ConfigSource("k.yaml", {**HEAD, **fields}), release=V132)
    assert dict(effective.config.eviction_hard) == {"memory.available": "1Gi"}
