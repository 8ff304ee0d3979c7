"""Snapshots of the fixture nodes (tests/data/nodes), collected once per test session."""

from __future__ import annotations

import functools
from fractions import Fraction
from pathlib import Path

from cpumanager.adapters.node_collect import CollectOptions, collect_snapshot
from cpumanager.core.ids import ContainerName, PodUID
from cpumanager.core.quantity import parse_quantity
from cpumanager.core.workload import Container, Pod
from cpumanager.nodeview.snapshot import NodeSnapshot
from tests.nodeview.fixture_nodes import NODES_DIR


@functools.cache
def fixture_snapshot(name: str) -> NodeSnapshot:
    """The fixture node as 'node snapshot' collects it (no kubelet socket)."""
    node = NODES_DIR / name
    return collect_snapshot(
        CollectOptions(
            root=node,
            kubelet_root=node / "var/lib/kubelet",
            pods=node / "pods.json",
            socket=node / "no.sock",
        )
    )


def pod(
    name: str,
    cpu: str,
    memory: str = "1Gi",
    *,
    limits: bool = True,
    extra: dict[str, int] | None = None,
) -> Pod:
    """A one-container pod; with ``limits`` equal to requests it is Guaranteed."""
    requests = {"cpu": parse_quantity(cpu), "memory": _bytes(memory)}
    requests.update({k: Fraction(v) for k, v in (extra or {}).items()})
    container = Container(
        ContainerName("app"), requests=requests, limits=dict(requests) if limits else {}
    )
    return Pod(PodUID(f"uid-{name}"), name, "default", (), (container,))


def _bytes(text: str) -> Fraction:
    units = {"Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
    return Fraction(int(text[:-2]) * units[text[-2:]])


def write(tmp: Path, name: str, text: str) -> Path:
    path = tmp / name
    path.write_text(text)
    return path
