"""The extender's Prometheus metrics, in a registry of their own.

Every label takes values from a fixed set (routes, status codes, outcomes, reasons) except
``node`` on the snapshot age gauge, which holds only node names the store holds: validated
Kubernetes node names, at most ``--max-nodes`` of them.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Gauge, Histogram
from prometheus_client import Counter as PromCounter

__all__ = ["Meters"]

_LATENCY_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)


class Meters:
    """The extender's counters, gauges and histograms (docs/extender.md, "Metrics")."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        reg = self.registry
        self.requests = PromCounter(
            "cpumanager_extender_requests",
            "Requests by route and status code.",
            ["route", "code"],
            registry=reg,
        )
        self.latency = Histogram(
            "cpumanager_extender_request_duration_seconds",
            "Request latency by route.",
            ["route"],
            buckets=_LATENCY_BUCKETS,
            registry=reg,
        )
        self.outcomes = PromCounter(
            "cpumanager_extender_filter_outcomes",
            "Per-node filter outcomes by result and reason.",
            ["result", "reason"],
            registry=reg,
        )
        self.age = Gauge(
            "cpumanager_extender_snapshot_age_seconds",
            "Seconds since each node's last push or heartbeat.",
            ["node"],
            registry=reg,
        )
        self.assumed = Gauge(
            "cpumanager_extender_assumed_pods", "Pods approved but not yet reported.", registry=reg
        )
        self.checks = PromCounter(
            "cpumanager_extender_exact_checks",
            "Exact admission checks by where they ran (forked child or the server process).",
            ["where"],
            registry=reg,
        )
        self.child_failures = PromCounter(
            "cpumanager_extender_fanout_child_failures",
            "Forked children whose share of exact checks the server recomputed.",
            registry=reg,
        )
        self.pushes = PromCounter(
            "cpumanager_extender_pushes", "Snapshot pushes by outcome.", ["outcome"], registry=reg
        )
