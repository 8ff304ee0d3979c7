"""The kubelet's checkpoint vectors (ported from the shared vectors into tests/data)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cpumanager.core.containermap import ContainerMap
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.ids import ContainerID, ContainerName, PodUID
from cpumanager.core.state import StateSnapshot

DATA = Path(__file__).resolve().parent.parent / "data" / "checkpoints.json"


@dataclass(frozen=True)
class Vector:
    raw: dict[str, Any]

    @property
    def name(self) -> str:
        return str(self.raw["name"])

    @property
    def format(self) -> str:
        return str(self.raw["format"])

    @property
    def content(self) -> bytes | None:
        text = self.raw["content"]
        return None if text is None else text.encode("utf-8")

    @property
    def valid(self) -> bool:
        return bool(self.raw["valid"])

    @property
    def policy(self) -> str:
        return str(self.raw["configured_policy"])

    @property
    def error(self) -> str:
        return str(self.raw.get("error_contains") or "")

    @property
    def checksum_matches(self) -> list[str]:
        return list(self.raw.get("checksum_matches") or [])

    @property
    def container_map(self) -> ContainerMap:
        return ContainerMap(
            (ContainerID(c["containerID"]), PodUID(c["podUID"]), ContainerName(c["containerName"]))
            for c in self.raw["initial_containers"]
        )

    def container_map_json(self) -> str:
        return json.dumps(
            {
                c["containerID"]: {"podUID": c["podUID"], "containerName": c["containerName"]}
                for c in self.raw["initial_containers"]
            }
        )

    @property
    def expected(self) -> StateSnapshot | None:
        exp = self.raw["expected"]
        if exp is None:
            return None
        return StateSnapshot(
            exp["policyName"],
            CPUSet(exp["defaultCPUSet"]),
            {
                PodUID(pod): {ContainerName(n): CPUSet(c) for n, c in containers.items()}
                for pod, containers in exp["assignments"].items()
            },
        )


def load() -> list[Vector]:
    return [Vector(raw) for raw in json.loads(DATA.read_text(encoding="utf-8"))]


ALL = load()
RELEASED = [v for v in ALL if v.format in ("v1", "v2")]
DEV = [v for v in ALL if v.format not in ("v1", "v2")]
