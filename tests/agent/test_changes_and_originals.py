"""Edited specs and pins that survive restarts (issue 11, items 8 and 9).

Changing a manifest from ``cpu: "1"`` to ``500m`` was ignored (even across restarts) while
the CPU stayed held; saved original affinities lived only in the agent's memory, so the next
agent took the exclusive pin for the original.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from cpumanager.adapters.runtimes._originals import ORIGINALS_NAME, OriginalsFile
from cpumanager.adapters.runtimes.affinity import AffinityRuntime, pid_container_id
from cpumanager.core.cpuset import CPUSet
from tests.agent.test_loop import assigned, make, workload

ALLOWED = CPUSet(os.sched_getaffinity(0))


def test_a_changed_spec_is_released_and_admitted_again() -> None:
    s = make(workload("a", "1", "pid://10"))
    s.loop.tick()
    held = assigned(s, "a")
    assert held is not None
    s.listed[0] = workload("a", "500m", "pid://10")
    report = s.loop.tick()
    assert assigned(s, "a") is None  # the exclusive CPU went back
    assert [(e["uid"], e["cpus"]) for e in report.released] == [("a", str(held))]
    assert "default/a: its spec changed; released and admitted again" in report.notes
    assert s.runtime.current["pid://10"] == CPUSet.parse(report.default_cpuset)


def test_a_spec_changed_while_the_agent_was_down_is_admitted_anew() -> None:
    first = make(workload("a", "1", "pid://10"))
    first.loop.tick()
    assert assigned(first, "a") is not None
    again = make(workload("a", "2", "pid://10"), store=first.store)  # a restart, new spec
    report = again.loop.tick()
    now = assigned(again, "a")
    assert now is not None
    assert len(now) == 2
    assert any("spec changed while the agent was down" in note for note in report.notes)


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(["sleep", "60"])
    yield proc
    proc.kill()
    proc.wait()


@pytest.mark.skipif(len(ALLOWED) < 2, reason="needs 2 usable CPUs")
def test_originals_survive_the_runtime(tmp_path: Path, sleeper: subprocess.Popen[bytes]) -> None:
    path = tmp_path / ORIGINALS_NAME
    target = pid_container_id(sleeper.pid)
    first = AffinityRuntime(originals=OriginalsFile(path, kind="affinity"))
    pinned = CPUSet([max(ALLOWED)])
    first.apply(target, pinned)
    assert CPUSet(os.sched_getaffinity(sleeper.pid)) == pinned
    del first  # the agent was killed: nothing restored
    second = AffinityRuntime(originals=OriginalsFile(path, kind="affinity"))
    second.apply(target, pinned)  # the next agent pins again...
    assert second.saved() == {target: ALLOWED}  # ...and knows the true original
    second.restore()
    assert CPUSet(os.sched_getaffinity(sleeper.pid)) == ALLOWED
    assert AffinityRuntime(originals=OriginalsFile(path, kind="affinity")).saved() == {}


def test_originals_of_gone_processes_are_dropped_and_junk_is_set_aside(tmp_path: Path) -> None:
    path = tmp_path / ORIGINALS_NAME
    path.write_text('{"kind": "affinity", "entries": {"pid://999999999": {"started": 1.0, '
                    '"cpus": "0"}, "pid://\u00b2": {"started": 1, "cpus": "0"}}}')  # fmt: skip
    assert AffinityRuntime(originals=OriginalsFile(path, kind="affinity")).saved() == {}
    path.write_text("[" * 100_000)
    assert AffinityRuntime(originals=OriginalsFile(path, kind="affinity")).saved() == {}
    assert (tmp_path / f"{ORIGINALS_NAME}.corrupt").exists()


@pytest.mark.skipif(len(ALLOWED) < 2, reason="needs 2 usable CPUs")
def test_a_restarted_loop_restores_targets_no_longer_listed(
    tmp_path: Path, sleeper: subprocess.Popen[bytes]
) -> None:
    from cpumanager.adapters.workloads import WorkloadScan
    from cpumanager.agent.loop import AgentLoop, EventBuffer
    from cpumanager.manager.node import Node

    path = tmp_path / ORIGINALS_NAME
    target = pid_container_id(sleeper.pid)
    AffinityRuntime(originals=OriginalsFile(path, kind="affinity")).apply(
        target, CPUSet([max(ALLOWED)])
    )  # an earlier agent, then SIGKILL
    s = make()
    runtime = AffinityRuntime(originals=OriginalsFile(path, kind="affinity"))
    events = EventBuffer()
    node: Node = s.loop.node
    loop = AgentLoop(
        node=node,
        events=events,
        workloads=lambda: WorkloadScan(()),
        runtime=runtime,
        run_owner_alive=lambda uid: False,
    )
    loop.tick()
    assert CPUSet(os.sched_getaffinity(sleeper.pid)) == ALLOWED
    assert runtime.saved() == {}
