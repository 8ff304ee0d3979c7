"""The snapshot file's model: round trip, and one-line errors naming the bad field."""

from __future__ import annotations

import json

import pytest

from cpumanager.core.cpuset import CPUSet
from cpumanager.errors import SnapshotError
from cpumanager.formats.machine_format import topology_to_dict
from cpumanager.nodeview.podresources import (
    AllocatableResources,
    CallResult,
    ContainerResources,
    DeviceAllocation,
    PodResources,
    PodResourcesAnswers,
)
from cpumanager.nodeview.snapshot import (
    CheckpointFile,
    ConfigView,
    NodeSnapshot,
    Source,
    snapshot_from_json,
    snapshot_to_dict,
    snapshot_to_json,
)
from cpumanager.presets import get_preset

ANSWERS = PodResourcesAnswers(
    pods=(
        PodResources(
            "p",
            "ns",
            (ContainerResources("c", (DeviceAllocation("a/b", ("d",), (1,)),), CPUSet([2, 3])),),
        ),
    ),
    allocatable=AllocatableResources(cpu_ids=CPUSet.parse("1-11")),
    calls={"List": CallResult("ok"), "Get": CallResult("unimplemented", "older kubelet")},
)
SNAPSHOT = NodeSnapshot(
    node_name="n1",
    collected_at="2026-12-03T10:00:00Z",
    tool="cpumanager test",
    root="/",
    kubelet_root="/var/lib/kubelet",
    machine=topology_to_dict(get_preset("dual-socket-ht")),
    config=ConfigView(
        {
            "cpuManagerPolicy": {"value": "static", "from": "file"},
            "reservedSystemCPUs": {"value": "0", "from": "file"},
        }
    ),
    checkpoints={
        "cpu_manager_state": CheckpointFile(
            "cpu_manager_state", "/x", b'{"policyName":"none"}\x00\xff', None, "bad"
        )
    },
    pod_resources=ANSWERS,
    pods=None,
    sources=(Source("pods", "not-given", "", "no --pods"),),
)


def _tampered(edit) -> bytes:
    tree = json.loads(snapshot_to_json(SNAPSHOT))
    edit(tree)
    return json.dumps(tree).encode()


def test_round_trip_is_exact() -> None:
    data = snapshot_to_json(SNAPSHOT)
    again = snapshot_from_json(data)
    assert snapshot_to_json(again) == data
    assert again.pod_resources == ANSWERS
    assert again.checkpoints["cpu_manager_state"].raw == b'{"policyName":"none"}\x00\xff'
    assert again.kubelet_config().cpu_manager_policy == "static"
    assert again.topology() == get_preset("dual-socket-ht")


def test_every_key_is_present_even_when_empty() -> None:
    tree = snapshot_to_dict(SNAPSHOT)
    assert tree["pods"] is None
    assert set(tree) >= {
        "schema",
        "schemaVersion",
        "machine",
        "config",
        "checkpoints",
        "podResources",
        "pods",
        "sources",
        "nodeName",
        "collectedAt",
    }


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            lambda t: t["checkpoints"]["cpu_manager_state"].update(raw="@@"),
            "checkpoints.cpu_manager_state.raw: not base64",
        ),
        (lambda t: t["checkpoints"].update(other={}), "checkpoints.other: unknown checkpoint kind"),
        (
            lambda t: t["podResources"]["pods"][0]["containers"][0].update(cpuIds="x"),
            "podResources.pods[0].containers[0].cpuIds",
        ),
        (
            lambda t: t["podResources"]["pods"][0]["containers"][0].update(cpuIds="0-99999999"),
            "is above",
        ),
        (
            lambda t: t["podResources"]["calls"]["List"].update(status="great"),
            "podResources.calls.List.status",
        ),
        (lambda t: t["sources"][0].update(status="fine"), "sources[0].status"),
        (lambda t: t.update(machine={"cpus": "nope"}), "snapshot field machine"),
        (
            lambda t: t.update(pods=[{"kind": "Pod", "metadata": {}, "spec": {}}]),
            "snapshot field pods",
        ),
        (lambda t: t.update(schemaVersion="1"), "schemaVersion: expected a whole number"),
        (lambda t: t.update(schemaVersion=0), "an older cpumanager"),
        (lambda t: t.update(hugepages={"x": {}}), "hugepages.x: keys are NUMA node ids"),
        (lambda t: t.update(hugepages={"0": {"memory": 1}}), "hugepages-<size>"),
        (lambda t: t.update(hugepages={"0": {"hugepages-2Mi": -1}}), "out of range"),
    ],
    ids=[
        "base64",
        "kind",
        "cpu-ids",
        "huge-cpu-id",
        "call-status",
        "source-status",
        "machine",
        "pods",
        "version-type",
        "version-old",
        "hugepages-node",
        "hugepages-name",
        "hugepages-negative",
    ],
)
def test_bad_fields_are_named(edit, expected: str) -> None:
    with pytest.raises(SnapshotError) as caught:
        snapshot_from_json(_tampered(edit), source="s.json")
    assert expected in caught.value.message
    assert "\n" not in caught.value.message


def test_size_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    import cpumanager.nodeview.snapshot as module

    monkeypatch.setattr(module, "MAX_SNAPSHOT_BYTES", 100)
    with pytest.raises(SnapshotError, match="more than a snapshot may hold"):
        snapshot_from_json(snapshot_to_json(SNAPSHOT))
