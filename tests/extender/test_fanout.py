"""Exact checks on forked children give the in-process results, whatever the children do."""

from __future__ import annotations

import os
import pickle
import random
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import pytest

from cpumanager.extender.fanout import Fanout, usable_cpus
from cpumanager.extender.judge import Verdict
from cpumanager.extender.server import ExtenderConfig
from tests.extender.conftest import TOKEN, Extender, start_extender
from tests.extender.nodes import busy_snapshot, pod_json, snapshot_document

TWO_CPUS = partial(Fanout, threshold=0, cpus=lambda: 2)


def verdict_tasks(count: int) -> list[Callable[[], Verdict]]:
    """Tasks whose results differ in every field a verdict carries."""
    return [
        partial(Verdict, i % 3 == 0, f"R{i}", f"m{i}", ("a", str(i)), i % 5 == 0, i % 11)
        for i in range(count)
    ]


def test_children_compute_shares_and_results_keep_task_order() -> None:
    pids, counts = TWO_CPUS(workers=2).run([os.getpid] * 40, result_type=int)
    assert set(pids) - {os.getpid()}, "no task ran in a child"
    assert (counts.in_children, counts.in_process, counts.child_failures) == (20, 20, 0)
    tasks = verdict_tasks(200)
    results, counts = TWO_CPUS().run(tasks, result_type=Verdict, costs=range(200))
    assert results == [task() for task in tasks]
    assert counts.in_children > 0


def _raise(number: int, fd: int) -> None:
    raise RuntimeError("a child's task failed")


def _exit(number: int, fd: int) -> None:
    os._exit(3)


def _garbage(number: int, fd: int) -> None:
    os.write(fd, b"\x80\x05not a pickle")
    os._exit(0)


def _other_class(number: int, fd: int) -> None:
    os.write(fd, pickle.dumps([os.system] * 100))
    os._exit(0)


def _short(number: int, fd: int) -> None:
    os.write(fd, pickle.dumps([Verdict(True)]))
    os._exit(0)


def _wrong_type(number: int, fd: int) -> None:
    os.write(fd, pickle.dumps(list(range(100))))
    os._exit(0)


def _hang(number: int, fd: int) -> None:
    time.sleep(60)


def _close_then_hang(number: int, fd: int) -> None:
    os.close(fd)
    time.sleep(60)


FAILURES = [_raise, _exit, _garbage, _other_class, _short, _wrong_type, _hang, _close_then_hang]


@pytest.mark.parametrize("hook", FAILURES, ids=lambda hook: hook.__name__.strip("_"))
def test_a_failed_child_changes_no_result(hook: Callable[[int, int], None]) -> None:
    tasks = verdict_tasks(200)
    fanout = TWO_CPUS(child_hook=hook, patience=0.3, ratio=0)
    start = time.perf_counter()
    results, counts = fanout.run(tasks, result_type=Verdict)
    assert results == [task() for task in tasks]
    assert (counts.in_children, counts.in_process, counts.child_failures) == (0, 200, 1)
    assert time.perf_counter() - start < 10  # a hung child is killed, not waited for


def test_a_failed_fork_leaves_the_share_to_the_process() -> None:
    def no_fork() -> int:
        raise OSError(11, "Resource temporarily unavailable")

    pids, counts = TWO_CPUS(fork=no_fork).run([os.getpid] * 10, result_type=int)
    assert pids == [os.getpid()] * 10
    assert (counts.in_children, counts.in_process) == (0, 10)


@pytest.mark.parametrize(
    ("workers", "threshold", "tasks", "processes"),
    [
        (None, 64, 63, 1),  # few tasks: in-process
        (None, 64, 64, 2),
        (1, 0, 100, 1),  # --workers 1: no fan-out
        (8, 0, 100, 2),  # capped by the usable CPUs
        (None, 0, 1, 1),  # never more processes than tasks
    ],
)
def test_process_count(workers: int | None, threshold: int, tasks: int, processes: int) -> None:
    fanout = Fanout(workers=workers, threshold=threshold, cpus=lambda: 2)
    assert fanout.processes(tasks) == processes


def test_one_cpu_means_no_fork() -> None:
    pids, counts = Fanout(threshold=0, cpus=lambda: 1).run([os.getpid] * 10, result_type=int)
    assert pids == [os.getpid()] * 10
    assert counts.in_children == 0


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity calls here")
def test_usable_cpus_follows_the_affinity_mask() -> None:
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(before)})  # this thread only
    try:
        assert usable_cpus() == 1
        pids, _ = Fanout(threshold=0).run([os.getpid] * 10, result_type=int)
        assert pids == [os.getpid()] * 10
    finally:
        os.sched_setaffinity(0, before)


# --- the extender with and without fan-out: identical HTTP answers ------------------------

SHAPES: list[dict[str, Any]] = [
    {"cores_per_numa": 2},
    {"cores_per_numa": 4, "topology_policy": "restricted"},
    {"cores_per_numa": 2, "numa_per_socket": 2, "sockets": 2},
    {"cores_per_numa": 4, "topology_policy": "best-effort", "config": {"maxPods": 6}},
    {"cores_per_numa": 3, "options": {"full-pcpus-only": "true"}},
    {"cores_per_numa": 3, "config": {"topologyManagerScope": "pod"}},
]
SIZES = ("1", "2", "3", "4", "6", "500m", "1500m")


def busy_documents(count: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [
        snapshot_document(
            busy_snapshot(f"n{i}", rng, pods=rng.randint(0, 6), **SHAPES[i % len(SHAPES)])
        )
        for i in range(count)
    ]


def replay(ext: Extender, documents: list[dict[str, Any]], seed: int) -> list[Any]:
    """Push the nodes, then filter and prioritize a seeded sequence of pods (new specs, one
    spec again, pods already running on a node, two containers), answers in order."""
    for document in documents:
        status, _ = ext.call("POST", f"/v1/nodes/{document['nodeName']}/snapshot", document)
        assert status == 200
    names = [d["nodeName"] for d in documents]
    running = [p["metadata"]["uid"] for d in documents for p in (d["pods"] or [])[:1]]
    rng = random.Random(seed)
    answers = []
    for i in range(10):
        uid = running[i % len(running)] if i % 4 == 3 else f"pod-{i}"
        pod = pod_json(uid, rng.choice(SIZES), rng.choice(("1Gi", "2Gi")), containers=1 + i % 2)
        args = {"Pod": pod, "NodeNames": names}
        answers.append(ext.call("POST", "/filter", args))
        answers.append(ext.call("POST", "/prioritize", args))
    return answers


CHILD_CHECKS = 'cpumanager_extender_exact_checks_total{where="child"}'
CHILD_FAILURES = "cpumanager_extender_fanout_child_failures_total"


def metrics(ext: Extender) -> dict[str, float]:
    _, page = ext.call("GET", "/metrics")
    samples = [line.rsplit(" ", 1) for line in page.splitlines() if not line.startswith("#")]
    return {name: float(value) for name, value in samples}


def run_extender(
    config: ExtenderConfig, fanout: Fanout, documents: list[dict[str, Any]]
) -> tuple[list[Any], dict[str, float]]:
    """The replay's answers and the extender's metrics after it."""
    ext, server, thread = start_extender(config, fanout=fanout)
    try:
        return replay(ext, documents, seed=7), metrics(ext)
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.mark.parametrize("assume", ["best", "all"])
def test_fanout_answers_as_one_process(assume: str) -> None:
    documents = busy_documents(18, seed=15)
    config = ExtenderConfig(token=TOKEN, stale_after=1e9, assume=assume)
    alone, _ = run_extender(config, Fanout(workers=1), documents)
    spread, counted = run_extender(config, TWO_CPUS(workers=2), documents)
    assert spread == alone
    assert any(answer["NodeNames"] for status, answer in alone if isinstance(answer, dict))
    assert counted[CHILD_CHECKS] > 0


def test_failing_children_leave_the_answers_unchanged() -> None:
    documents = busy_documents(12, seed=3)
    config = ExtenderConfig(token=TOKEN, stale_after=1e9)
    alone, _ = run_extender(config, Fanout(workers=1), documents)
    failing, counted = run_extender(config, TWO_CPUS(child_hook=_raise), documents)
    assert failing == alone
    assert counted[CHILD_FAILURES] > 0
    assert counted[CHILD_CHECKS] == 0
