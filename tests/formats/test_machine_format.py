"""The machine file format: dict <-> CPUTopology, exact round trips and one-line errors."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from cpumanager.errors import MachineError
from cpumanager.formats.machine_format import topology_from_dict, topology_to_dict
from cpumanager.presets import get_preset, list_presets, synthetic

SMALL: dict[str, Any] = {
    "name": "tiny",
    "cpus": [
        {"cpu": 0, "socket": 0, "numa": 0, "core": 0, "l3": 0},
        {"cpu": 1, "socket": 0, "numa": 0, "core": 0, "l3": 0},
        {"cpu": 2, "socket": 1, "numa": 1, "core": 2, "l3": 1},
    ],
    "numa_nodes": [
        {"id": 0, "memory_bytes": 1024, "cpus": "0-1"},
        {"id": 1, "memory_bytes": None, "cpus": "2"},
        {"id": 2, "memory_bytes": 4096, "cpus": ""},
    ],
    "distances": {
        "0": {"0": 10, "1": 20, "2": 30},
        "1": {"0": 20, "1": 10, "2": 30},
        "2": {"0": 30, "1": 30, "2": 10},
    },
}


@pytest.mark.parametrize("name", [p.name for p in list_presets()])
def test_every_preset_round_trips_through_json(name: str) -> None:
    topology = get_preset(name)
    data = json.loads(json.dumps(topology_to_dict(topology)))
    again = topology_from_dict(data)
    assert again == topology
    assert again.name == topology.name
    assert again.counters() == topology.counters()
    assert [n.distances for n in again.numa_nodes] == [n.distances for n in topology.numa_nodes]


def test_shape_of_the_dict() -> None:
    data = topology_to_dict(topology_from_dict(SMALL))
    assert data == SMALL  # counters equal to the derived ones are not written
    assert list(data["cpus"][0]) == ["cpu", "socket", "numa", "core", "l3"]


def test_odd_declared_counters_are_written_and_read() -> None:
    data = topology_to_dict(get_preset("topoDualSocketHT"))
    assert data["counters"] == {
        "cpus": 12, "cores": 6, "sockets": 2, "numa_nodes": 0, "uncore_caches": 1,
    }  # fmt: skip
    assert topology_from_dict(data).counters() == (12, 6, 2, 0, 1)


def test_integer_keys_and_missing_optional_parts_are_accepted() -> None:
    data = {
        "cpus": SMALL["cpus"],
        "distances": {0: {0: 10, 1: 20}, 1: {0: 20, 1: 10}},
    }
    topology = topology_from_dict(data)
    assert topology.numa_ids() == (0, 1)
    assert topology.distance(1, 0) == 20
    assert topology.name == ""


def test_warnings_are_kept() -> None:
    topology = topology_from_dict({**SMALL, "warnings": ["odd tree"]})
    assert topology.warnings == ("odd tree",)
    assert topology_to_dict(topology)["warnings"] == ["odd tree"]


def _broken(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    data = copy.deepcopy(SMALL)
    target: Any = data
    for key in path[:-1]:
        target = target[key]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return data


_DELETE = object()

BROKEN = [
    ("not a mapping", [1, 2], "must be a mapping"),
    ("unknown field", {**SMALL, "gpus": []}, "unknown machine field"),
    ("no cpus", _broken(("cpus",), _DELETE), "needs a 'cpus' list"),
    ("empty cpus", _broken(("cpus",), []), "at least one CPU"),
    ("cpus not a list", _broken(("cpus",), "0-3"), "must be a list"),
    ("cpu not a mapping", _broken(("cpus", 0), 5), r"cpus\[0\] must be a mapping"),
    ("cpu lacks l3", _broken(("cpus", 1, "l3"), _DELETE), r"cpus\[1\] lacks l3"),
    ("negative id", _broken(("cpus", 2, "socket"), -1), "non-negative"),
    ("text id", _broken(("cpus", 2, "core"), "2"), "must be an integer"),
    ("bool id", _broken(("cpus", 2, "core"), True), "must be an integer"),
    ("duplicate cpu", _broken(("cpus", 1, "cpu"), 0), "described twice"),
    ("huge cpu id", _broken(("cpus", 1, "cpu"), 10**20), "above the largest supported"),
    ("huge numa id", _broken(("cpus", 1, "numa"), 1 << 21), "above the largest supported"),
    ("node list", _broken(("numa_nodes",), {"0": 1}), "must be a list"),
    ("node lacks id", _broken(("numa_nodes", 0), {"memory_bytes": 1}), "with an 'id'"),
    ("node twice", _broken(("numa_nodes", 1, "id"), 0), "listed twice"),
    ("node cpus wrong", _broken(("numa_nodes", 0, "cpus"), "0"), "lists cpus '0'"),
    ("node cpus bad", _broken(("numa_nodes", 0, "cpus"), "0-"), "numa_nodes"),
    ("memory text", _broken(("numa_nodes", 0, "memory_bytes"), "1G"), "integer"),
    ("distances list", _broken(("distances",), [10]), "must map node id"),
    ("distance row", _broken(("distances", "0"), [10]), "must map node id"),
    ("distance key", _broken(("distances", "x"), {"0": 1}), "distances key"),
    ("distance value", _broken(("distances", "0", "1"), "far"), "integer"),
    ("counters", {**SMALL, "counters": {"threads": 2}}, "unknown counter"),
    ("counters type", {**SMALL, "counters": [1]}, "must map"),
    ("name", {**SMALL, "name": 5}, "must be text"),
    ("warnings", {**SMALL, "warnings": "x"}, "list of strings"),
]


@pytest.mark.parametrize(("data", "message"), [b[1:] for b in BROKEN], ids=[b[0] for b in BROKEN])
def test_validation_errors_are_one_line(data: Any, message: str) -> None:
    with pytest.raises(MachineError, match=message) as info:
        topology_from_dict(data)
    assert "\n" not in str(info.value)


def test_synthetic_round_trip_keeps_memory_and_cpuless_nodes() -> None:
    topology = synthetic(sockets=1, cores_per_numa=2, cpuless_memory_bytes=[7, None])
    again = topology_from_dict(topology_to_dict(topology))
    assert again.numa_ids() == (0, 1, 2)
    assert again.numa_node(1).memory_bytes == 7
    assert again.numa_node(2).memory_bytes is None
