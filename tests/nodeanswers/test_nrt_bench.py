"""The Python side of bench/nrt_plugin_fleet.py: NFD's rules restated, generated cases,
the comparison (the plugin itself runs outside the repository)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.deploy.test_nrt_manifests import _schema, validate

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def fleet() -> Iterator[ModuleType]:
    sys.path.insert(0, str(BENCH))
    try:
        import nrt_plugin_fleet  # type: ignore[import-not-found]

        yield nrt_plugin_fleet
    finally:
        sys.path.remove(str(BENCH))


def _zones(document: dict[str, Any]) -> dict[str, dict[str, dict[str, str]]]:
    return {z["name"]: {r["name"]: r for r in z["resources"]} for z in document["zones"]}


def _fixture_case(fleet: ModuleType, name: str) -> dict[str, Any]:
    return next(c for c in fleet.fixture_cases() if c["id"] == f"fixture/{name}/0")


def test_nfd_publishes_no_memory_without_the_memory_manager(fleet: ModuleType) -> None:
    record = _fixture_case(fleet, "kubeadm")
    zones = _zones(record["objects"]["nfd"])
    # GetAllocatableResources: CPUs 1-7,9-15; db-0 and cache-0 hold 1-3,9-11 exclusively.
    assert zones["node-0"]["cpu"] == {
        "name": "cpu", "capacity": "8", "allocatable": "6", "available": "0",
    }  # fmt: skip
    assert zones["node-1"]["cpu"]["available"] == "8"
    assert all("memory" not in z for z in zones.values())
    # The 2-CPU / 80 GiB pod: the kubelet admits it, the node fits it.
    assert record["kubelet"] == {"admitted": True, "reason": ""}
    assert record["fit"]["ok"]


def test_nfd_memory_equals_ours_under_the_static_memory_manager(fleet: ModuleType) -> None:
    record = _fixture_case(fleet, "memory-static")
    ours, nfd = (_zones(record["objects"][k]) for k in ("ours", "nfd"))
    for zone in ours:
        assert nfd[zone]["memory"]["available"] == ours[zone]["memory"]["available"]
        assert nfd[zone]["memory"]["allocatable"] == ours[zone]["memory"]["allocatable"]


def test_generated_cases_are_valid_objects(fleet: ModuleType) -> None:
    cases = list(fleet.generated_cases(4, seed=7))
    assert len(cases) == 4
    for record in cases:
        assert set(record["objects"]) == {"ours", "nfd"}
        for document in record["objects"].values():
            assert validate(document, _schema()) == []
        assert record["pod"]["spec"]["containers"]
    again = [c["objects"]["ours"] for c in fleet.generated_cases(4, seed=7)]
    assert again == [c["objects"]["ours"] for c in cases]  # seeded: the same fleet


def test_compare_counts_and_explains(fleet: ModuleType, tmp_path: Path) -> None:
    record = _fixture_case(fleet, "kubeadm")
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps(record) + "\n")
    verdicts = tmp_path / "verdicts.jsonl"
    lines = [
        {"id": record["id"], "object": "ours", "filter": "ok", "score": 50},
        {"id": record["id"], "object": "nfd", "filter": "Unschedulable: x", "score": 10},
    ]
    verdicts.write_text("".join(json.dumps(v) + "\n" for v in lines))
    result = fleet.compare(cases, verdicts)
    assert result["counts"]["ours"]["agree"] == 1
    assert result["counts"]["nfd"]["disagree"] == 1
    (item,) = result["disagreements"]["nfd"]
    assert item["cause"].startswith("memory in no zone")
    assert result["score_differs"] == 1
