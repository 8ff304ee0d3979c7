"""`cpumanager run` and `cpumanager agent --once` end to end, on this host's own CPUs.

The machine is a fake sysfs tree listing exactly the CPUs this process may use, so the CPUs
the policy picks can really be pinned (CI containers often see more CPUs than they may use).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cpumanager.core.cpuset import CPUSet
from tests.adapters.sysfs_tree import SysfsTree
from tests.cli.runner import Run
from tests.cli.test_state import assert_one_line_error

SRC = Path(__file__).resolve().parents[2] / "src"
ALLOWED = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
needs_two_cpus = pytest.mark.skipif(
    len(ALLOWED) < 2, reason="needs sched_setaffinity and 2 usable CPUs (1 is reserved)"
)
PRINT_AFFINITY = "import os; print(sorted(os.sched_getaffinity(0)))"


def cpumanager(*args: str | Path, timeout: float = 60) -> Run:
    """Run the real CLI in a child process (run starts children of its own)."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, "-m", "cpumanager", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )
    return Run(done.returncode, done.stdout, done.stderr)


@pytest.fixture
def host(tmp_path: Path) -> Path:
    """A sysfs tree of one socket, one NUMA node and one core per usable CPU."""
    tree = SysfsTree(tmp_path / "machine").online(str(CPUSet(ALLOWED)))
    for index, cpu in enumerate(ALLOWED):
        tree.cpu(
            cpu, package=0, core_id=index, siblings=str(cpu), package_cpus=str(CPUSet(ALLOWED))
        )
    tree.node(0, str(CPUSet(ALLOWED)), memory_kb=4 << 20)
    tree.node_online("0")
    return tree.root


@needs_two_cpus
def test_run_pins_the_command_and_releases_on_exit(tmp_path: Path, host: Path) -> None:
    state = tmp_path / "state"
    result = cpumanager(
        "run", "--cpus", "1", "--state-dir", state, "--sysfs", host, "-v",
        "--", sys.executable, "-c", PRINT_AFFINITY,
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    pinned = json.loads(result.output)
    assert len(pinned) == 1
    assert pinned[0] in ALLOWED
    assert pinned[0] != ALLOWED[0]  # the reserved CPU stays with the system
    assert f"running on CPUs {pinned[0]} " in result.stderr
    checkpoint = json.loads((state / "cpu_manager_state").read_text())
    assert checkpoint["defaultCpuSet"] == str(CPUSet(ALLOWED))
    assert "entries" not in checkpoint  # released
    assert (state / "lock").is_file()


@needs_two_cpus
def test_run_exits_with_the_command_exit_code(tmp_path: Path, host: Path) -> None:
    result = cpumanager(
        "run", "--cpus", "1", "--state-dir", tmp_path, "--sysfs", host,
        "--", sys.executable, "-c", "raise SystemExit(7)",
    )  # fmt: skip
    assert result.exit_code == 7


@needs_two_cpus
def test_run_rejection_is_one_line_with_the_kubelet_reason(tmp_path: Path, host: Path) -> None:
    result = cpumanager(
        "run", "--cpus", str(len(ALLOWED) + 1), "--state-dir", tmp_path, "--sysfs", host,
        "--", "true",
    )  # fmt: skip
    assert_one_line_error(result, 1)
    assert "pod rejected: UnexpectedAdmissionError" in result.stderr
    assert "not enough cpus" in result.stderr


def test_dry_run_prints_the_choice_and_writes_nothing(tmp_path: Path) -> None:
    state = tmp_path / "state"
    result = cpumanager(
        "run", "--cpus", "4", "--state-dir", state, "--machine", "2s4n16c2t",
        "--dry-run", "--", "job", "--flag",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.output)
    assert report["command"] == ["job", "--flag"]
    assert len(CPUSet.parse(report["cpus"])) == 4
    assert len(report["numa_nodes"]) == 1
    assert report["uid"].startswith("cpumanager-run.")
    assert not state.exists()


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["run", "--cpus", "1", "--machine", "2s4n16c2t", "--state-dir", "{tmp}"], 1, "after '--'"),
        (["run", "--cpus", "0", "--", "true"], 2, "--cpus"),
        (["run", "--cpus", "1", "--kubelet-config", "{tmp}/nope.yaml", "--", "true"], 1,
         "does not exist"),
        (["agent", "--workloads", "{tmp}/nope", "--once"], 2, "--workloads"),
        (["agent", "--workloads", "{tmp}", "--period", "soon", "--once"], 2, "--period"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line(tmp_path: Path, args: list[str], code: int, message: str) -> None:
    result = cpumanager(*(a.replace("{tmp}", str(tmp_path)) for a in args))
    assert_one_line_error(result, code)
    assert message in result.stderr


# --- agent --once ------------------------------------------------------------------------------


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(["sleep", "60"])
    yield proc
    proc.kill()
    proc.wait()


WORKLOAD = """\
kind: Pod
metadata:
  name: {name}
  annotations: {{cpumanager.io/pid: "{pid}"}}
spec:
  containers:
  - name: main
    resources: {{limits: {{cpu: "{cpu}", memory: 64Mi}}}}
"""


@needs_two_cpus
def test_agent_once_pins_a_workload_and_reports_json(
    tmp_path: Path, host: Path, sleeper: subprocess.Popen[bytes]
) -> None:
    workloads = tmp_path / "workloads"
    workloads.mkdir()
    (workloads / "job.yaml").write_text(WORKLOAD.format(name="job", pid=sleeper.pid, cpu=1))
    (workloads / "gone.yaml").write_text(WORKLOAD.format(name="gone", pid=2**22 + 1, cpu=1))
    args = ("agent", "--workloads", workloads, "--state-dir", tmp_path / "s", "--sysfs", host)
    result = cpumanager(*args, "--once")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.output)
    target = f"pid://{sleeper.pid}"
    assert [a["pod"] for a in report["admitted"]] == ["default/job"]
    assert report["waiting"] == ["default/gone"]
    chosen = CPUSet.parse(report["applied"][target])
    assert len(chosen) == 1
    assert CPUSet(os.sched_getaffinity(sleeper.pid)) == chosen
    assert "allocated CPUs" in result.stderr

    sleeper.kill()
    sleeper.wait()
    again = json.loads(cpumanager(*args, "--once").output)
    assert [(e["cpus"], e["reason"]) for e in again["released"]] == [(str(chosen), "stale")]
    assert again["defaultCpuSet"] == str(CPUSet(ALLOWED))
