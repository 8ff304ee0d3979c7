"""`cpumanager topology`: outputs, the JSON machine format, --save/--machine FILE, errors, lscpu."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from cpumanager.formats.machine_format import topology_to_dict
from cpumanager.presets import get_preset
from tests.adapters.sysfs_tree import regular
from tests.cli.runner import Run, run_main


def run(*args: str | Path) -> Run:
    return run_main(args)


def assert_one_line_error(result: Run, code: int, text: str) -> None:
    assert result.exit_code == code, result.output + result.stderr
    lines = result.stderr.strip().splitlines()
    assert "Traceback" not in result.stderr
    assert any(text in line for line in lines), result.stderr
    if code == 1:
        assert len(lines) == 1
        assert lines[0].startswith("cpumanager: error: ")


# --- version, help, listing ---------------------------------------------------------------


def test_version_and_help() -> None:
    assert run("--version").output.startswith("cpumanager, version ")
    assert "topology" in run("--help").output
    helped = run("topology", "--help")
    assert helped.exit_code == 0
    for flag in ("--sysfs", "--machine", "--output", "--save", "--list"):
        assert flag in helped.output


def test_list_presets() -> None:
    result = run("topology", "--list")
    assert result.exit_code == 0
    for name in ("topoDualSocketHT", "dual-socket-ht", "gb200-tray", "epyc-7763-2s-nps4"):
        assert name in result.output
    listed = json.loads(run("topology", "--list", "-o", "json").output)
    assert len(listed) == 30
    assert {"name", "aliases", "kind", "summary"} == set(listed[0])
    assert yaml.safe_load(run("topology", "--list", "-o", "yaml").output)[0]["name"]


# --- outputs --------------------------------------------------------------------------------


def test_json_is_the_machine_format() -> None:
    result = run("topology", "--machine", "dual-socket-ht", "-o", "json")
    assert result.exit_code == 0
    assert result.output.count("\n") == 1  # one compact object
    data = json.loads(result.output)
    assert set(data) == {"name", "cpus", "numa_nodes", "distances", "counters"}
    assert data["cpus"][1] == {"cpu": 1, "socket": 1, "numa": 1, "core": 1, "l3": 0}
    assert data["numa_nodes"][0] == {"id": 0, "memory_bytes": None, "cpus": "0,2,4,6,8,10"}
    assert data == json.loads(json.dumps(topology_to_dict(get_preset("dual-socket-ht"))))


def test_yaml_equals_json() -> None:
    as_json = json.loads(run("topology", "--machine", "gb200", "-o", "json").output)
    as_yaml = yaml.safe_load(run("topology", "--machine", "gb200", "-o", "yaml").output)
    assert as_yaml == as_json
    assert len(as_json["numa_nodes"]) == 34
    assert as_json["distances"]["0"]["33"] == 120


def test_table_picture() -> None:
    result = run("topology", "--machine", "2s2n2c2t")
    assert result.exit_code == 0
    out = result.output
    for text in ("16 CPUs", "socket 1", "NUMA node 3", "L3 3", "cores id:[threads]", "0:[0,8]"):
        assert text in out
    assert "NUMA distances" in out
    assert "│ 12" in out


def test_table_shows_memory_only_nodes_counters_and_big_matrices() -> None:
    gb200 = run("topology", "--machine", "gb200-tray").output
    assert "memory-only NUMA nodes" in gb200
    assert "NUMA nodes 2,10,18,26  (186 GiB each)" in gb200
    assert "34x34 matrix" in gb200
    fixture = run("topology", "--machine", "topoDualSocketHT").output
    assert "declared counters" in fixture
    assert "memory unknown" in fixture


def test_sysfs_tree_and_warnings(tmp_path: Path) -> None:
    tree = regular(tmp_path, sockets=1, cores=4, threads=1, numa=False)
    tree.node(0, "0-2", memory_kb=1024)
    table = run("topology", "--sysfs", tmp_path, "--topology-view", "kernel")
    assert table.exit_code == 0
    assert "warning: CPUs 3 are in no NUMA node" in table.output
    data = json.loads(
        run("topology", "--sysfs", tmp_path, "--topology-view", "kernel", "-o", "json").output
    )
    assert [c["numa"] for c in data["cpus"]] == [0, 0, 0, 0]
    assert data["numa_nodes"][0]["memory_bytes"] == 1 << 20
    assert data["warnings"] == ["CPUs 3 are in no NUMA node; put them in node 0"]


# --- save and load --------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".json", ".yaml", ".yml"])
def test_save_then_load_machine_file(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"box{suffix}"
    saved = run("topology", "--machine", "epyc-nps4", "-o", "json", "--save", path)
    assert saved.exit_code == 0
    assert "saved machine file" in saved.stderr
    loaded = run("topology", "--machine", path, "-o", "json")
    assert loaded.exit_code == 0
    assert json.loads(loaded.output) == json.loads(saved.output)
    if suffix != ".json":
        assert path.read_text().startswith("name: epyc-7763-2s-nps4")


def test_machine_file_without_name_takes_the_file_stem(tmp_path: Path) -> None:
    data = topology_to_dict(get_preset("1s1n2c1t"))
    data["name"] = ""
    path = tmp_path / "lab-box.json"
    path.write_text(json.dumps(data))
    assert json.loads(run("topology", "--machine", path, "-o", "json").output)["name"] == "lab-box"


# --- errors ---------------------------------------------------------------------------------


def test_unknown_machine_is_one_line() -> None:
    result = run("topology", "--machine", "no-such-box")
    assert_one_line_error(result, 1, "unknown machine 'no-such-box'")


def test_missing_sysfs_root_is_one_line(tmp_path: Path) -> None:
    assert_one_line_error(run("topology", "--sysfs", tmp_path / "x"), 1, "does not exist")


def test_sysfs_and_machine_together_is_a_usage_error(tmp_path: Path) -> None:
    result = run("topology", "--sysfs", tmp_path, "--machine", "dual-socket-ht")
    assert_one_line_error(result, 2, "either --sysfs or --machine")


def test_bad_output_choice_is_a_usage_error() -> None:
    assert run("topology", "-o", "xml").exit_code == 2


BAD_FILES = [
    ("bad.json", "{", "not valid JSON"),
    ("bad.yaml", "cpus: [", "not valid YAML"),
    ("list.yaml", "- 1\n- 2\n", "must hold a mapping"),
    ("empty.json", '{"cpus": []}', "at least one CPU"),
    ("odd.yaml", "cpus:\n- {cpu: 0}\n", "lacks socket"),
]


@pytest.mark.parametrize(("name", "text", "message"), BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_bad_machine_files_are_one_line(tmp_path: Path, name: str, text: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    result = run("topology", "--machine", path)
    assert_one_line_error(result, 1, message)
    assert str(path) in result.stderr


def test_missing_machine_file_is_one_line(tmp_path: Path) -> None:
    result = run("topology", "--machine", tmp_path / "gone.yaml")
    assert_one_line_error(result, 1, "does not exist")


def test_unwritable_save_path_is_one_line(tmp_path: Path) -> None:
    target = tmp_path / "dir.json"
    target.mkdir()
    result = run("topology", "--machine", "dual-socket-ht", "--save", target)
    assert result.exit_code in (1, 2)  # click may refuse a directory before we try
    assert "Traceback" not in result.stderr


# --- this host against lscpu ----------------------------------------------------------------


def _partition(rows: list[list[str]], column: int) -> set[frozenset[int]]:
    groups: dict[str, set[int]] = {}
    for row in rows:
        groups.setdefault(row[column], set()).add(int(row[0]))
    return {frozenset(g) for g in groups.values()}


def _ours(data: dict, key: str) -> set[frozenset[int]]:
    groups: dict[int, set[int]] = {}
    for rec in data["cpus"]:
        groups.setdefault(rec[key], set()).add(rec["cpu"])
    return {frozenset(g) for g in groups.values()}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs Linux sysfs")
@pytest.mark.skipif(shutil.which("lscpu") is None, reason="lscpu is not installed")
def test_this_host_agrees_with_lscpu() -> None:
    if not Path("/sys/devices/system/cpu").is_dir():
        pytest.skip("no /sys/devices/system/cpu on this host")
    listed = subprocess.run(
        ["lscpu", "-p=CPU,CORE,SOCKET,NODE"], capture_output=True, text=True, check=True
    ).stdout
    rows = [line.split(",") for line in listed.splitlines() if line and not line.startswith("#")]
    result = run("topology", "-o", "json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.output)
    assert sorted(rec["cpu"] for rec in data["cpus"]) == sorted(int(r[0]) for r in rows)
    # lscpu numbers cores and sockets its own way: compare the groupings, not the ids.
    assert _ours(data, "core") == _partition(rows, 1)
    assert _ours(data, "socket") == _partition(rows, 2)
    if all(r[3] != "" for r in rows):
        assert _ours(data, "numa") == _partition(rows, 3)
    else:
        assert len(_ours(data, "numa")) == 1


def test_the_kubelets_view_is_the_default_and_kernel_a_switch(tmp_path: Path) -> None:
    tree = regular(tmp_path, sockets=1, cores=4, threads=1, numa=False)
    tree.node(0, "0-2", memory_kb=1024)
    kubelet = run("topology", "--sysfs", tmp_path, "-o", "json")
    kernel = run("topology", "--sysfs", tmp_path, "--topology-view", "kernel", "-o", "json")
    assert kubelet.exit_code == kernel.exit_code == 0
    # cadvisor reads node0's links only; the kernel view puts CPU 3 in node 0
    assert [c["cpu"] for c in json.loads(kubelet.output)["cpus"]] == [0, 1, 2]
    assert [c["cpu"] for c in json.loads(kernel.output)["cpus"]] == [0, 1, 2, 3]
    bad = run("topology", "--sysfs", tmp_path, "--topology-view", "hwloc")
    assert bad.exit_code == 2
