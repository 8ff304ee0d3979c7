"""`simulate` takes the kubelet's configuration file exactly as kubeadm writes it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.cli.runner import run_main

DATA = Path(__file__).resolve().parent.parent / "formats" / "data" / "kubelet_configs"

SCENARIO = """
machine: {shape: 2s1n8c2t}
kubelet: {file: config.yaml}
events:
  - admit:
      metadata: {name: db}
      spec: {containers: [{name: pg, resources: {limits: {cpu: "4", memory: 1Gi}}}]}
"""


def test_simulate_accepts_kubeadms_file_unchanged(tmp_path: Path) -> None:
    shutil.copy(DATA / "kubeadm-static.yaml", tmp_path / "config.yaml")
    (tmp_path / "s.yaml").write_text(SCENARIO)
    result = run_main(["simulate", tmp_path / "s.yaml", "-o", "json"])
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.output)
    admit = report["events"][1]
    assert admit["admitted"] is True
    # static policy, reserved 0,16 and full-pcpus-only: whole cores on one NUMA node
    assert admit["containers"]["pg"]["cpus"] == "1-2,17-18"


def test_simulate_accepts_plain_kubeadm_file(tmp_path: Path) -> None:
    shutil.copy(DATA / "kubeadm.yaml", tmp_path / "config.yaml")
    (tmp_path / "s.yaml").write_text(SCENARIO)
    result = run_main(["simulate", tmp_path / "s.yaml", "-o", "json"])
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.output)
    assert json.loads(report["checkpoint"])["policyName"] == "none"  # the kubelet's default
    admit = report["events"][1]
    assert admit["admitted"] is True
    assert admit["containers"]["pg"]["exclusive"] is False
