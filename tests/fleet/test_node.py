"""One node's answer: successive copies through the node what-if."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from cpumanager.adapters.manifests import pods_from_text
from cpumanager.fleet.node import admits, answer_file, answer_snapshot, copies_of
from cpumanager.fleet.placement import UNUSABLE
from cpumanager.nodeanswers.whatif import what_if
from tests.fleet.generate import guaranteed_pod_yaml, node_snapshot, write_snapshots


def _pod(cpu: str):
    return pods_from_text(guaranteed_pod_yaml(cpu), source="pod.yaml")[0]


def test_copies_have_their_own_identity() -> None:
    copies = copies_of(_pod("2"), 3)
    assert [c.name for c in copies] == ["web-1", "web-2", "web-3"]
    assert len({c.uid for c in copies}) == 3


def test_answer_matches_admitting_copies_in_turn() -> None:
    for index in (1, 9, 15, 23, 31, 45):
        snapshot = node_snapshot(index)
        pod = _pod("2")
        answer = answer_snapshot(snapshot, pod, 100)
        taken = answer.admitted
        replay = what_if(snapshot, copies_of(pod, taken + 1)).verdicts
        assert all(v.admitted for v in replay[:taken])
        assert not replay[taken].admitted
        assert answer.refusal() == (replay[taken].reason, replay[taken].message)


def test_a_small_first_try_grows_to_the_same_answer() -> None:
    snapshot = node_snapshot(31)  # 2 sockets x 2 NUMA x 16 cores x 2 threads
    shared = _pod("500m")  # fractional: the first try is sized by the CPU request
    wide = answer_snapshot(snapshot, shared, 1000)
    assert wide.admitted > 8
    assert answer_snapshot(snapshot, shared, 8).admitted == 8
    assert answer_snapshot(snapshot, shared, 8).capped


def test_scores_fall_as_exclusive_cpus_are_taken() -> None:
    answer = answer_snapshot(node_snapshot(31), _pod("4"), 100)
    frees = [c.free_cpus for c in answer.copies if c.admitted]
    assert frees == sorted(frees, reverse=True)
    assert frees[0] - frees[1] == 4


def test_unusable_files_are_answers_with_an_error(tmp_path: Path) -> None:
    (tmp_path / "garbage.json").write_text("{not json")
    answer = answer_file(str(tmp_path / "garbage.json"), _pod("1"), 5)
    assert answer.node == "garbage.json"
    assert answer.error
    [path] = write_snapshots(tmp_path, 1, start=3)
    assert answer_file(str(path), _pod("1"), 5).node == "node-00003"


def test_admits_is_the_first_copys_verdict() -> None:
    yes = admits(node_snapshot(31), _pod("4"))
    assert yes.admitted
    assert (yes.free_cpus, yes.score) == (124, 9)  # 128 CPUs, 4 taken
    no = admits(node_snapshot(0), _pod("4"))  # 2 CPUs, none policy
    assert (no.admitted, no.reason) == (False, "OutOfcpu")
    broken = dataclasses.replace(node_snapshot(1), machine=None)
    assert admits(broken, _pod("1")).reason == UNUSABLE
