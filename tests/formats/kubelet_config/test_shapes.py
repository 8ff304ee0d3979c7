"""Configuration files in the shapes real installers write: loaded, defaulted, validated."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

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


def _copy_tree(tmp_path: Path, name: str) -> Path:
    import shutil

    root = tmp_path / name
    shutil.copytree(DATA / name, root)
    return root


def test_kubeadm_node_through_its_systemd_unit(tmp_path: Path) -> None:
    root = _copy_tree(tmp_path, "kubeadm-node")
    unit = root / "usr/lib/systemd/system/kubelet.service"
    effective = load_effective_config(systemd_unit=unit, root=root)
    config = effective.config
    # /etc/default/kubelet's KUBELET_EXTRA_ARGS win over config.yaml
    assert config.cpu_manager_policy == "static"
    assert config.reserved_cpus == CPUSet.parse("0,16")
    assert config.topology_manager_policy == "single-numa-node"
    assert config.feature_gate("CPUManagerPolicyAlphaOptions", default=False) is True
    assert config.cgroup_driver == "systemd"  # from config.yaml, named by KUBELET_CONFIG_ARGS
    assert config.cpu_manager_reconcile_period_seconds == 10  # 0s in config.yaml
    assert effective.origins["cpuManagerPolicy"] == "flag --cpu-manager-policy"
    assert effective.origins["reservedSystemCPUs"] == "flag --reserved-cpus"
    assert effective.origins["cgroupDriver"] == "file"
    assert effective.sources == (f"file {root / 'var/lib/kubelet/config.yaml'}", "flags")


def test_kubeadm_env_files_alone_have_no_config_file(tmp_path: Path) -> None:
    root = _copy_tree(tmp_path, "kubeadm-node")
    effective = load_effective_config(
        env_files=[root / "var/lib/kubelet/kubeadm-flags.env", root / "etc/default/kubelet"],
        root=root,
    )
    assert effective.config.cpu_manager_policy == "static"
    assert effective.config.cgroup_driver == "cgroupfs"  # the file is named by the unit only
    assert effective.sources == ("flags",)


def test_kops_flags_and_short_file(tmp_path: Path) -> None:
    root = _copy_tree(tmp_path, "kops-node")
    effective = load_effective_config(env_files=[root / "etc/sysconfig/kubelet"], root=root)
    config = effective.config
    assert (config.cpu_manager_policy, config.topology_manager_policy) == ("static", "best-effort")
    assert config.num_reserved_cpus == 1  # ceil(100m + 100m)
    assert config.memory_reservation_bytes() == (384 + 256 + 100) * 2**20
    assert dict(config.eviction_hard)["imagefs.inodesFree"] == "5%"
    assert (config.cgroup_root, config.cgroup_driver) == ("/", "systemd")
    assert effective.origins["evictionHard"] == "flag --eviction-hard"
    assert effective.sources[0] == f"file {root / 'var/lib/kubelet/kubelet.conf'}"


def test_k3s_drop_ins_in_name_order() -> None:
    effective = load_effective_config(config_dir=DATA / "k3s" / "kubelet.conf.d")
    config = effective.config
    assert config.cpu_manager_policy == "static"  # README.txt is not a *.conf drop-in
    assert config.reserved_cpus == CPUSet.parse("0-1")
    assert config.topology_manager_policy == "restricted"  # 99 after 50
    assert config.cpu_manager_reconcile_period_seconds == 5
    assert {k: str(v) for k, v in config.kube_reserved.items()} == {
        "memory": str(512 * 2**20),
        "cpu": "1/5",
    }  # maps merge key by key
    # a drop-in is a merge patch over the defaulted base: evictionHard merges with the default
    assert dict(config.eviction_hard) == {
        "memory.available": "100Mi",
        "nodefs.available": "5%",
        "nodefs.inodesFree": "5%",
        "imagefs.available": "5%",
        "imagefs.inodesFree": "5%",
    }
    assert config.memory_reservation_bytes() == (512 + 100) * 2**20
    assert effective.origins["cpuManagerPolicy"] == "drop-in 50-cpu.conf"
    assert effective.origins["kubeReserved"] == "drop-in 99-override.conf"
    assert effective.origins["cgroupDriver"] == "drop-in 00-k3s-defaults.conf"
    assert effective.origins["memoryManagerPolicy"] == "default"


def test_eks_al2023_file_and_nodeadm_drop_in() -> None:
    eks = DATA / "eks-al2023"
    effective = load_effective_config(config=eks / "config.json", config_dir=eks / "config.json.d")
    config = effective.config
    assert config.cpu_manager_policy == "static"
    assert (config.topology_manager_policy, config.topology_manager_scope) == (
        "single-numa-node",
        "pod",
    )
    assert config.max_pods == 110
    assert effective.origins["maxPods"] == "drop-in 40-nodeadm.conf"
    assert config.num_reserved_cpus == 1  # 110m
    assert config.memory_reservation_bytes() == (2829 + 100) * 2**20
    assert config.kube_reserved_cgroup == "/runtime"


def test_eks_refuses_reserved_cpus_with_its_reserved_cgroups(tmp_path: Path) -> None:
    import shutil

    from cpumanager.errors import KubeletConfigInvalidError

    eks = tmp_path / "eks"
    shutil.copytree(DATA / "eks-al2023", eks)
    (eks / "config.json.d" / "50-cpus.conf").write_text('{"reservedSystemCPUs": "0-1"}')
    with pytest.raises(KubeletConfigInvalidError) as caught:
        load_effective_config(config=eks / "config.json", config_dir=eks / "config.json.d")
    assert caught.value.errors[0].startswith(
        "invalid configuration: can't use reservedSystemCPUs (--reserved-cpus) with "
        "systemReservedCgroup (--system-reserved-cgroup) or kubeReservedCgroup"
    )


def test_bottlerocket() -> None:
    config = read_kubelet_config(DATA / "bottlerocket.yaml")
    assert config.cpu_manager_policy == "static"
    assert dict(config.cpu_manager_policy_options) == {"full-pcpus-only": "true"}
    assert (config.topology_manager_policy, config.topology_manager_scope) == (
        "single-numa-node",
        "pod",
    )
    assert (config.max_pods, config.num_reserved_cpus) == (29, 1)


def test_gke_file_named_by_kubelet_opts(tmp_path: Path) -> None:
    import shutil

    (tmp_path / "home/kubernetes").mkdir(parents=True)
    shutil.copy(DATA / "gke.yaml", tmp_path / "home/kubernetes/kubelet-config.yaml")
    effective = load_effective_config(env_files=[DATA / "gke-default-kubelet.env"], root=tmp_path)
    config = effective.config
    assert config.cpu_manager_policy == "static"
    assert config.num_reserved_cpus == 2  # ceil(1060m)
    assert effective.origins["maxPods"] == "flag --max-pods"
    assert dict(config.eviction_hard)["pid.available"] == "10%"
    assert config.feature_gate("RotateKubeletServerCertificate", default=False) is True


def test_aks_json_and_flags(tmp_path: Path) -> None:
    import shutil

    (tmp_path / "etc/default").mkdir(parents=True)
    shutil.copy(DATA / "aks-kubeletconfig.json", tmp_path / "etc/default/kubeletconfig.json")
    effective = load_effective_config(env_files=[DATA / "aks-default-kubelet.env"], root=tmp_path)
    config = effective.config
    assert (config.cpu_manager_policy, config.topology_manager_policy) == ("static", "best-effort")
    assert config.reserved_cpus == CPUSet.parse("0-1")  # --reserved-cpus in KUBELET_FLAGS
    assert config.num_reserved_cpus == 2
    assert dict(config.effective_kube_reserved()) == {"memory": 1638 * 2**20}
    assert config.memory_reservation_bytes() == (1638 + 750) * 2**20


def test_openshift_performance_profile() -> None:
    from cpumanager.formats.kubelet_config import reserved_memory_per_node

    config = read_kubelet_config(DATA / "openshift.yaml")
    assert config.cpu_manager_policy == "static"
    assert config.reserved_cpus == CPUSet.parse("0-3")
    assert config.cpu_manager_reconcile_period_seconds == 5
    assert config.memory_manager_policy == "Static"
    assert dict(config.effective_system_reserved())["cpu"] == 4
    assert config.max_pods == 250
    # 500Mi system + 500Mi kube + 100Mi eviction = the 1100Mi reserved on node 0
    assert reserved_memory_per_node(config, (0, 1)) == {0: {"memory": 1100 * 2**20}}


def test_talos() -> None:
    config = read_kubelet_config(DATA / "talos.yaml")
    assert config.cpu_manager_policy == "static"
    assert config.cpu_manager_reconcile_period_seconds == 10  # 0s
    assert (config.topology_manager_policy, config.topology_manager_scope) == (
        "best-effort",
        "pod",
    )
    assert config.reserved_cpus == CPUSet.parse("0")
    assert config.num_reserved_cpus == 1
    assert config.memory_reservation_bytes() == (192 + 100) * 2**20


def test_configz_answer_round_trips(tmp_path: Path) -> None:
    import json

    config = read_kubelet_config(DATA / "openshift.yaml")
    for wrapped in (True, False):
        body: dict[str, object] = {"kind": "KubeletConfiguration", **config.to_v1beta1()}
        path = tmp_path / "configz.json"
        path.write_text(json.dumps({"kubeletconfig": body} if wrapped else body))
        effective = load_effective_config(configz=path)
        assert effective.config == config
        assert effective.origins["cpuManagerPolicy"] == "configz"
        assert effective.sources == (f"configz {path}",)


UNQUOTED = [
    ("cpuManagerPolicyOptions:\n  full-pcpus-only: true\n", "bool", "cpuManagerPolicyOptions"),
    ("topologyManagerPolicyOptions:\n  max-allowable-numa-nodes: 16\n", "number", "topology"),
    ("kubeReserved:\n  cpu: 1\n", "number", "kubeReserved"),
]


@pytest.mark.parametrize(("text", "kind", "field"), UNQUOTED, ids=[u[2] for u in UNQUOTED])
def test_files_need_quoted_strings_where_the_kubelet_wants_strings(
    tmp_path: Path, text: str, kind: str, field: str
) -> None:
    from cpumanager.errors import ConfigError

    path = tmp_path / "config.yaml"
    path.write_text(text)
    expected = rf"json: cannot unmarshal {kind} into Go struct field KubeletConfiguration\.{field}"
    with pytest.raises(ConfigError, match=expected):
        read_kubelet_config(path)
    with pytest.raises(ConfigError, match=expected):
        load_effective_config(config=path)
    drop_ins = tmp_path / "conf.d"
    drop_ins.mkdir()
    (drop_ins / "10.conf").write_text(text)
    with pytest.raises(ConfigError, match=r"^10\.conf: json: cannot unmarshal"):
        load_effective_config(config_dir=drop_ins)
