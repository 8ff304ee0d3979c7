"""Reading the kubelet's configuration sources: bounded, regular files, no links out."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cpumanager.adapters import kubelet_config_file as sources
from cpumanager.adapters.kubelet_config_file import (
    load_effective_config,
    read_drop_in_dir,
    read_systemd_unit_argv,
)
from cpumanager.errors import ConfigError, InputError


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_drop_ins_walk_in_the_kubelets_order(tmp_path: Path) -> None:
    d = tmp_path / "conf.d"
    write(d / "20-b.conf", "maxPods: 20")
    write(d / "10-a.conf", "maxPods: 10")
    write(d / "15" / "01-nested.conf", "maxPods: 15")  # WalkDir descends in lexical order
    write(d / "30-c.yaml", "maxPods: 30")  # not *.conf
    names = [source.name for source in read_drop_in_dir(d)]
    assert names == ["10-a.conf", "15/01-nested.conf", "20-b.conf"]
    assert load_effective_config(config_dir=d).config.max_pods == 20


def test_a_drop_in_linking_out_is_refused(tmp_path: Path) -> None:
    outside = write(tmp_path / "secret.conf", "maxPods: 1")
    d = tmp_path / "conf.d"
    d.mkdir()
    (d / "10-link.conf").symlink_to(outside)
    with pytest.raises(InputError, match="links out of"):
        read_drop_in_dir(d)
    inside = write(d / "real.txt", "maxPods: 7")
    (d / "10-link.conf").unlink()
    (d / "10-link.conf").symlink_to(inside)
    assert load_effective_config(config_dir=d).config.max_pods == 7


def test_non_regular_and_huge_files_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="is not a regular file"):
        load_effective_config(config=fifo)
    with pytest.raises(InputError, match="is not a regular file"):
        load_effective_config(config=tmp_path)
    monkeypatch.setattr(sources, "MAX_FILE_BYTES", 64)
    big = write(tmp_path / "big.yaml", "# " + "x" * 100)
    with pytest.raises(InputError, match="is larger than 64 bytes"):
        load_effective_config(config=big)


def test_missing_sources(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not exist"):
        load_effective_config(config=tmp_path / "nope.yaml")
    with pytest.raises(InputError, match="failed to walk through kubelet dropin directory"):
        load_effective_config(config_dir=tmp_path / "nope.d")
    with pytest.raises(InputError, match="is not UTF-8"):
        load_effective_config(config=_binary(tmp_path))


def _binary(tmp_path: Path) -> Path:
    path = tmp_path / "bin.yaml"
    path.write_bytes(b"\xff\xfe\x00")
    return path


def test_bad_yaml_and_configz_json(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not valid YAML or JSON at line"):
        load_effective_config(config=write(tmp_path / "k.yaml", "cpuManagerPolicy: ["))
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_effective_config(configz=write(tmp_path / "configz.json", "{"))


def test_unit_without_exec_start(tmp_path: Path) -> None:
    unit = write(tmp_path / "kubelet.service", "[Service]\nRestart=always\n")
    with pytest.raises(ConfigError, match="has no ExecStart="):
        read_systemd_unit_argv(unit)


def test_unit_env_files_under_root(tmp_path: Path) -> None:
    unit = write(
        tmp_path / "lib/kubelet.service",
        "[Service]\nEnvironmentFile=/etc/kubelet.env\nEnvironmentFile=-/etc/absent\n"
        "ExecStart=/usr/bin/kubelet $ARGS\n",
    )
    write(tmp_path / "etc/kubelet.env", "ARGS=--max-pods=12 --config=/k.yaml\n")
    write(tmp_path / "k.yaml", "cpuManagerPolicy: none\n")
    assert read_systemd_unit_argv(unit, root=tmp_path) == [
        "/usr/bin/kubelet",
        "--max-pods=12",
        "--config=/k.yaml",
    ]
    effective = load_effective_config(systemd_unit=unit, root=tmp_path)
    assert effective.config.max_pods == 12
    assert effective.sources[0] == f"file {tmp_path / 'k.yaml'}"
    (tmp_path / "etc/kubelet.env").unlink()
    with pytest.raises(InputError, match="does not exist"):  # no '-': required
        read_systemd_unit_argv(unit, root=tmp_path)


def test_command_line_file_and_extra_flags(tmp_path: Path) -> None:
    cmdline = tmp_path / "cmdline"
    cmdline.write_bytes(b"/usr/bin/kubelet\0--max-pods=5\0--cpu-manager-policy=none\0")
    effective = load_effective_config(kubelet_cmdline=cmdline, flags=["--max-pods=6"])
    assert effective.config.max_pods == 6  # the explicit flags come last


def test_unit_drop_ins_from_every_systemd_directory(tmp_path: Path) -> None:
    unit = write(
        tmp_path / "usr/lib/systemd/system/kubelet.service",
        "[Service]\nExecStart=/usr/bin/kubelet $A $B\n",
    )
    write(tmp_path / "usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf",
          '[Service]\nEnvironment="A=--max-pods=1"\n')  # fmt: skip
    write(tmp_path / "usr/lib/systemd/system/kubelet.service.d/20-x.conf",
          '[Service]\nEnvironment="B=--pods-per-core=1"\n')  # fmt: skip
    # /etc masks the vendor drop-in of the same name, and adds its own in name order
    write(tmp_path / "etc/systemd/system/kubelet.service.d/20-x.conf",
          '[Service]\nEnvironment="B=--pods-per-core=2"\n')  # fmt: skip
    write(tmp_path / "etc/systemd/system/kubelet.service.d/30-extra.conf",
          '[Service]\nEnvironment="A=--max-pods=3"\n')  # fmt: skip
    assert read_systemd_unit_argv(unit, root=tmp_path) == [
        "/usr/bin/kubelet",
        "--max-pods=3",
        "--pods-per-core=2",
    ]


def test_a_copied_unit_brings_only_its_own_drop_ins(tmp_path: Path) -> None:
    unit = write(tmp_path / "copy/kubelet.service", "[Service]\nExecStart=/usr/bin/kubelet $A\n")
    write(tmp_path / "copy/kubelet.service.d/10.conf", '[Service]\nEnvironment="A=--max-pods=1"\n')
    write(tmp_path / "etc/systemd/system/kubelet.service.d/20.conf",
          '[Service]\nEnvironment="A=--max-pods=2"\n')  # fmt: skip
    assert read_systemd_unit_argv(unit, root=tmp_path) == ["/usr/bin/kubelet", "--max-pods=1"]
