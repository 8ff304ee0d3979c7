"""The kubelet's precedence: file (defaulted), drop-ins (merge patches), flags; origins."""

from __future__ import annotations

from typing import Any

import pytest

from cpumanager.errors import ConfigError, KubeletConfigInvalidError
from cpumanager.formats.kubelet_config import (
    ConfigSource,
    assemble,
    parse_kubelet_flags,
)
from cpumanager.formats.kubelet_config.assemble import merge_patch

FILE = ConfigSource(
    "config.yaml",
    {
        "kind": "KubeletConfiguration",
        "cpuManagerPolicy": "static",
        "kubeReserved": {"cpu": "1", "memory": "1Gi"},
        "featureGates": {"A": True, "B": True},
        "cpuManagerReconcilePeriod": "0s",
    },
)


def drop(name: str, **body: Any) -> ConfigSource:
    return ConfigSource(name, body)


MERGES = [
    ({"a": 1}, {"a": 2}, {"a": 2}),
    ({"a": {"x": 1, "y": 2}}, {"a": {"y": 3}}, {"a": {"x": 1, "y": 3}}),
    ({"a": {"x": 1}}, {"a": {"x": None}}, {"a": {}}),
    ({"a": [1, 2]}, {"a": [3]}, {"a": [3]}),
    ({"a": 1}, {"b": None}, {"a": 1}),
]


@pytest.mark.parametrize(("target", "patch", "result"), MERGES)
def test_json_merge_patch(target: object, patch: object, result: object) -> None:
    assert merge_patch(target, patch) == result


def test_file_then_drop_ins_then_flags() -> None:
    effective = assemble(
        file=FILE,
        drop_ins=[
            drop("10-a.conf", topologyManagerPolicy="restricted", kubeReserved={"memory": "2Gi"}),
            drop("20-b.conf", topologyManagerPolicy="best-effort"),
        ],
        flags=parse_kubelet_flags(["--topology-manager-policy=single-numa-node"]),
    )
    config = effective.config
    assert config.topology_manager_policy == "single-numa-node"
    assert effective.origins["topologyManagerPolicy"] == "flag --topology-manager-policy"
    assert dict(config.kube_reserved) == {"cpu": 1, "memory": 2 * 2**30}
    assert effective.origins["kubeReserved"] == "drop-in 10-a.conf"
    assert effective.origins["cpuManagerReconcilePeriod"] == "default"
    assert effective.origins["cpuManagerPolicy"] == "file"
    assert effective.sources == (
        "file config.yaml",
        "drop-in 10-a.conf",
        "drop-in 20-b.conf",
        "flags",
    )


def test_a_map_flag_replaces_the_files_map() -> None:
    flags = parse_kubelet_flags(["--kube-reserved=memory=1Gi", "--reserved-cpus=0"])
    effective = assemble(file=FILE, flags=flags)
    assert dict(effective.config.kube_reserved) == {"memory": 2**30}
    # without a CPU list, the static policy has no CPU reservation left
    flags = parse_kubelet_flags(["--kube-reserved=memory=1Gi"])
    with pytest.raises(KubeletConfigInvalidError, match="unable to determine reserved CPU"):
        assemble(file=FILE, flags=flags)


def test_feature_gate_flags_merge_with_the_files() -> None:
    effective = assemble(file=FILE, flags=parse_kubelet_flags(["--feature-gates=B=false,C=true"]))
    assert dict(effective.config.feature_gates) == {"A": True, "B": False, "C": True}
    assert effective.origins["featureGates"] == "file + flag --feature-gates"


def test_zero_from_a_drop_in_or_flag_is_kept() -> None:
    # the kubelet defaults the file only; a drop-in's or flag's zero stays
    effective = assemble(file=FILE, drop_ins=[drop("x.conf", cpuManagerReconcilePeriod="0s")])
    assert effective.config.cpu_manager_reconcile_period_seconds == 0
    flags = parse_kubelet_flags(["--cpu-manager-reconcile-period=0s"])
    assert assemble(flags=flags).config.cpu_manager_reconcile_period_seconds == 0


def test_merge_default_eviction_settings() -> None:
    body = {"evictionHard": {"memory.available": "1Gi"}, "mergeDefaultEvictionSettings": True}
    effective = assemble(file=ConfigSource("f", body))
    assert dict(effective.config.eviction_hard) == {
        "memory.available": "1Gi",
        "nodefs.available": "10%",
        "nodefs.inodesFree": "5%",
        "imagefs.available": "15%",
        "imagefs.inodesFree": "5%",
    }
    assert effective.origins["evictionHard"] == "file + defaults"
    plain = assemble(file=ConfigSource("f", {"evictionHard": {"memory.available": "1Gi"}}))
    assert dict(plain.config.eviction_hard) == {"memory.available": "1Gi"}


def test_every_validation_error_at_once() -> None:
    flags = parse_kubelet_flags(
        [
            "--max-pods=-1",
            "--topology-manager-scope=node",
            "--enforce-node-allocatable=pods,pods,kube-reserved,bogus",
            "--cpu-manager-policy=Static",
        ]
    )
    with pytest.raises(KubeletConfigInvalidError) as caught:
        assemble(flags=flags)
    assert list(caught.value.errors) == [
        "invalid configuration: maxPods (--max-pods) -1 must not be a negative number",
        'invalid configuration: topologyManagerScope (--topology-manager-scope) "node" must be '
        'one of: "container", or "pod"',
        'invalid configuration: duplicated enforcements "pods" in enforceNodeAllocatable '
        "(--enforce-node-allocatable)",
        "invalid configuration: kubeReservedCgroup (--kube-reserved-cgroup) must be specified "
        'when "kube-reserved" or "kube-reserved-compressible" included in enforceNodeAllocatable '
        "(--enforce-node-allocatable)",
        'invalid configuration: option "bogus" specified for enforceNodeAllocatable '
        '(--enforce-node-allocatable). Valid options are "pods", "system-reserved", '
        '"system-reserved-compressible", "kube-reserved", "kube-reserved-compressible" or "none"',
        'unknown policy: "Static"; cpuManagerPolicy is "none" or "static"',
    ]
    assert caught.value.message.startswith("6 errors: invalid configuration: maxPods")


ENFORCE = [
    (["none", "pods"], 'may not contain additional enforcements when "none" is specified'),
    (["system-reserved", "system-reserved-compressible"], 'both "system-reserved" and'),
]


@pytest.mark.parametrize(("levels", "message"), ENFORCE)
def test_enforcement_errors(levels: list[str], message: str) -> None:
    body = {"enforceNodeAllocatable": levels, "systemReservedCgroup": "/system.slice"}
    with pytest.raises(KubeletConfigInvalidError) as caught:
        assemble(file=ConfigSource("f", body))
    assert any(message in error for error in caught.value.errors), caught.value.errors


def test_cgroups_per_qos_is_needed_to_enforce() -> None:
    with pytest.raises(KubeletConfigInvalidError, match=r"cgroupsPerQOS .* must be set to true"):
        assemble(file=ConfigSource("f", {"cgroupsPerQOS": False}))
    assemble(file=ConfigSource("f", {"cgroupsPerQOS": False, "enforceNodeAllocatable": []}))


def test_a_mistyped_source_is_named() -> None:
    with pytest.raises(ConfigError, match=r"^20-b\.conf: maxPods: expected an integer"):
        assemble(drop_ins=[drop("20-b.conf", maxPods="many")])


def test_configz_stands_alone() -> None:
    configz = ConfigSource("configz.json", {"kubeletconfig": {"cpuManagerPolicy": "none"}})
    effective = assemble(configz=configz)
    assert effective.origins["cpuManagerPolicy"] == "configz"
    assert effective.origins["maxPods"] == "default"
    with pytest.raises(ConfigError, match="give it alone"):
        assemble(configz=configz, file=FILE)


def test_root_dir_flag() -> None:
    effective = assemble(flags=parse_kubelet_flags(["--root-dir=/data/kubelet"]))
    assert (effective.root_dir, effective.root_dir_origin) == ("/data/kubelet", "flag --root-dir")
    assert assemble().root_dir == "/var/lib/kubelet"


def test_drop_in_nulls_patch_drop_ins_not_the_file() -> None:
    effective = assemble(
        file=FILE,
        drop_ins=[
            drop("10.conf", kubeReserved=None, topologyManagerPolicy="restricted"),
            drop("20.conf", topologyManagerPolicy=None, systemReserved={"memory": "1Gi"}),
        ],
    )
    config = effective.config
    # the file's kubeReserved survives a drop-in's null (Go keys differ from v1beta1 keys)
    assert dict(config.kube_reserved) == {"cpu": 1, "memory": 2**30}
    assert effective.origins["kubeReserved"] == "file"
    # ... while a later drop-in's null removes an earlier drop-in's value
    assert config.topology_manager_policy == "none"
    assert effective.origins["topologyManagerPolicy"] == "default"
    assert effective.origins["systemReserved"] == "drop-in 20.conf"


def test_drop_in_maps_add_to_the_default_eviction_signals() -> None:
    effective = assemble(drop_ins=[drop("x.conf", evictionHard={"memory.available": "1Gi"})])
    assert dict(effective.config.eviction_hard) == {
        "memory.available": "1Gi",
        "nodefs.available": "10%",
        "nodefs.inodesFree": "5%",
        "imagefs.available": "15%",
        "imagefs.inodesFree": "5%",
    }


OPTIONS = [
    (["--cpu-manager-policy-options=full-pcpus-only=true"], "None policy: received unsupported"),
    (
        ["--cpu-manager-policy=static", "--reserved-cpus=0", "--cpu-manager-policy-options=x=true"],
        'new static policy error: unknown CPU Manager Policy option: "x"',
    ),
    (
        [
            "--cpu-manager-policy=static",
            "--reserved-cpus=0",
            "--cpu-manager-policy-options=distribute-cpus-across-cores=true",
        ],
        "new static policy error: CPU Manager Policy Alpha-level Options not enabled",
    ),
    (
        ["--topology-manager-policy=restricted", "--topology-manager-policy-options=bogus=1"],
        'unknown Topology Manager Policy option: "bogus"',
    ),
    (
        [
            "--topology-manager-policy=best-effort",
            "--topology-manager-policy-options=max-allowable-numa-nodes=4",
        ],
        "the minimum value of",
    ),
]


@pytest.mark.parametrize(("words", "message"), OPTIONS, ids=[o[1][:30] for o in OPTIONS])
def test_policy_options_are_checked_as_the_managers_do(words: list[str], message: str) -> None:
    with pytest.raises(KubeletConfigInvalidError) as caught:
        assemble(flags=parse_kubelet_flags(words))
    assert any(error.startswith(message) for error in caught.value.errors), caught.value.errors
