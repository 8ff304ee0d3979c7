"""Host failures are not rejections (issue 11, item 11).

A checkpoint write that failed for lack of space, or a read-only ``.last-good``, used to be
reported as ``pod rejected: UnexpectedAdmissionError ... ask for fewer CPUs`` (exit 1); an
agent started on a full disk exited; temp files of killed writers stayed forever.
"""

from __future__ import annotations

import contextlib
import errno
from pathlib import Path

import pytest

from cpumanager.adapters.checkpoint_store import CheckpointStore
from cpumanager.adapters.memory_store import InMemoryStore
from cpumanager.agent.daemon import Daemon
from cpumanager.agent.run import RunSession, run_pod
from cpumanager.core.containermap import ContainerMap
from cpumanager.core.ids import PodUID
from cpumanager.errors import StoreError
from cpumanager.formats.kubelet_config import KubeletConfig
from cpumanager.manager.node import Node
from cpumanager.presets import synthetic
from tests.agent.test_daemon import FakeClock
from tests.agent.test_loop import make, workload

KUBELET = KubeletConfig.from_mapping({"cpuManagerPolicy": "static", "kubeReserved": {"cpu": "1"}})
TOPOLOGY = synthetic(sockets=1, cores_per_numa=4, threads=1)


def full_disk(step: str) -> None:
    if step == "write":
        raise OSError(errno.ENOSPC, "No space left on device")


def session_over(store_of: list[CheckpointStore], make_store: object) -> RunSession:
    def node() -> Node:
        store_of.append(make_store())  # type: ignore[operator]
        return Node(topology=TOPOLOGY, kubelet=KUBELET, store=store_of[-1])

    return RunSession(
        node_factory=node,
        lock=contextlib.nullcontext,
        run_owner_alive=lambda uid: False,
        host_failure=lambda: store_of[-1].failure if store_of else None,
    )


def test_a_full_disk_is_a_host_error_not_a_rejection(tmp_path: Path) -> None:
    CheckpointStore(tmp_path).save(  # an existing, valid checkpoint
        Node(topology=TOPOLOGY, kubelet=KUBELET, store=InMemoryStore()).snapshot().cpu
    )
    stores: list[CheckpointStore] = []
    session = session_over(stores, lambda: CheckpointStore(tmp_path, fault=full_disk))
    pod = run_pod(uid=PodUID("cpumanager-run.1.1"), name="r", cpus=1, memory="1Mi")
    with pytest.raises(StoreError, match="No space left on device") as caught:
        session.admit(pod)
    assert caught.value.exit_code == 3
    assert "pod rejected" not in caught.value.message
    assert "check free space" in caught.value.message


def test_a_read_only_last_good_is_a_host_error(tmp_path: Path) -> None:
    def read_only(step: str) -> None:
        if step in ("link", "rename_copy"):
            raise OSError(errno.EROFS, "Read-only file system")

    CheckpointStore(tmp_path).save(
        Node(topology=TOPOLOGY, kubelet=KUBELET, store=InMemoryStore()).snapshot().cpu
    )
    stores: list[CheckpointStore] = []
    session = session_over(stores, lambda: CheckpointStore(tmp_path, fault=read_only))
    pod = run_pod(uid=PodUID("cpumanager-run.1.1"), name="r", cpus=1, memory="1Mi")
    with pytest.raises(StoreError, match="Read-only file system"):
        session.admit(pod)


def test_an_agent_started_on_a_full_disk_retries(caplog: pytest.LogCaptureFixture) -> None:
    store = InMemoryStore()
    store.fail_saves = True
    s = make(workload("a", "1", "pid://10"), store=store)
    reports: list[object] = []

    def disk_freed() -> None:
        store.fail_saves = False

    clock = FakeClock()
    daemon = Daemon(loop=s.loop, period_s=1.0, clock=clock, on_report=reports.append)
    original = clock.sleep

    def sleep(seconds: float) -> None:
        original(seconds)
        if clock.now >= 1.0:
            disk_freed()

    clock.sleep = sleep  # type: ignore[method-assign]
    with caplog.at_level("ERROR", logger="cpumanager.agent"):
        assert daemon.run(max_ticks=3, handle_signals=False) == 3
    assert s.loop.started
    assert len(reports) >= 1  # a later tick ran once the disk had room
    assert any("retrying next period" in r.getMessage() for r in caplog.records)


def test_temp_files_of_killed_writers_are_removed_at_start(tmp_path: Path) -> None:
    leftovers = [
        tmp_path / ".cpu_manager_state.abc123.tmp",
        tmp_path / ".cpu_manager_state.last-good.link.tmp",
        tmp_path / ".cpu_manager_state.last-good.x9.tmp",
    ]
    for path in leftovers:
        path.write_text("half")
    unrelated = tmp_path / ".other.tmp"
    unrelated.write_text("keep")
    store = CheckpointStore(tmp_path, clean_temps=True)
    assert store.load("static", ContainerMap()) is None
    assert sorted(store.removed_temps) == sorted(leftovers)
    assert not any(path.exists() for path in leftovers)
    assert unrelated.exists()
