"""Hostile snapshot files: any mutation loads or fails with one SnapshotError line."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cpumanager.errors import SnapshotError
from cpumanager.nodeview.podresources import answers_from_dict
from cpumanager.nodeview.pods import reduce_pod_list
from cpumanager.nodeview.snapshot import (
    CheckpointFile,
    NodeSnapshot,
    Source,
    snapshot_from_json,
    snapshot_to_dict,
)

NODE = Path(__file__).resolve().parent.parent / "data" / "nodes" / "gpu"


def _base() -> dict:
    _name, pods = reduce_pod_list(json.loads((NODE / "pods.json").read_text()), node_name=None)
    answers = answers_from_dict(json.loads((NODE / "podresources.json").read_text()))
    state = (NODE / "var/lib/kubelet/cpu_manager_state").read_bytes()
    snap = NodeSnapshot(
        node_name="gpu-node-1",
        collected_at="2026-12-03T10:00:00Z",
        tool="test",
        root="/",
        kubelet_root="/var/lib/kubelet",
        machine={"cpus": [{"cpu": 0, "core": 0, "socket": 0, "numa": 0}]},
        config=None,
        checkpoints={"cpu_manager_state": CheckpointFile("cpu_manager_state", "/x", state, None)},
        pod_resources=answers,
        pods=pods,
        sources=(Source("machine", "ok"),),
    )
    return snapshot_to_dict(snap)


BASE = _base()
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)


def _paths(tree: object, prefix: tuple = ()) -> list[tuple]:
    found = [prefix]
    if isinstance(tree, dict):
        for key, value in tree.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(tree, list):
        for index, value in enumerate(tree):
            found += _paths(value, (*prefix, index))
    return found


PATHS = [p for p in _paths(BASE) if p]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(path=st.sampled_from(PATHS), value=JSON_VALUES)
def test_any_replaced_value_loads_or_is_one_line(path: tuple, value: object) -> None:
    tree = json.loads(json.dumps(BASE))
    target = tree
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    message = ""
    try:
        snapshot_from_json(json.dumps(tree).encode())
    except SnapshotError as err:
        message = err.message
    assert "\n" not in message
    assert not message or message.startswith("snapshot")
