"""Jobs on forked workers give the in-process results, whatever the workers do."""

from __future__ import annotations

import os
import pickle
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest

from cpumanager.extender.fanout import DEFAULT_MAX, Fanout, FanoutSettings, Job, usable_cpus
from cpumanager.extender.judge import Verdict
from cpumanager.extender.server import ExtenderConfig
from tests.extender.conftest import TOKEN, Extender, start_extender
from tests.extender.nodes import busy_snapshot, pod_json, snapshot_document

TWO_CPUS = FanoutSettings(threshold=0, cpus=lambda: 2)


def _pid(state: object) -> int:
    return os.getpid()


def _verdict(state: object, i: int) -> Verdict:
    """A result differing from its neighbours in every field a verdict carries."""
    return Verdict(i % 3 == 0, f"R{i}", f"m{state}", ("a", str(i)), i % 5 == 0, i % 11)


STATES = {f"s{i}": i for i in range(10)}


def jobs(count: int, solve_args: Callable[[int], tuple[object, ...]]) -> list[Job]:
    return [Job(f"s{i % 10}", i % 10, solve_args(i), cost=1 + i % 7) for i in range(count)]


@pytest.fixture
def fanouts() -> Iterator[Callable[..., Fanout[Any]]]:
    """Fanouts that are closed (their workers retired) after the test."""
    made: list[Fanout[Any]] = []

    def make(solve: Callable[..., Any], result_type: type, settings: FanoutSettings) -> Fanout[Any]:
        made.append(Fanout(solve, result_type, settings))
        return made[-1]

    yield make
    for fanout in made:
        fanout.close()


def test_workers_compute_shares_and_results_keep_job_order(fanouts) -> None:
    fanout = fanouts(_pid, int, replace(TWO_CPUS, workers=2))
    pids, counts = fanout.run(jobs(40, lambda i: ()), states=lambda: STATES)
    assert set(pids) - {os.getpid()}, "no job ran in a worker"
    assert (counts.in_children + counts.in_process, counts.child_failures) == (40, 0)
    assert counts.in_children > 0
    fanout = fanouts(_verdict, Verdict, TWO_CPUS)
    work = jobs(200, lambda i: (i,))
    for _ in range(2):  # the second run reuses the workers
        results, counts = fanout.run(work, states=lambda: STATES)
        assert results == [_verdict(job.state, *job.args) for job in work]
        assert counts.in_children > 0


def test_a_worker_runs_only_jobs_on_the_states_it_was_forked_with(fanouts) -> None:
    fanout = fanouts(_pid, int, TWO_CPUS)
    fanout.run(jobs(40, lambda i: ()), states=lambda: STATES)
    newer = [Job("new", 0, (), cost=1.0)] * 5 + jobs(40, lambda i: ())
    pids, counts = fanout.run(newer, states=lambda: {**STATES, "new": 0})
    assert pids[:5] == [os.getpid()] * 5  # stamps the workers lack run here
    assert counts.in_children > 0  # and no re-fork for so few of them
    pids, counts = fanout.run([Job("new", 0, ())] * 40, states=lambda: {"new": 0})
    assert set(pids) - {os.getpid()}, "mostly new stamps: the workers are forked afresh"


def _raise(number: int, fd: int) -> None:
    raise RuntimeError("a worker's job failed")


def _exit(number: int, fd: int) -> None:
    os._exit(3)


def _garbage(number: int, fd: int) -> None:
    os.write(fd, b"\x80\x05not a pickle")
    os._exit(0)


def _framed(body: bytes) -> bytes:
    return len(body).to_bytes(8, "big") + body


def _other_class(number: int, fd: int) -> None:
    os.write(fd, _framed(pickle.dumps([os.system] * 100)))
    time.sleep(60)


def _short(number: int, fd: int) -> None:
    os.write(fd, _framed(pickle.dumps([Verdict(True)])))
    time.sleep(60)


def _wrong_type(number: int, fd: int) -> None:
    os.write(fd, _framed(pickle.dumps(list(range(100)))))
    time.sleep(60)


def _too_long(number: int, fd: int) -> None:
    os.write(fd, _framed(pickle.dumps([Verdict(True)] * 100)) + b"more")
    time.sleep(60)


def _hang(number: int, fd: int) -> None:
    time.sleep(60)


def _close_then_hang(number: int, fd: int) -> None:
    os.close(fd)
    time.sleep(60)


FAILURES = [
    _raise,
    _exit,
    _garbage,
    _other_class,
    _short,
    _wrong_type,
    _too_long,
    _hang,
    _close_then_hang,
]


@pytest.mark.parametrize("hook", FAILURES, ids=lambda hook: hook.__name__.strip("_"))
def test_a_failed_worker_changes_no_result(hook: Callable[[int, int], None], fanouts) -> None:
    settings = replace(TWO_CPUS, child_hook=hook, patience=0.3, ratio=0)
    fanout = fanouts(_verdict, Verdict, settings)
    work = jobs(200, lambda i: (i,))
    results, counts = fanout.run(work, states=lambda: STATES)
    assert results == [_verdict(job.state, *job.args) for job in work]
    assert counts.in_children == 0
    assert counts.child_failures == 1
    assert not fanout._workers  # the failed worker was killed and reaped, not kept


def test_a_failed_fork_leaves_the_share_to_the_process(fanouts) -> None:
    def no_fork() -> int:
        raise OSError(11, "Resource temporarily unavailable")

    fanout = fanouts(_pid, int, replace(TWO_CPUS, fork=no_fork))
    pids, counts = fanout.run(jobs(10, lambda i: ()), states=lambda: STATES)
    assert pids == [os.getpid()] * 10
    assert (counts.in_children, counts.in_process) == (0, 10)


@pytest.mark.parametrize(
    ("workers", "threshold", "count", "processes"),
    [
        (None, 64, 63, 1),  # few jobs: in-process
        (None, 64, 64, 2),
        (1, 0, 100, 1),  # --workers 1: no fan-out
        (8, 0, 100, 2),  # capped by the usable CPUs
        (None, 0, 1, 1),  # never more processes than jobs
    ],
)
def test_process_count(workers: int | None, threshold: int, count: int, processes: int) -> None:
    settings = FanoutSettings(workers=workers, threshold=threshold, cpus=lambda: 2)
    assert Fanout(_pid, int, settings).processes(count) == processes


@pytest.mark.parametrize(("workers", "processes"), [(None, DEFAULT_MAX), (16, 16), (1, 1)])
def test_the_default_stays_small_on_a_big_machine(workers: int | None, processes: int) -> None:
    settings = FanoutSettings(workers=workers, threshold=0, cpus=lambda: 64)
    assert Fanout(_pid, int, settings).processes(1000) == processes


def test_one_cpu_means_no_fork(fanouts) -> None:
    fanout = fanouts(_pid, int, FanoutSettings(threshold=0, cpus=lambda: 1))
    pids, counts = fanout.run(jobs(10, lambda i: ()), states=lambda: STATES)
    assert pids == [os.getpid()] * 10
    assert counts.in_children == 0


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity calls here")
def test_usable_cpus_follows_the_affinity_mask(fanouts) -> None:
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(before)})  # this thread only
    try:
        assert usable_cpus() == 1
        fanout = fanouts(_pid, int, FanoutSettings(threshold=0))
        pids, _ = fanout.run(jobs(10, lambda i: ()), states=lambda: STATES)
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
    config: ExtenderConfig, fanout: FanoutSettings, documents: list[dict[str, Any]]
) -> tuple[list[Any], dict[str, float]]:
    """The replay's answers and the extender's metrics after it."""
    ext, server, thread = start_extender(config, fanout=fanout)
    try:
        return replay(ext, documents, seed=7), metrics(ext)
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.mark.parametrize("assume", ["bind", "all"])
def test_fanout_answers_as_one_process(assume: str) -> None:
    documents = busy_documents(18, seed=15)
    config = ExtenderConfig(token=TOKEN, stale_after=1e9, assume=assume)
    alone, _ = run_extender(config, FanoutSettings(workers=1), documents)
    spread, counted = run_extender(config, replace(TWO_CPUS, workers=2), documents)
    assert spread == alone
    assert any(answer["NodeNames"] for status, answer in alone if isinstance(answer, dict))
    assert counted[CHILD_CHECKS] > 0


def test_failing_children_leave_the_answers_unchanged() -> None:
    documents = busy_documents(12, seed=3)
    config = ExtenderConfig(token=TOKEN, stale_after=1e9)
    alone, _ = run_extender(config, FanoutSettings(workers=1), documents)
    failing, counted = run_extender(config, replace(TWO_CPUS, child_hook=_raise), documents)
    assert failing == alone
    assert counted[CHILD_FAILURES] > 0
    assert counted[CHILD_CHECKS] == 0
