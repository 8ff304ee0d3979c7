"""The node agent's publisher against a real extender: pushes changes only, heartbeats
otherwise, re-pushes when the extender lost the node, reports refusals without dying."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from cpumanager.agent.publish import HttpSender, Publisher, file_marks, watched_paths
from cpumanager.cli.node_publish import parse_period
from cpumanager.errors import InputError
from cpumanager.extender.server import ExtenderConfig
from tests.cli.runner import run_main
from tests.extender.conftest import TOKEN, Extender, start_extender
from tests.extender.nodes import make_snapshot
from tests.nodeview.fixture_nodes import NODES_DIR


@pytest.fixture
def ext() -> Iterator[Extender]:
    running, server, thread = start_extender(ExtenderConfig(token=TOKEN))
    yield running
    server.should_exit = True
    thread.join(timeout=10)


def _publisher(ext: Extender, snapshots: list, tmp_path: Path, token: bytes = TOKEN) -> Publisher:
    watched = tmp_path / "cpu_manager_state"
    return Publisher(
        collect=lambda: snapshots[-1],
        post=HttpSender(ext.base, token).post,
        paths=[watched],
        every=10.0,
        clock=ext.clock,
    )


def test_pushes_changes_and_heartbeats_otherwise(ext: Extender, tmp_path: Path) -> None:
    snapshots = [make_snapshot("n1")]
    publisher = _publisher(ext, snapshots, tmp_path)
    assert publisher.due()
    assert publisher.step() == "pushed"
    assert not publisher.due()  # nothing changed, the floor has not passed
    ext.clock.now += 10
    assert publisher.due()
    snapshots.append(replace(snapshots[0], collected_at="2026-12-03T11:00:00Z"))
    assert publisher.step() == "heartbeat"  # only collectedAt differs
    (tmp_path / "cpu_manager_state").write_text("{}")
    assert publisher.due()  # a watched file appeared
    snapshots.append(make_snapshot("n1", cores_per_numa=8))
    assert publisher.step() == "pushed"
    entry = ext.store.get("n1")
    assert entry is not None
    assert len(entry.snapshot.topology().all_cpus) == 32


def test_repushes_when_the_extender_lost_the_node(ext: Extender, tmp_path: Path) -> None:
    snapshots = [make_snapshot("n1")]
    publisher = _publisher(ext, snapshots, tmp_path)
    assert publisher.step() == "pushed"
    ext.store._nodes.clear()  # the extender restarted
    assert publisher.step() == "pushed"
    assert ext.store.get("n1") is not None


def test_refused_pushes_are_reported_not_fatal(ext: Extender, tmp_path: Path) -> None:
    publisher = _publisher(ext, [make_snapshot("n1")], tmp_path, token=b"wrong")
    assert publisher.step() == "failed: push answered 401"
    unreachable = Publisher(
        collect=lambda: make_snapshot("n1"),
        post=HttpSender("http://127.0.0.1:9", None, timeout=2).post,
        paths=[],
    )
    assert unreachable.step() == "failed: push answered nothing"


def test_cli_publishes_a_real_node_once(ext: Extender, tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_bytes(TOKEN + b"\n")
    node = NODES_DIR / "kubeadm"
    result = run_main(
        [
            "node",
            "publish",
            "--to",
            ext.base,
            "--token-file",
            token,
            "--once",
            "--root",
            node,
            "--kubelet-root",
            node / "var/lib/kubelet",
            "--pods",
            node / "pods.json",
            "--socket",
            node / "no.sock",
        ]
    )
    assert result.exit_code == 0, result.stderr
    assert "cpumanager: publish: pushed" in result.stderr
    assert len(ext.store.ages()) == 1


def test_bad_urls_and_periods_are_one_line_errors() -> None:
    with pytest.raises(InputError, match="not an http"):
        HttpSender("file:///etc/passwd", None)
    assert parse_period("10s") == 10.0
    assert parse_period("500ms") == 0.5
    assert parse_period("2m") == 120.0
    for bad in ("ten", "1ms", "-3s", ""):
        with pytest.raises(InputError):
            parse_period(bad)
    result = run_main(["node", "publish", "--to", "ftp://x", "--once"])
    assert result.exit_code == 1
    assert result.stderr.startswith("cpumanager: error: --to")


def test_marks_do_not_follow_links(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.write_text("x")
    link = tmp_path / "link"
    link.symlink_to(target)
    before = file_marks([link])
    target.write_text("changed content")
    assert file_marks([link]) == before
    assert watched_paths(Path("/k"), [None, Path("/p")])[-1] == Path("/p")


def test_nrt_is_written_when_the_node_changes(ext: Extender, tmp_path: Path) -> None:
    from cpumanager.cli.node_publish import nrt_writer

    target = tmp_path / "nrt.json"
    snapshots = [make_snapshot("n1")]
    publisher = _publisher(ext, snapshots, tmp_path)
    publisher.on_change = nrt_writer(target)
    assert publisher.step() == "pushed; nrt written"
    first = json.loads(target.read_text())
    assert first["kind"] == "NodeResourceTopology"
    assert first["metadata"]["name"] == "n1"
    target.write_text("stale")
    snapshots.append(replace(snapshots[0], collected_at="2026-12-03T11:00:00Z"))
    assert publisher.step() == "heartbeat"  # same content: the file is left alone
    assert target.read_text() == "stale"
    snapshots.append(make_snapshot("n1", cores_per_numa=8))
    assert publisher.step() == "pushed; nrt written"
    assert json.loads(target.read_text()) != first


def test_nrt_failures_are_reported_and_retried(ext: Extender, tmp_path: Path) -> None:
    from cpumanager.cli.node_publish import nrt_writer

    fifo = tmp_path / "nrt.fifo"
    os.mkfifo(fifo)
    publisher = _publisher(ext, [make_snapshot("n1")], tmp_path)
    publisher.on_change = nrt_writer(fifo)
    outcome = publisher.step()
    assert outcome.startswith("pushed; nrt failed: ")
    publisher.on_change = nrt_writer(tmp_path / "nrt.json")
    assert publisher.step() == "heartbeat; nrt written"  # retried on the next round


def test_a_redirect_is_an_answer_and_the_token_goes_nowhere() -> None:
    """urllib follows a 302 after a POST and resends the Authorization header to the host
    the Location names: the node's token would go there. The sender follows nothing."""
    from tests.adapters.test_kube_api import Recorder, serve

    extender, elsewhere = Recorder(), Recorder()
    server, url = serve(extender)
    other, other_url = serve(elsewhere)
    try:
        target = f"{other_url}/v1/nodes/n/snapshot"
        extender.answers["/v1/nodes/n/snapshot"] = (302, {"Location": target}, b"")
        sender = HttpSender(url, b"node-token", timeout=5)
        assert sender.post("/v1/nodes/n/snapshot", b"{}") == 302
        assert extender.requests[0][2] == "Bearer node-token"
        assert elsewhere.requests == []
    finally:
        for one in (server, other):
            one.shutdown()
            one.server_close()
