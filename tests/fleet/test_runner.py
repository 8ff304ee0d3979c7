"""The per-node work mapped on a process pool or Dask: identical answers, files read safely."""

from __future__ import annotations

import contextlib
import os
import socket
from pathlib import Path

import pytest

from cpumanager.errors import InputError, WorkloadError
from cpumanager.fleet.node import answer_file
from cpumanager.fleet.placement import capacity, place
from cpumanager.fleet.runner import PodSource, run_answers, snapshot_files
from tests.fleet.generate import guaranteed_pod_yaml, write_snapshots

POD = guaranteed_pod_yaml("4")
SOURCE = PodSource(POD, "pod.yaml")


@pytest.fixture(scope="module")
def fleet_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("fleet")
    write_snapshots(directory, 24)
    (directory / "broken.json").write_text("[]")
    return directory


def test_pool_and_serial_runs_agree(fleet_dir: Path) -> None:
    files = snapshot_files(fleet_dir)
    serial = run_answers(files, SOURCE, 20, workers=1)
    pooled = run_answers(files, SOURCE, 20, workers=2)
    assert pooled == serial
    assert [a.node for a in serial][:2] == ["broken.json", "node-00000"]
    assert serial[0].error
    assert capacity(serial).total > 0


def test_dask_local_cluster_gives_identical_answers(fleet_dir: Path) -> None:
    pytest.importorskip("distributed")
    files = snapshot_files(fleet_dir)
    seen: list[int] = []
    with socket.socket() as busy:  # Dask's usual dashboard port taken: the run still starts
        with contextlib.suppress(OSError):
            busy.bind(("127.0.0.1", 8787))
            busy.listen()
        on_dask = run_answers(
            files, SOURCE, 20, workers=2, dask="local", progress=lambda d, _t: seen.append(d)
        )
    assert on_dask == run_answers(files, SOURCE, 20, workers=2)
    assert seen[-1] == len(files)
    assert place(on_dask, 10) == place(run_answers(files, SOURCE, 20, workers=1), 10)


def test_a_thousand_mixed_snapshots(tmp_path: Path) -> None:
    files = write_snapshots(tmp_path, 1000)
    answers = run_answers(snapshot_files(tmp_path), SOURCE, 3, workers=2)
    assert [a.node for a in answers] == [f"node-{i:05d}" for i in range(1000)]
    assert not any(a.error for a in answers)
    for i in range(0, 1000, 97):  # the pool returns what one node's answer says
        assert answers[i] == answer_file(str(files[i]), SOURCE.pod(), 3)
    fit = place(answers, 3)
    assert fit.placed == 3
    reasons = {g.reason for g in fit.rejections}
    assert {"TopologyAffinityError", "OutOfcpu"} <= reasons


def test_duplicate_node_names_are_told_apart(tmp_path: Path) -> None:
    [path] = write_snapshots(tmp_path, 1)
    (tmp_path / "copy.json").write_bytes(path.read_bytes())
    names = [a.node for a in run_answers(snapshot_files(tmp_path), SOURCE, 2, workers=1)]
    assert names == ["node-00000", "node-00000 (node-00000.json)"]


def test_snapshot_directory_is_read_safely(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not exist"):
        snapshot_files(tmp_path / "missing")
    with pytest.raises(InputError, match="holds no snapshot"):
        snapshot_files(tmp_path)
    [path] = write_snapshots(tmp_path / "in", 1)
    os.symlink(path, tmp_path / "in" / "link.json")
    os.mkfifo(tmp_path / "in" / "fifo.json")
    (tmp_path / "in" / "notes.txt").write_text("x")
    assert snapshot_files(tmp_path / "in") == [path]


def test_bad_arguments_are_one_line_errors(fleet_dir: Path) -> None:
    files = snapshot_files(fleet_dir)
    with pytest.raises(InputError, match="at least 1"):
        run_answers(files, SOURCE, 0)
    with pytest.raises(WorkloadError, match="exactly one Pod"):
        PodSource(POD + "---\n" + POD.replace("web", "db"), "two.yaml").pod()
