"""`cpumanager node snapshot` as a shell sees it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.runner import run_main
from tests.nodeview.fixture_nodes import NODES_DIR

KUBEADM = NODES_DIR / "kubeadm"


def _args(node: Path, *extra: object) -> list[object]:
    return [
        "node",
        "snapshot",
        "--root",
        node,
        "--kubelet-root",
        node / "var/lib/kubelet",
        "--socket",
        node / "no.sock",
        *extra,
    ]


def test_writes_the_file_and_notes_missing_sources(tmp_path: Path) -> None:
    out = tmp_path / "snap.json"
    result = run_main(_args(KUBEADM, "--pods", KUBEADM / "pods.json", "--output-file", out))
    assert result.exit_code == 0, result.stderr
    assert result.output == ""
    assert "cpumanager: note: podResources missing: no PodResources socket" in result.stderr
    assert f"wrote snapshot {out} (7 pods)" in result.stderr
    tree = json.loads(out.read_text())
    assert tree["nodeName"] == "kubeadm-node-1"
    assert len(tree["pods"]) == 7


def test_stdout_by_default() -> None:
    result = run_main(_args(KUBEADM))
    assert result.exit_code == 0, result.stderr
    tree = json.loads(result.output)
    assert tree["schema"] == "cpumanager.io/node-snapshot"
    assert tree["pods"] is None
    assert "pods not-given" in result.stderr


def test_pod_list_from_another_node_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "snap.json"
    args = _args(
        KUBEADM, "--pods", KUBEADM / "pods.json", "--node-name", "other", "--output-file", out
    )
    result = run_main(args)
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1
    assert "this pod list is from another node" in result.stderr
    assert not out.exists()


def test_missing_pods_file_is_a_one_line_error(tmp_path: Path) -> None:
    result = run_main(_args(KUBEADM, "--pods", tmp_path / "none.json"))
    assert result.exit_code == 1
    assert result.stderr.startswith("cpumanager: error: --pods file")
    assert "Traceback" not in result.stderr


def test_node_group_lists_snapshot() -> None:
    result = run_main(["node", "--help"])
    assert result.exit_code == 0
    assert "snapshot" in result.output


def test_notes_escape_control_characters(tmp_path: Path) -> None:
    kubelet = tmp_path / "kube\x1b[31mlet"
    argv = ["node", "snapshot", "--root", tmp_path, "--kubelet-root", kubelet, "--allow-partial"]
    result = run_main(argv)
    assert result.exit_code == 0
    assert "\x1b" not in result.stderr
    assert "kube\\x1b[31mlet" in result.stderr


def test_flags_and_configz_reach_the_file(tmp_path: Path) -> None:
    configz = tmp_path / "configz.json"
    configz.write_text('{"kubeletconfig": {"cpuManagerPolicy": "none"}}')
    flagged = run_main(_args(KUBEADM, "--flags", "--cpu-manager-policy=none"))
    assert flagged.exit_code == 0, flagged.stderr
    fields = json.loads(flagged.output)["config"]["fields"]
    assert fields["cpuManagerPolicy"]["value"] == "none"
    assert fields["cpuManagerPolicy"]["from"].startswith("flag")
    live = run_main(_args(KUBEADM, "--configz", configz))
    assert json.loads(live.output)["config"]["fields"]["cpuManagerPolicy"]["from"] == "configz"


def test_unreadable_machine_fails_unless_partial_is_allowed(tmp_path: Path) -> None:
    out = tmp_path / "snap.json"
    missing = tmp_path / "nonexistent"
    result = run_main(["node", "snapshot", "--root", missing, "--output-file", out])
    assert result.exit_code == 1
    assert (
        result.stderr.strip().splitlines()[-1].startswith("cpumanager: error: cannot read machine")
    )
    assert "--allow-partial" in result.stderr
    assert not out.exists()
    kept = run_main(
        ["node", "snapshot", "--root", missing, "--output-file", out, "--allow-partial"]
    )
    assert kept.exit_code == 0, kept.stderr
    assert json.loads(out.read_text())["machine"] is None


def test_unreadable_checkpoint_fails_with_its_cause(tmp_path: Path) -> None:
    import shutil

    node = tmp_path / "node"
    shutil.copytree(KUBEADM, node)
    state = node / "var/lib/kubelet/cpu_manager_state"
    state.unlink()
    state.mkdir()  # there, but not a file the kubelet (or we) can read
    result = run_main(_args(node))
    assert result.exit_code == 1
    assert "cpu_manager_state (unreadable" in result.stderr


def test_corrupt_checkpoint_is_read_not_refused(tmp_path: Path) -> None:
    node = NODES_DIR / "corrupt-checkpoint"
    result = run_main(_args(node, "--output-file", tmp_path / "snap.json"))
    assert result.exit_code == 0, result.stderr
    assert "checksum mismatch" in result.stderr


def test_yaml_format_to_stdout() -> None:
    import yaml

    result = run_main(_args(KUBEADM, "-o", "yaml"))
    assert result.exit_code == 0, result.stderr
    assert yaml.safe_load(result.output)["nodeName"] == "kubeadm-node-1"


def test_the_machine_is_the_kubelets_view_unless_the_kernels_is_asked(tmp_path: Path) -> None:
    import shutil

    node = tmp_path / "node"
    shutil.copytree(KUBEADM, node, symlinks=True)
    for core_id in (node / "sys/devices/system/cpu").glob("cpu[0-9]*/topology/core_id"):
        core_id.write_text("0\n")  # as on s390: cadvisor makes one core per package

    def cores(*extra: object) -> set[int]:
        result = run_main(_args(node, *extra))
        assert result.exit_code == 0, result.stderr
        return {cpu["core"] for cpu in json.loads(result.output)["machine"]["cpus"]}

    # the kubeadm node: 2 packages of 4 cores x 2 threads
    assert (len(cores()), len(cores("--topology-view", "kernel"))) == (2, 8)
