"""Loaders for the kubelet vector tables ported into tests/data (facts, not code)."""

from __future__ import annotations

import json
from fractions import Fraction
from functools import cache
from pathlib import Path
from typing import Any

from cpumanager.core.ids import ContainerName, PodUID
from cpumanager.core.quantity import parse_quantity
from cpumanager.core.topology import CPUTopology
from cpumanager.core.workload import Container, ContainerKind, Pod
from cpumanager.presets import declared_topology

DATA = Path(__file__).resolve().parent / "data"


@cache
def load(name: str) -> Any:
    return json.loads((DATA / name).read_text())


@cache
def kubelet_topology(name: str) -> CPUTopology:
    """A kubelet test machine with its declared counters kept verbatim."""
    entry = load("kubelet_topologies.json")[name]
    return declared_topology(map(tuple, entry["cpus"]), tuple(entry["counters"]), name=name)


def vector_container(raw: dict[str, Any], kind: ContainerKind) -> Container:
    """A container as the kubelet tests build them: equal cpu/memory requests and limits."""
    requests: dict[str, Fraction] = {"memory": Fraction(1 << 30)}
    limits: dict[str, Fraction] = {"memory": Fraction(1 << 30)}
    if raw.get("cpu_request") is not None:
        requests["cpu"] = parse_quantity(raw["cpu_request"])
    if raw.get("cpu_limit") is not None:
        limits["cpu"] = parse_quantity(raw["cpu_limit"])
    if kind is ContainerKind.INIT and raw.get("restart_policy") == "Always":
        kind = ContainerKind.SIDECAR
    return Container(ContainerName(raw["name"]), requests, limits, kind)


def vector_pod(raw: dict[str, Any]) -> Pod:
    return Pod(
        uid=PodUID(raw["uid"]),
        name=raw["uid"],
        init_containers=tuple(
            vector_container(c, ContainerKind.INIT) for c in raw.get("init_containers", [])
        ),
        containers=tuple(vector_container(c, ContainerKind.APP) for c in raw["containers"]),
    )
