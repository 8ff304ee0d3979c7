"""Configuration files in the shapes real installers write: loaded, defaulted, validated."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

from cpumanager.adapters.kubelet_config_file import load_effective_config, read_kubelet_config
from cpumanager.core.cpuset import CPUSet

DATA = Path(__file__).resolve().parent.parent / "data" / "kubelet_configs"


def test_every_file_names_its_shape() -> None:
    files = sorted(DATA.rglob("*.*"))
    assert files
    for path in files:
        if path.suffix in (".yaml", ".json", ".conf", ".env", ".service", ".txt"):
            head = path.read_text().splitlines()[:3]
            assert any("Shape:" in line for line in head), path


def test_kubeadm_file_as_written() -> None:
    config = read_kubelet_config(DATA / "kubeadm.yaml")
    assert config.cpu_manager_policy == "none"
    assert config.cpu_manager_reconcile_period_seconds == Fraction(10)
    assert config.topology_manager_policy == "none"
    assert config.topology_manager_scope == "container"
    assert config.memory_manager_policy == "None"
    assert config.cgroup_driver == "systemd"
    assert dict(config.eviction_hard)["memory.available"] == "100Mi"


def test_kubeadm_static_file() -> None:
    effective = load_effective_config(config=DATA / "kubeadm-static.yaml")
    config = effective.config
    assert config.cpu_manager_policy == "static"
    assert config.reserved_cpus == CPUSet.parse("0,16")
    assert config.num_reserved_cpus == 2
    assert dict(config.cpu_manager_policy_options) == {"full-pcpus-only": "true"}
    assert config.topology_manager_policy == "single-numa-node"
    assert config.topology_manager_scope == "container"  # "" in the file: defaulted
    assert effective.origins["topologyManagerScope"] == "default"
    assert effective.origins["cpuManagerReconcilePeriod"] == "default"  # 0s in the file
    assert effective.origins["cpuManagerPolicy"] == "file"
    assert effective.origins["memoryManagerPolicy"] == "default"
