"""Collecting snapshots of the fixture nodes (tests/data/nodes), with a stand-in kubelet."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from cpumanager.adapters.node_collect import (
    CollectOptions,
    _size_name,
    collect_snapshot,
    load_snapshot,
    write_snapshot,
)
from cpumanager.checkpoint.cpu import codec
from cpumanager.core.cpuset import CPUSet
from cpumanager.errors import ConfigError, InputError, SnapshotError
from cpumanager.nodeview.pods import running_containers
from cpumanager.nodeview.snapshot import NodeSnapshot, snapshot_to_json
from tests.nodeview.fixture_nodes import NODES_DIR, fixture_kubelet


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A short directory for sockets (a Unix socket path must stay under 108 bytes)."""
    path = Path(tempfile.mkdtemp(prefix="cpm", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def take(name: str, short_dir: Path, **extra: object) -> NodeSnapshot:
    node = NODES_DIR / name
    socket = short_dir / "kubelet.sock"
    with fixture_kubelet(node, socket):
        options = CollectOptions(
            root=node,
            kubelet_root=node / "var/lib/kubelet",
            pods=node / "pods.json",
            socket=socket,
            timeout_seconds=5,
            **extra,  # type: ignore[arg-type]
        )
        return collect_snapshot(options)


def statuses(snapshot: NodeSnapshot) -> dict[str, str]:
    return {source.name: source.status for source in snapshot.sources}


def test_kubeadm_node(short_dir: Path) -> None:
    snap = take("kubeadm", short_dir)
    assert snap.node_name == "kubeadm-node-1"
    found = statuses(snap)
    assert found["machine"] == found["pods"] == found["podResources"] == "ok"
    assert found["cpu_manager_state"] == "ok"
    assert len(snap.topology().all_cpus) == 16
    assert snap.pods is not None
    assert len(snap.pods) == 7
    decoded = snap.checkpoints["cpu_manager_state"].decoded
    assert decoded is not None
    assert decoded["policyName"] == "static"
    assert decoded["checksumOk"] is True


def test_podresources_agree_with_the_checkpoint(short_dir: Path) -> None:
    # The kubelet reports the CPU manager's own assignments through List: every container's
    # exclusive CPUs there are its checkpoint entry, and shared containers report none.
    snap = take("kubeadm", short_dir)
    state = codec.decode(snap.checkpoints["cpu_manager_state"].raw, source="fixture")
    entries = state.plain_entries() or {}
    assert snap.pod_resources is not None
    assert snap.pod_resources.pods is not None
    assert snap.pods is not None
    uid_of = {(p.pod.namespace, p.pod.name): p.pod.uid for p in snap.pods}
    seen = 0
    for pod in snap.pod_resources.pods:
        for container in pod.containers:
            expected = (entries.get(uid_of[pod.namespace, pod.name]) or {}).get(container.name)
            assert container.cpu_ids == CPUSet.parse(expected or "")
            seen += bool(expected)
    assert seen == 2  # postgres and redis hold exclusive CPUs
    allocatable = snap.pod_resources.allocatable
    assert allocatable is not None
    assert allocatable.cpu_ids == CPUSet.parse("1-7,9-15")  # all but reservedSystemCPUs


def test_gpu_node_devices_on_both_numa_nodes(short_dir: Path) -> None:
    snap = take("gpu", short_dir)
    assert snap.pod_resources is not None
    allocatable = snap.pod_resources.allocatable
    assert allocatable is not None
    numa = {d.device_ids[0]: d.numa_nodes for d in allocatable.devices}
    assert numa == {"GPU-0": (0,), "GPU-1": (0,), "GPU-2": (1,), "GPU-3": (1,)}
    # The device manager's checkpoint keeps each container's devices by NUMA node; the
    # two trainers were aligned to different nodes (single-numa-node, GPUs on both).
    devices = snap.checkpoints["kubelet_internal_checkpoint"].decoded
    assert devices is not None
    assert devices["checksumOk"] is True
    entries = devices["content"]["Data"]["PodDeviceEntries"]  # type: ignore[index]
    assert [sorted(e["DeviceIDs"]) for e in entries] == [["0"], ["1"]]
    memory = snap.checkpoints["memory_manager_state"].decoded
    assert memory is not None
    assert memory["content"] == {"policyName": "None", "machineState": {}, "checksum": 4236770233}


def test_hugepage_pools_per_numa_node(short_dir: Path) -> None:
    # 1024 pages of 2 MiB on each node: the pools the memory manager's machine state splits
    assert take("gpu", short_dir).hugepages == {
        0: {"hugepages-2Mi": 2 << 30},
        1: {"hugepages-2Mi": 2 << 30},
    }
    assert take("kubeadm", short_dir).hugepages == {}


@pytest.mark.parametrize(
    ("kib", "name"),
    [
        (2048, "hugepages-2Mi"),
        (1048576, "hugepages-1Gi"),
        (64, "hugepages-64Ki"),
        (32768, "hugepages-32Mi"),
    ],
)
def test_page_sizes_are_named_as_the_kubelet_names_them(kib: int, name: str) -> None:
    assert _size_name(kib) == name


def test_offline_cpus_are_not_in_the_machine(short_dir: Path) -> None:
    snap = take("offline-cpus", short_dir)
    assert snap.topology().all_cpus == CPUSet.parse("0-5,8-13")


def test_corrupt_checkpoint_is_kept_raw_and_flagged(short_dir: Path) -> None:
    snap = take("corrupt-checkpoint", short_dir)
    entry = snap.checkpoints["cpu_manager_state"]
    path = NODES_DIR / "corrupt-checkpoint/var/lib/kubelet/cpu_manager_state"
    assert entry.raw == path.read_bytes()
    assert "checksum mismatch" in entry.problem
    assert entry.decoded is not None
    assert entry.decoded["checksumOk"] is False
    assert statuses(snap)["cpu_manager_state"] == "invalid"


def test_missing_socket_is_listed_not_fatal(short_dir: Path) -> None:
    snap = take("no-socket", short_dir)
    assert snap.pod_resources is None
    source = next(s for s in snap.sources if s.name == "podResources")
    assert source.status == "missing"
    assert "is the kubelet running" in source.reason


def test_policy_switched_node_keeps_both_sides(short_dir: Path) -> None:
    snap = take("policy-switched", short_dir)
    decoded = snap.checkpoints["cpu_manager_state"].decoded
    assert decoded is not None
    assert decoded["policyName"] == "static"
    assert snap.config is not None
    assert snap.config.fields["cpuManagerPolicy"] == {"value": "none", "from": "file"}


def test_container_ids_feed_the_container_map(short_dir: Path) -> None:
    snap = take("kubeadm", short_dir)
    assert snap.pods is not None
    entries = snap.running_containers()
    assert entries == running_containers(snap.pods)
    # 8 containers in 7 pods, and the first container of each pod restarted once
    assert len(entries) == 8 + 7
    assert all("://" not in container_id for container_id, _uid, _name in entries)
    # the finished batch pod is not active: the kubelet's active-pod list leaves it out
    assert [p.name for p in snap.active_pods()] == [
        p.pod.name for p in snap.pods if p.pod.name != "report-28911"
    ]


def test_no_secret_reaches_the_file(short_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "snap.json"
    write_snapshot(take("kubeadm", short_dir), out)
    assert b"hunter2" not in out.read_bytes()
    assert oct(out.stat().st_mode & 0o777) == "0o644"


def test_file_round_trip(short_dir: Path, tmp_path: Path) -> None:
    snap = take("gpu", short_dir)
    out = tmp_path / "snap.json"
    write_snapshot(snap, out)
    again = load_snapshot(out)
    assert snapshot_to_json(again) == out.read_bytes()
    assert again.pod_resources == snap.pod_resources
    assert (
        again.hugepages
        == snap.hugepages
        == {0: {"hugepages-2Mi": 2 << 30}, 1: {"hugepages-2Mi": 2 << 30}}
    )
    assert again.checkpoints["cpu_manager_state"].raw == snap.checkpoints["cpu_manager_state"].raw


def test_symlinked_checkpoint_is_not_followed(tmp_path: Path, short_dir: Path) -> None:
    node = tmp_path / "node"
    shutil.copytree(NODES_DIR / "kubeadm", node)
    state = node / "var/lib/kubelet/cpu_manager_state"
    state.unlink()
    secret = tmp_path / "outside"
    secret.write_text("not for the snapshot")
    state.symlink_to(secret)
    snap = collect_snapshot(
        CollectOptions(root=node, kubelet_root=node / "var/lib/kubelet", socket=short_dir / "s")
    )
    assert "cpu_manager_state" not in snap.checkpoints
    source = next(s for s in snap.sources if s.name == "cpu_manager_state")
    assert (source.status, source.reason) == ("unreadable", "a symbolic link (not followed)")


def test_nothing_at_all_is_still_a_snapshot(tmp_path: Path) -> None:
    snap = collect_snapshot(
        CollectOptions(root=tmp_path, kubelet_root=tmp_path / "kubelet", node_name="n")
    )
    found = statuses(snap)
    assert found["machine"] == "missing"
    assert found["config"] == "missing"
    assert found["pods"] == "not-given"
    assert snap.config is not None
    assert snap.config.origin("cpuManagerPolicy") == "default"
    with pytest.raises(SnapshotError, match="has no machine"):
        snap.topology()


@pytest.mark.parametrize(
    ("option", "content", "expected"),
    [
        ("pods", None, "no such file"),
        ("pods", "{not json", "is not JSON"),
        ("kubelet_config", "a: [", "not valid YAML"),
        ("configz", "[]", "expected a mapping"),
        ("kubelet_cmdline", None, "does not exist"),
    ],
)
def test_unusable_given_files_are_errors(
    tmp_path: Path, option: str, content: str | None, expected: str
) -> None:
    path = tmp_path / "given"
    if content is not None:
        path.write_text(content)
    options = CollectOptions(root=tmp_path, kubelet_root=tmp_path, **{option: path})  # type: ignore[arg-type]
    with pytest.raises(InputError) as caught:
        collect_snapshot(options)
    assert expected in caught.value.message


def test_kubeadm_config_loads_with_every_origin(short_dir: Path) -> None:
    # kubeadm spells out every zero duration (cpuManagerReconcilePeriod: 0s); the kubelet's
    # v1beta1 defaulting reads a zero as unset, so the effective period is the 10s default.
    snap = take("kubeadm", short_dir)
    assert snap.config is not None
    assert snap.config.status == "ok"
    fields = snap.config.fields
    assert fields["cpuManagerPolicy"] == {"value": "static", "from": "file"}
    assert fields["cpuManagerReconcilePeriod"]["value"] == "10s"
    assert fields["topologyManagerScope"] == {"value": "container", "from": "default"}
    config = snap.kubelet_config()
    assert config.reserved_cpus == CPUSet.parse("0,8")
    assert config.topology_manager_policy == "single-numa-node"


def test_flags_win_over_the_file(short_dir: Path) -> None:
    snap = take("kubeadm", short_dir, flags="--topology-manager-policy=best-effort")
    assert snap.config is not None
    assert snap.config.fields["topologyManagerPolicy"]["value"] == "best-effort"
    assert snap.config.origin("topologyManagerPolicy").startswith("flag")


def test_kubeadm_flags_env_is_read_beside_config_yaml(tmp_path: Path) -> None:
    kubelet = tmp_path / "kubelet"
    shutil.copytree(NODES_DIR / "kubeadm/var/lib/kubelet", kubelet)
    (kubelet / "kubeadm-flags.env").write_text(
        'KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///run/containerd/'
        'containerd.sock --cpu-manager-policy=none"\n'
    )
    snap = collect_snapshot(CollectOptions(root=tmp_path, kubelet_root=kubelet))
    assert snap.config is not None
    assert snap.config.fields["cpuManagerPolicy"]["value"] == "none"


def test_invalid_configuration_is_recorded_not_fatal(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("kind: KubeletConfiguration\ncpuManagerPolicy: static\n")
    snap = collect_snapshot(
        CollectOptions(root=tmp_path, kubelet_root=tmp_path, kubelet_config=config)
    )
    assert snap.config is not None
    assert snap.config.status == "invalid"
    assert "reserved CPU" in snap.config.problem
    with pytest.raises(ConfigError, match="kubelet would not start"):
        snap.kubelet_config()


def test_configz_wins_and_is_recorded(tmp_path: Path) -> None:
    configz = tmp_path / "configz.json"
    configz.write_text(
        json.dumps({"kubeletconfig": {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0"}})
    )
    snap = collect_snapshot(CollectOptions(root=tmp_path, kubelet_root=tmp_path, configz=configz))
    assert snap.config is not None
    assert snap.config.fields["cpuManagerPolicy"] == {"value": "static", "from": "configz"}
    assert snap.kubelet_config().cpu_manager_policy == "static"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "does not exist"),
        (b"{", "not JSON"),
        (b"\xff\xfe", "not UTF-8"),
        (b'{"schema": "other"}', "not a node snapshot"),
        (b'{"schema": "cpumanager.io/node-snapshot", "schemaVersion": 9}', "newer cpumanager"),
        (b"[" * 100_000, "nested too deeply"),
    ],
)
def test_load_snapshot_errors(tmp_path: Path, content: bytes | None, expected: str) -> None:
    path = tmp_path / "snap.json"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(SnapshotError) as caught:
        load_snapshot(path)
    assert expected in caught.value.message
    assert "\n" not in caught.value.message


def test_load_snapshot_refuses_a_directory(tmp_path: Path) -> None:
    with pytest.raises(SnapshotError, match="not a regular file"):
        load_snapshot(tmp_path)


def test_default_socket_path_under_the_kubelet_root(short_dir: Path) -> None:
    root = short_dir / "k"
    (root / "pod-resources").mkdir(parents=True)
    with fixture_kubelet(NODES_DIR / "kubeadm", root / "pod-resources/kubelet.sock"):
        snap = collect_snapshot(CollectOptions(root=short_dir, kubelet_root=root))
    assert statuses(snap)["podResources"] == "ok"


@pytest.mark.parametrize(
    ("relative", "content", "expected"),
    [
        ("cpu_manager_state", b'{"policyName":"static","defaultCpu', "cannot decode"),
        ("memory_manager_state", b"\x00\x01garbage", "cannot decode"),
        ("device-plugins/kubelet_internal_checkpoint", b'{"Data":{},"Checksum":1}', "checksum"),
    ],
    ids=["truncated-cpu", "garbage-memory", "device-wrong-checksum"],
)
def test_broken_checkpoints_are_kept_raw_and_flagged(
    tmp_path: Path, relative: str, content: bytes, expected: str
) -> None:
    kubelet = tmp_path / "kubelet"
    shutil.copytree(NODES_DIR / "kubeadm/var/lib/kubelet", kubelet)
    (kubelet / relative).write_bytes(content)
    snap = collect_snapshot(CollectOptions(root=tmp_path, kubelet_root=kubelet))
    kind = Path(relative).name
    entry = snap.checkpoints[kind]
    assert entry.raw == content
    assert expected in entry.problem
    source = next(s for s in snap.sources if s.name == kind)
    assert source.status == "invalid"
    assert "\n" not in source.reason
    others = [s.status for s in snap.sources if s.name.endswith(("_state", "checkpoint"))]
    assert others.count("ok") == 2  # the other two checkpoints are still read


def test_a_fifo_in_place_of_a_checkpoint_does_not_hang(tmp_path: Path) -> None:
    kubelet = tmp_path / "kubelet"
    kubelet.mkdir()
    os.mkfifo(kubelet / "cpu_manager_state")
    snap = collect_snapshot(CollectOptions(root=tmp_path, kubelet_root=kubelet))
    source = next(s for s in snap.sources if s.name == "cpu_manager_state")
    assert (source.status, source.reason) == ("unreadable", "not a regular file")


def test_a_given_pods_file_may_be_a_link(tmp_path: Path) -> None:
    link = tmp_path / "pods.json"
    link.symlink_to(NODES_DIR / "kubeadm/pods.json")
    snap = collect_snapshot(CollectOptions(root=tmp_path, kubelet_root=tmp_path, pods=link))
    assert snap.pods is not None
    assert len(snap.pods) == 7


def test_a_directory_in_place_of_a_checkpoint(tmp_path: Path) -> None:
    kubelet = tmp_path / "kubelet"
    (kubelet / "cpu_manager_state").mkdir(parents=True)
    snap = collect_snapshot(CollectOptions(root=tmp_path, kubelet_root=kubelet))
    source = next(s for s in snap.sources if s.name == "cpu_manager_state")
    assert (source.status, source.reason) == ("unreadable", "not a regular file")
