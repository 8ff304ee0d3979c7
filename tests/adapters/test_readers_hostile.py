"""Issue 21: every node reader hardened. sysfs files that block, never end or are huge;
configuration paths that climb out of --root; a config.yaml that is not a regular file."""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cpumanager.adapters.kubelet_config_file import load_effective_config, read_systemd_unit_argv
from cpumanager.adapters.node_collect import CollectOptions, collect_snapshot
from cpumanager.adapters.sysfs import SysfsReader
from cpumanager.core import limits
from cpumanager.errors import ConfigError, InputError, MachineError
from tests.adapters.sysfs_tree import SysfsTree
from tests.nodeview.fixture_nodes import NODES_DIR


def finishes(work: Callable[[], Any], seconds: float = 30.0) -> Any:
    """``work()``'s result; fails (instead of hanging the suite) when it never returns."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:  # handed to the test below
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "the reader blocked"
    if "error" in box:
        raise box["error"]
    return box["value"]


def two_cpus(root: Path) -> SysfsTree:
    tree = SysfsTree(root).online("0-1")
    tree.cpu(0, core_id=0, siblings="0")
    tree.cpu(1, core_id=1, siblings="1")
    return tree


def core_id(root: Path, cpu: int) -> Path:
    return root / f"sys/devices/system/cpu/cpu{cpu}/topology/core_id"


# --- 7: sysfs ------------------------------------------------------------------------------


def test_7_a_fifo_in_sysfs_is_a_warning_not_a_hang(tmp_path: Path) -> None:
    two_cpus(tmp_path)
    path = core_id(tmp_path, 1)
    path.unlink()
    os.mkfifo(path)
    topology = finishes(lambda: SysfsReader(tmp_path, view="kernel").read())
    assert len(topology.all_cpus) == 2
    assert any("core_id" in w and "not a regular file" in w for w in topology.warnings)


def test_7_a_link_to_a_device_is_a_warning(tmp_path: Path) -> None:
    two_cpus(tmp_path)
    path = core_id(tmp_path, 0)
    path.unlink()
    path.symlink_to("/dev/zero")
    topology = finishes(lambda: SysfsReader(tmp_path, view="kernel").read())
    assert any("not a regular file" in w for w in topology.warnings)


def test_7_a_huge_sysfs_file_is_not_read_whole(tmp_path: Path) -> None:
    two_cpus(tmp_path)
    path = core_id(tmp_path, 0)
    with path.open("wb") as handle:  # sparse: no disk, but read() would return it all
        handle.truncate(limits.MAX_SYSFS_FILE_BYTES + 1)
    topology = finishes(lambda: SysfsReader(tmp_path, view="kernel").read())
    assert any("larger than" in w for w in topology.warnings)


def test_7_more_numa_nodes_than_the_cap_are_refused(tmp_path: Path) -> None:
    two_cpus(tmp_path)
    for node in range(limits.MAX_NUMA_NODES + 1):
        (tmp_path / f"sys/devices/system/node/node{node}").mkdir(parents=True)
    with pytest.raises(MachineError, match="NUMA nodes, over the limit"):
        SysfsReader(tmp_path, view="kernel").read()


# --- 9: confinement to --root ------------------------------------------------------------------


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.mark.parametrize("climb", ["/.." * 40 + "/", "/etc" + "/.." * 41 + "/", "/./" + "../" * 40])
def test_9_environment_files_cannot_climb_out_of_root(tmp_path: Path, climb: str) -> None:
    root, outside = tmp_path / "root", tmp_path / "secret.env"
    write(outside, "ARGS=--max-pods=99\n")
    unit = write(
        root / "lib/kubelet.service",
        f"[Service]\nEnvironmentFile={climb}{outside.relative_to('/')}\n"
        "ExecStart=/usr/bin/kubelet $ARGS\n",
    )
    with pytest.raises(InputError, match="does not exist"):
        read_systemd_unit_argv(unit, root=root)
    # The same path, inside the root, is what it names.
    write(root / outside.relative_to("/"), "ARGS=--max-pods=12\n")
    assert read_systemd_unit_argv(unit, root=root)[1] == "--max-pods=12"


def test_9_config_named_by_a_flag_cannot_climb_out_of_root(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside.yaml"
    write(outside, "kind: KubeletConfiguration\nmaxPods: 99\n")
    root.mkdir()
    flags = ["--config=" + "/.." * 40 + str(outside)]
    with pytest.raises(InputError, match="does not exist"):
        load_effective_config(flags=flags, root=root)


def test_9_a_link_out_of_root_is_refused(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside.yaml"
    write(outside, "kind: KubeletConfiguration\nmaxPods: 99\n")
    (root / "etc").mkdir(parents=True)
    (root / "etc/kubelet.yaml").symlink_to(outside)
    with pytest.raises(InputError, match="links out of"):
        load_effective_config(flags=["--config=/etc/kubelet.yaml"], root=root)
    (root / "etc/conf.d").symlink_to(tmp_path)
    with pytest.raises(InputError, match="links out of"):
        load_effective_config(flags=["--config-dir=/etc/conf.d"], root=root)


# --- 10: /configz nesting -----------------------------------------------------------------


@pytest.mark.parametrize("text", ["[" * 100_000, "[" * 3_000 + "]" * 3_000], ids=["open", "deep"])
def test_10_a_deep_configz_is_a_config_error(tmp_path: Path, text: str) -> None:
    configz = write(tmp_path / "configz.json", text)
    with pytest.raises(ConfigError, match="nested"):
        load_effective_config(configz=configz)


# --- 11: config.yaml that is not a regular file -------------------------------------------


def kubelet_root(tmp_path: Path) -> Path:
    kubelet = tmp_path / "kubelet"
    shutil.copytree(NODES_DIR / "kubeadm/var/lib/kubelet", kubelet)
    return kubelet


def test_11_a_fifo_config_yaml_is_invalid_not_missing(tmp_path: Path) -> None:
    kubelet = kubelet_root(tmp_path)
    (kubelet / "config.yaml").unlink()
    os.mkfifo(kubelet / "config.yaml")
    snap = finishes(lambda: collect_snapshot(CollectOptions(root=tmp_path, kubelet_root=kubelet)))
    assert snap.config is not None
    assert snap.config.status == "invalid"
    assert "not a regular file" in snap.config.problem


def test_11_a_linked_config_yaml_is_read(tmp_path: Path) -> None:
    kubelet = kubelet_root(tmp_path)
    real = tmp_path / "real-config.yaml"
    (kubelet / "config.yaml").rename(real)
    (kubelet / "config.yaml").symlink_to(real)
    snap = collect_snapshot(CollectOptions(root=tmp_path, kubelet_root=kubelet))
    assert snap.config is not None
    assert snap.config.status == "ok"
    assert snap.config.fields["cpuManagerPolicy"]["value"] == "static"


def test_11_a_dangling_config_yaml_link_is_invalid(tmp_path: Path) -> None:
    kubelet = kubelet_root(tmp_path)
    (kubelet / "config.yaml").unlink()
    (kubelet / "config.yaml").symlink_to(tmp_path / "nowhere.yaml")
    snap = collect_snapshot(CollectOptions(root=tmp_path, kubelet_root=kubelet))
    assert snap.config is not None
    assert snap.config.status == "invalid"


def test_9_names_too_long_for_the_system_are_absent_or_refused(tmp_path: Path) -> None:
    # Found by the source fuzzer: stat() of a name past PATH_MAX raised an OSError.
    long = "/" + "x" * 300 + ("/" + "y" * 250) * 20
    unit = write(
        tmp_path / "lib/kubelet.service",
        f"[Service]\nEnvironmentFile=-{long}\nExecStart=/usr/bin/kubelet --max-pods=7\n",
    )
    assert read_systemd_unit_argv(unit, root=tmp_path) == ["/usr/bin/kubelet", "--max-pods=7"]
    with pytest.raises(InputError):
        load_effective_config(flags=[f"--config-dir={long}"], root=tmp_path)
    with pytest.raises(InputError):
        load_effective_config(flags=[f"--config={long}"], root=tmp_path)
