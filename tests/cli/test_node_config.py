"""`cpumanager node config`: each field with its origin, or every error the kubelet gives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from tests.cli.runner import Run, run_main

DATA = Path(__file__).resolve().parent.parent / "formats" / "data" / "kubelet_configs"


HEADER = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"


def run(*args: str | Path) -> Run:
    return run_main(["node", "config", *args], env={"COLUMNS": "80"})


def test_json_fields_and_origins() -> None:
    result = run(
        "--kubelet-config", DATA / "kubeadm-static.yaml", "--flags", "--max-pods=50", "-o", "json"
    )
    assert result.exit_code == 0, result.stderr
    doc: dict[str, Any] = json.loads(result.output)
    assert doc["valid"] is True
    fields = doc["fields"]
    assert fields["cpuManagerPolicy"] == {"value": "static", "from": "file"}
    assert fields["cpuManagerReconcilePeriod"] == {"value": "10s", "from": "default"}
    assert fields["reservedSystemCPUs"] == {"value": "0,16", "from": "file"}
    assert fields["maxPods"] == {"value": 50, "from": "flag --max-pods"}
    assert doc["rootDir"] == {"value": "/var/lib/kubelet", "from": "default"}
    assert doc["sources"] == [f"file {DATA / 'kubeadm-static.yaml'}", "flags"]


def test_yaml_from_a_systemd_unit(tmp_path: Path) -> None:
    import shutil

    root = tmp_path / "node"
    shutil.copytree(DATA / "kubeadm-node", root)
    unit = root / "usr/lib/systemd/system/kubelet.service"
    result = run("--systemd-unit", unit, "--root", root, "-o", "yaml")
    assert result.exit_code == 0, result.stderr
    doc = yaml.safe_load(result.output)
    assert doc["fields"]["cpuManagerPolicy"] == {
        "value": "static",
        "from": "flag --cpu-manager-policy",
    }


def test_table_reads_at_80_columns() -> None:
    result = run("--config-dir", DATA / "k3s" / "kubelet.conf.d")
    assert result.exit_code == 0, result.stderr
    lines = result.output.splitlines()
    assert lines[0].startswith("sources: drop-in 00-k3s-defaults.conf")
    row = next(line for line in lines if line.startswith("topologyManagerPolicy "))
    assert row.split() == ["topologyManagerPolicy", "restricted", "drop-in", "99-override.conf"]
    assert max(len(line) for line in lines[2:]) <= 80


def test_the_first_stage_that_refuses_and_exit_1() -> None:
    # The kubelet stops at validation: the manager's refusal of "Static" never comes.
    flags = "--cpu-manager-policy=Static --topology-manager-policy=strict"
    result = run("--flags", flags, "-o", "json")
    assert result.exit_code == 1
    doc = json.loads(result.output)
    assert doc["valid"] is False
    assert doc["stage"] == "validates"
    assert [e.split(":")[0] for e in doc["errors"]] == ["invalid configuration"]
    assert doc["kubelet"].startswith("failed to validate kubelet configuration, error: ")
    starts = run("--flags", "--cpu-manager-policy=Static")
    assert starts.exit_code == 1
    assert starts.output == ""
    assert "the kubelet would refuse this configuration (kubelet 1.37, stage: starts):" in (
        starts.stderr
    )
    assert 'unknown policy: "Static"' in starts.stderr
    doc = json.loads(run("--flags", "--cpu-manager-policy=Static", "-o", "json").output)
    assert doc["stage"] == "starts"
    assert doc["kubelet"] == 'failed to run Kubelet: unknown policy: "Static"'


def test_bad_input_is_one_line() -> None:
    result = run("--flags", "--kube-reserved=cpu", "-o", "json")
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("cpumanager: error: invalid argument")
    missing = run("--kubelet-config", "/nonexistent/config.yaml")
    assert missing.exit_code == 1
    assert "does not exist" in missing.stderr
    assert "Traceback" not in missing.stderr


def test_control_characters_are_escaped(tmp_path: Path) -> None:
    path = tmp_path / "k.yaml"
    path.write_text(f'{HEADER}cgroupRoot: "/\\x1b[31mred"\n')
    result = run("--kubelet-config", path)
    assert result.exit_code == 0, result.stderr
    assert "\x1b" not in result.output
    assert "\\x1b[31mred" in result.output


def test_node_group_lists_config() -> None:
    result = run_main(["node", "--help"])
    assert result.exit_code == 0
    assert "config" in result.output


def test_kubelet_version_picks_the_releases_defaults() -> None:
    signals = {}
    for version in ("1.29", "1.32"):
        result = run("--flags", "--max-pods=50", "--kubelet-version", version, "-o", "json")
        assert result.exit_code == 0, result.stderr
        doc = json.loads(result.output)
        assert doc["kubeletVersion"] == version
        signals[version] = doc["fields"]["evictionHard"]["value"]
    assert "imagefs.inodesFree" not in signals["1.29"]
    assert signals["1.32"]["imagefs.inodesFree"] == "5%"


def test_kubelet_version_picks_the_releases_checks(tmp_path: Path) -> None:
    path = tmp_path / "k.yaml"
    path.write_text(HEADER + "imageMaximumGCAge: 3m\n")
    alpha = run("--kubelet-config", path, "--kubelet-version", "1.29", "-o", "json")
    assert alpha.exit_code == 1
    doc = json.loads(alpha.output)
    assert doc["stage"] == "validates"
    assert doc["kubelet"] == (
        "failed to validate kubelet configuration, error: invalid configuration: "
        "ImageMaximumGCAge feature gate is required for Kubelet configuration option "
        "imageMaximumGCAge"
    )
    assert run("--kubelet-config", path, "--kubelet-version", "1.30").exit_code == 0
    bad = run("--kubelet-config", path, "--kubelet-version", "2.0")
    assert bad.exit_code != 0
    assert "outside the releases modelled" in bad.stderr


def test_what_the_kubelet_refuses_while_loading(tmp_path: Path) -> None:
    cases = {
        "": "was empty",
        "# only a comment\n": "Object 'Kind' is missing in '# only a comment\n'",
        "{kind: KubeletConfiguration}\n": "invalid character 'k' looking for beginning of object",
        "apiVersion: kubelet.config.k8s.io/v2\nkind: KubeletConfiguration\n": 'no kind "Kubelet',
        HEADER + "featureGates:\n  NoSuchGate: true\n": "unrecognized feature gate: NoSuchGate",
    }
    for text, detail in cases.items():
        path = tmp_path / "k.yaml"
        path.write_text(text)
        result = run("--kubelet-config", path, "--kubelet-version", "1.32", "-o", "json")
        assert result.exit_code == 1, text
        doc = json.loads(result.output)
        assert doc["stage"] == "loads", text
        assert detail in doc["errors"][0], text


def test_what_the_kubelet_refuses_when_it_validates(tmp_path: Path) -> None:
    path = tmp_path / "k.yaml"
    path.write_text(
        HEADER + "shutdownGracePeriod: 500ms\nnodeLeaseDurationSeconds: -1\nhairpinMode: veth\n"
        "runOnce: true\ncpuManagerPolicy: Static\n"
    )
    result = run("--kubelet-config", path, "--kubelet-version", "1.32")
    assert result.exit_code == 1
    assert "(kubelet 1.32, stage: validates):" in result.stderr
    for text in (
        "nodeLeaseDurationSeconds must be greater than 0",
        "runOnce (--runOnce) true",
        "shutdownGracePeriod {500ms} must be either zero or otherwise >= 1 sec",
        'option "veth" specified for hairpinMode',
    ):
        assert text in result.stderr
    assert "unknown policy" not in result.stderr  # the managers are never built


def test_negative_durations_load(tmp_path: Path) -> None:
    path = tmp_path / "k.yaml"
    path.write_text(HEADER + "cpuManagerReconcilePeriod: -5s\n")
    result = run("--kubelet-config", path, "-o", "json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.output)["fields"]["cpuManagerReconcilePeriod"]["value"] == "-5s"
