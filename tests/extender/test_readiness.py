"""``/readyz``: ready only after the warm-up, with fresh snapshots for most held nodes."""

from __future__ import annotations

from cpumanager.extender.readiness import readiness
from cpumanager.extender.server import ExtenderConfig
from tests.extender.conftest import start_extender
from tests.extender.nodes import make_snapshot, snapshot_document

CONFIG = ExtenderConfig(token=b"t", stale_after=60, ready_after=20)


def test_the_rule() -> None:
    assert readiness({}, 100, CONFIG)[0] is False  # nothing held
    assert readiness({"a": 1}, 10, CONFIG)[0] is False  # warming up
    assert readiness({"a": 1}, 30, CONFIG) == (True, "ready: 1 of 1 nodes fresh")
    nine = {f"n{i}": 1.0 for i in range(9)}
    assert readiness({**nine, "old": 61}, 30, CONFIG)[0] is True  # 90 % fresh
    assert readiness({**nine, "o1": 61, "o2": 61}, 30, CONFIG)[0] is False
    assert readiness({"a": 61}, 30, CONFIG)[0] is False


def test_readyz_over_http() -> None:
    ext, server, thread = start_extender(CONFIG)
    try:
        status, text = ext.call("GET", "/readyz")
        assert status == 503
        assert "not ready" in text
        ext.call("POST", "/v1/nodes/a/snapshot", snapshot_document(make_snapshot("a")), token=b"t")
        ext.clock.now += 21
        assert ext.call("GET", "/readyz") == (200, "ready: 1 of 1 nodes fresh\n")
        ext.clock.now += 60
        assert ext.call("GET", "/readyz")[0] == 503
        assert ext.call("GET", "/healthz")[0] == 200  # alive all along
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def test_removed_nodes_do_not_keep_every_replica_unready() -> None:
    """The store keeps a removed node's last snapshot: after a scale-down of a fifth of the
    fleet the replicas are unready only until those nodes are past the horizon, then ready
    again; a replica that hears no agent stays unready whatever the horizon."""
    from cpumanager.extender.readiness import GONE_AFTER

    live = {f"n{i}": 1.0 for i in range(80)}
    removed = {f"gone{i}": 61.0 for i in range(20)}
    assert readiness({**live, **removed}, 30, CONFIG)[0] is False  # just now: unsure
    long_gone = dict.fromkeys(removed, GONE_AFTER * 60 + 1)
    ready, why = readiness({**live, **long_gone}, 3600, CONFIG)
    assert ready, why
    assert why == "ready: 80 of 100 nodes fresh"
    deaf = dict.fromkeys([*live, *removed], GONE_AFTER * 60 + 1)
    assert readiness(deaf, 3600, CONFIG)[0] is False  # hears nobody
    half_deaf = {**dict.fromkeys(list(live)[:10], 1.0), **dict.fromkeys(list(live)[10:], 120.0)}
    assert readiness(half_deaf, 3600, CONFIG)[0] is False  # most nodes stale, not gone
