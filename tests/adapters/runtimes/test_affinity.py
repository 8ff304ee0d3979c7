"""AffinityRuntime: pin a child process (all its threads) and put its affinity back."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from cpumanager.adapters.runtimes.affinity import (
    AffinityRuntime,
    parse_pid_id,
    pid_container_id,
    process_start_time,
)
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.ids import ContainerID
from cpumanager.errors import RuntimeApplyError

HAVE_AFFINITY = hasattr(os, "sched_setaffinity") and hasattr(os, "sched_getaffinity")
pytestmark = pytest.mark.skipif(
    not HAVE_AFFINITY, reason="sched_setaffinity is not available on this platform"
)

# A child with a second thread, so the test sees that every thread is pinned.
THREADED = (
    "import threading, time\n"
    "threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
    "print('ready', flush=True)\n"
    "time.sleep(60)\n"
)


@pytest.fixture
def child() -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen([sys.executable, "-c", THREADED], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    yield proc
    proc.kill()
    proc.wait()
    proc.stdout.close()


def thread_affinities(pid: int) -> dict[int, CPUSet]:
    return {
        int(tid): CPUSet(os.sched_getaffinity(int(tid))) for tid in os.listdir(f"/proc/{pid}/task")
    }


def allowed() -> CPUSet:
    return CPUSet(os.sched_getaffinity(0))


def test_pins_every_thread_to_cpu_0_and_back(child: subprocess.Popen[str]) -> None:
    first = CPUSet([min(allowed())])
    before = thread_affinities(child.pid)
    assert len(before) >= 2
    runtime = AffinityRuntime()
    cid = pid_container_id(child.pid)
    runtime.apply(cid, first)
    assert set(thread_affinities(child.pid).values()) == {first}
    assert runtime.verify(cid) == first
    assert runtime.saved() == {cid: before[child.pid]}
    runtime.restore()
    assert thread_affinities(child.pid) == before
    assert runtime.saved() == {}


def test_original_is_saved_once(child: subprocess.Popen[str]) -> None:
    runtime = AffinityRuntime()
    cid = pid_container_id(child.pid)
    original = CPUSet(os.sched_getaffinity(child.pid))
    runtime.apply(cid, CPUSet([min(allowed())]))
    runtime.apply(cid, allowed())
    runtime.apply(cid, CPUSet([max(allowed())]))
    runtime.restore(cid)
    assert CPUSet(os.sched_getaffinity(child.pid)) == original


def test_alive_and_gone(child: subprocess.Popen[str]) -> None:
    runtime = AffinityRuntime()
    cid = pid_container_id(child.pid)
    assert runtime.alive(cid)
    assert process_start_time(child.pid) is not None
    runtime.apply(cid, allowed())
    child.kill()
    child.wait()
    assert not runtime.alive(cid)
    assert process_start_time(child.pid) is None
    with pytest.raises(RuntimeApplyError, match="is gone"):
        runtime.apply(cid, allowed())
    runtime.restore()  # a gone process is skipped, not an error


def test_cpus_the_process_may_not_use_are_refused(child: subprocess.Popen[str]) -> None:
    runtime = AffinityRuntime()
    with pytest.raises(RuntimeApplyError, match="refused the CPU list") as caught:
        runtime.apply(pid_container_id(child.pid), CPUSet([4095]))
    assert "\n" not in caught.value.message


def test_empty_set_is_refused(child: subprocess.Popen[str]) -> None:
    with pytest.raises(RuntimeApplyError, match="empty"):
        AffinityRuntime().apply(pid_container_id(child.pid), CPUSet())


@pytest.mark.parametrize(
    "text", ["", "pid://", "pid://0", "pid://-3", "pid://12x", "cgroup://a", "1234"]
)
def test_bad_ids_are_one_line_errors(text: str) -> None:
    with pytest.raises(RuntimeApplyError, match="not a process"):
        parse_pid_id(text)
    assert not AffinityRuntime().alive(ContainerID(text))


def test_id_round_trip() -> None:
    assert parse_pid_id(pid_container_id(4242)) == 4242
