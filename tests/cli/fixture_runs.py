"""Every result-printing command, run on the shipped fixtures: for the output convention
(JSON keys, ``tests/cli/test_conventions.py``) and the 80-column tables
(``tests/cli/test_80_columns.py``).

:func:`prepared` builds the workspace once per session: snapshots of the fixture nodes,
a small generated fleet, pod files and copies of checkpoints. Each :class:`Case` names its
command and the arguments (``{name}`` placeholders are workspace paths).
"""

from __future__ import annotations

import functools
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from cpumanager.nodeview.snapshot import snapshot_to_json
from tests.fleet.generate import guaranteed_pod_yaml, write_snapshots
from tests.nodeanswers.snapshots import fixture_snapshot
from tests.nodeview.fixture_nodes import NODES_DIR

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
KUBELET = NODES_DIR / "kubeadm" / "var/lib/kubelet"

_POD = """apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default}}
spec:
  containers:
  - name: app
    resources:
      requests: {{cpu: "{cpu}", memory: 1Gi}}
      limits: {{cpu: "{cpu}", memory: 1Gi}}
"""


@dataclass(frozen=True)
class Case:
    name: str
    command: str  # the click command ("node show")
    args: tuple[str, ...]
    codes: tuple[int, ...] = (0,)
    lines: bool = False  # JSON lines (one object a line)
    formats: tuple[str, ...] = ("table", "wide", "json", "yaml")

    def argv(self, where: Path, fmt: str) -> list[str]:
        args = [a.format(w=where, ex=EXAMPLES, kubelet=KUBELET) for a in self.args]
        extra = ["-o", fmt] if fmt and self.command not in _NO_O else []
        return [*self.command.split(), *args, *extra]


_NO_O = {"compute take", "compute hints", "compute merge"}


def _cases() -> list[Case]:
    cases = [
        Case("topology", "topology", ("--machine", "dual-socket-ht")),
        Case("topology-list", "topology", ("--list",)),
        Case("state-inspect", "state inspect", ("{kubelet}/cpu_manager_state",)),
        Case("state-inspect-memory", "state inspect", ("{kubelet}/memory_manager_state",)),
        Case("state-verify", "state verify", ("{kubelet}/cpu_manager_state", "--machine",
             "{w}/machine.json", "--policy", "static", "--reserved-cpus", "0,8")),
        Case("state-diff", "state diff", ("{w}/state-a", "{w}/state-b")),
        Case("state-rewrite", "state rewrite", ("{kubelet}/cpu_manager_state",
             "--output-file", "{w}/rewritten")),
        Case("state-migrate", "state migrate", ("{w}/v1-state", "--containers",
             "{w}/map.json", "--output-file", "{w}/migrated")),
        Case("node-snapshot", "node snapshot", ("--root", str(NODES_DIR / "kubeadm"),
             "--kubelet-root", "{kubelet}", "--socket", "{w}/no.sock"),
             formats=("json", "yaml")),
        Case("node-config", "node config", ("--kubelet-config", "{kubelet}/config.yaml")),
        Case("node-preflight", "node preflight", ("{w}/kubeadm.json", "--flags",
             "--cpu-manager-policy=none"), codes=(1,)),
        Case("node-recover", "node recover", ("{w}/corrupt-checkpoint.json",)),
        Case("node-nrt", "node nrt", ("{w}/kubeadm.json",), formats=("json", "yaml")),
        Case("node-nrt-degraded", "node nrt", ("{w}/corrupt-checkpoint.json",), codes=(4,),
             formats=("json", "yaml")),
        Case("node-whatif", "node whatif", ("{w}/kubeadm.json", "{w}/pod.yaml", "--explain")),
        Case("node-whatif-degraded", "node whatif", ("{w}/policy-switched.json",
             "{w}/pod.yaml"), codes=(4,)),
        Case("fleet-fit", "fleet fit", ("{w}/pod.yaml", "--snapshots", "{w}/fleet",
             "--replicas", "3", "--workers", "1")),
        Case("fleet-capacity", "fleet capacity", ("{w}/pod.yaml", "--snapshots", "{w}/fleet",
             "--workers", "1")),
        Case("compute-take", "compute take", ("--machine", "dual-socket-ht", "--available",
             "0-11", "--count", "4"), formats=("",)),
        Case("compute-hints", "compute hints", ("--machine", "dual-socket-ht", "--available",
             "0-11", "--count", "4"), formats=("",)),
        Case("compute-merge", "compute merge", ("--numa-nodes", "0,1", "--policy",
             "best-effort", "--providers", '[{{"cpu": [{{"affinity": [0], "preferred": true}}]}}]'),
             formats=("",)),
    ]  # fmt: skip
    healthy = ("gpu", "kubeadm", "memory-static", "offline-cpus", "no-socket")
    cases += [Case(f"node-show-{n}", "node show", (f"{{w}}/{n}.json",)) for n in healthy]
    broken = ("corrupt-checkpoint", "policy-switched")
    cases += [Case(f"node-show-{n}", "node show", (f"{{w}}/{n}.json",), codes=(4,)) for n in broken]
    cases += [
        Case(f"simulate-{ex.stem[:2]}", "simulate", (str(ex), "--explain"), codes=(0, 1))
        for ex in sorted(EXAMPLES.glob("*.yaml"))
    ]
    return cases


@functools.cache
def json_cases() -> tuple[Case, ...]:
    return tuple(c for c in _cases() if "json" in c.formats or c.formats == ("",))


@functools.cache
def table_cases() -> tuple[Case, ...]:
    return tuple(c for c in _cases() if "table" in c.formats)


_WORKSPACE: list[Path] = []


def prepared(factory: pytest.TempPathFactory) -> Path:
    """The workspace (built once per session)."""
    if _WORKSPACE:
        return _WORKSPACE[0]
    where = factory.mktemp("fixture-runs")
    for node in ("gpu", "kubeadm", "memory-static", "offline-cpus", "no-socket",
                 "corrupt-checkpoint", "policy-switched"):  # fmt: skip
        (where / f"{node}.json").write_bytes(snapshot_to_json(fixture_snapshot(node)))
    from cpumanager.formats.machine_format import topology_to_dict

    machine = fixture_snapshot("kubeadm").topology()
    (where / "machine.json").write_text(json.dumps(topology_to_dict(machine)))
    write_snapshots(where / "fleet", 6)
    (where / "pod.yaml").write_text(guaranteed_pod_yaml("2"))
    shutil.copy(KUBELET / "cpu_manager_state", where / "state-a")
    shutil.copy(NODES_DIR / "gpu/var/lib/kubelet/cpu_manager_state", where / "state-b")
    from tests.cli.test_state import CMAP, V1_FILE

    (where / "v1-state").write_bytes(V1_FILE)
    (where / "map.json").write_bytes(CMAP)
    _WORKSPACE.append(where)
    return where
