"""Issue 21, item 8: one snapshot fails only itself; a fleet run answers every other one."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from cpumanager.core.workload import Pod
from cpumanager.fleet import runner
from cpumanager.fleet.placement import NodeAnswer
from cpumanager.fleet.runner import PodSource, run_answers, snapshot_files
from tests.fleet.generate import guaranteed_pod_yaml, write_snapshots

POD = guaranteed_pod_yaml("2")
SOURCE = PodSource(POD, "pod.yaml")


@pytest.fixture
def fleet_dir(tmp_path: Path) -> Path:
    write_snapshots(tmp_path, 6)
    return tmp_path


def test_a_defect_tripped_by_one_snapshot_fails_that_snapshot_only(
    fleet_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = runner.answer_file
    files = snapshot_files(fleet_dir)
    victim = files[2].name

    def trips(path: str, pod: Pod, limit: int) -> NodeAnswer:
        if path.endswith(victim):
            raise RecursionError
        if path.endswith(files[4].name):
            raise IndexError("list index out of range")  # as from deep inside
        return real(path, pod, limit)

    monkeypatch.setattr(runner, "answer_file", trips)
    answers = run_answers(files, SOURCE, 3, workers=1)
    errors = {a.node: a.error for a in answers if a.error}
    assert set(errors) == {victim, files[4].name}
    assert "nested too deeply" in errors[victim]
    assert "IndexError" in errors[files[4].name]
    assert all(a.copies for a in answers if not a.error)


def test_a_snapshot_past_the_time_limit_is_reported(
    fleet_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = runner.answer_file
    files = snapshot_files(fleet_dir)

    def slow(path: str, pod: Pod, limit: int) -> NodeAnswer:
        if path.endswith(files[0].name):
            time.sleep(30)
        return real(path, pod, limit)

    monkeypatch.setattr(runner, "answer_file", slow)
    answers = run_answers(files, SOURCE, 3, workers=1, time_limit=0.3)
    assert "within the 0.3 s time limit" in answers[0].error
    assert all(not a.error for a in answers[1:])


class DyingSource(PodSource):
    """Kills the first worker that parses it (the sentinel file is claimed once)."""

    def pod(self) -> Pod:
        sentinel = Path(self.source)
        try:
            sentinel.rename(sentinel.with_suffix(".claimed"))
        except FileNotFoundError:
            return super().pod()
        os._exit(1)


def test_a_worker_that_dies_loses_no_answer(
    fleet_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    sentinel = tmp_path_factory.mktemp("sentinel") / "kill"
    sentinel.write_text("")
    files = snapshot_files(fleet_dir)
    answers = run_answers(files, DyingSource(POD, str(sentinel)), 3, workers=2)
    assert not sentinel.exists()  # a worker did die
    assert [a.error for a in answers] == [""] * len(files)
    assert answers == run_answers(files, SOURCE, 3, workers=1)
