"""The state commands' pure workflow: lenient reading, conversion, diff."""

from __future__ import annotations

import pytest

from cpumanager.checkpoint.convert import (
    checksum_status,
    convert,
    diff_states,
    read_for_conversion,
    read_lenient,
)
from cpumanager.checkpoint.cpu import codec
from cpumanager.checkpoint.cpu.restore import V1_PSEUDO_POD
from cpumanager.core.containermap import ContainerMap
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.ids import ContainerID, ContainerName, PodUID
from cpumanager.core.state import StateSnapshot
from cpumanager.errors import (
    CheckpointFormatError,
    ContainerMapRequiredError,
)

V2 = (
    b'{"policyName":"static","defaultCpuSet":"0,3-7","entries":{"pod-uid-1":'
    b'{"app":"1-2","sidecar":"8"}},"checksum":300718079}'
)
V1 = (
    b'{"policyName":"static","defaultCpuSet":"0,3-7","entries":{"cid-app":"1-2",'
    b'"cid-sidecar":"8"},"checksum":3102233326}'
)
CMAP = ContainerMap(
    [
        (ContainerID("cid-app"), PodUID("pod-uid-1"), ContainerName("app")),
        (ContainerID("cid-sidecar"), PodUID("pod-uid-1"), ContainerName("sidecar")),
    ]
)
BAD_SUM = V2.replace(b"300718079", b"1")


def test_lenient_reading_shows_a_wrong_checksum_instead_of_refusing() -> None:
    reading = read_lenient(BAD_SUM, source="f", container_map=None)
    assert checksum_status(reading.attempt) == "MISMATCH (computed 300718079)"
    assert reading.snapshot.assignments["pod-uid-1"]["app"] == CPUSet.parse("1-2")
    good = read_lenient(V2, source="f", container_map=None)
    assert checksum_status(good.attempt) == "ok"


def test_lenient_reading_of_v1_without_a_map_keys_by_container_id() -> None:
    reading = read_lenient(V1, source="f", container_map=None)
    assert set(reading.snapshot.assignments[V1_PSEUDO_POD]) == {"cid-app", "cid-sidecar"}
    mapped = read_lenient(V1, source="f", container_map=CMAP)
    assert mapped.snapshot == read_lenient(V2, source="f", container_map=None).snapshot


@pytest.mark.parametrize("data", [b"", b"hello", b'{"policyName":1}'])
def test_lenient_reading_refuses_what_no_format_decodes(data: bytes) -> None:
    with pytest.raises(CheckpointFormatError, match="nothing was written"):
        read_lenient(data, source="f", container_map=None)


def test_strict_reading_refuses_a_wrong_checksum_and_unknown_keys() -> None:
    with pytest.raises(CheckpointFormatError, match="checkpoint is corrupted"):
        read_for_conversion(BAD_SUM, source="f", strict_checksum=True)
    assert read_for_conversion(BAD_SUM, source="f", strict_checksum=False).format == "v2"
    newer = b'{"policyName":"static","defaultCpuSet":"0","data":"x","checksum":0}'
    with pytest.raises(CheckpointFormatError, match='"data"'):
        read_for_conversion(newer, source="f", strict_checksum=False)


def test_conversion_round_trips_through_the_container_map() -> None:
    v1 = read_for_conversion(V1, source="f", strict_checksum=True)
    up = convert(v1, target="v2", container_map=CMAP, source="f", destination="o")
    assert (up.source_format, up.target_format, up.data) == ("v1", "v2", V2)
    assert up.checksum == 300718079
    v2 = read_for_conversion(up.data, source="o", strict_checksum=True)
    down = convert(v2, target="v1", container_map=CMAP, source="o", destination="p")
    assert down.data == V1


def test_rewrite_keeps_the_format_and_canonicalises_cpu_lists() -> None:
    edited = (
        b'{"policyName":"static","defaultCpuSet":"7,6,5,4,3,0",'
        b'"entries":{"p":{"c":"2,1"}},"checksum":5}'
    )
    checkpoint = read_for_conversion(edited, source="f", strict_checksum=False)
    result = convert(checkpoint, target=None, container_map=None, source="f", destination="o")
    assert result.target_format == "v2"
    assert codec.decode(result.data, source="o").default_cpu_set == "0,3-7"


@pytest.mark.parametrize(("data", "target"), [(V1, "v2"), (V2, "v1")])
def test_changing_to_or_from_v1_needs_the_map(data: bytes, target: str) -> None:
    checkpoint = read_for_conversion(data, source="f", strict_checksum=True)
    with pytest.raises(ContainerMapRequiredError, match="--containers"):
        convert(checkpoint, target=target, container_map=None, source="f", destination="o")  # type: ignore[arg-type]


def test_diff_lists_added_changed_removed_in_key_order() -> None:
    before = StateSnapshot("static", CPUSet.parse("0,3-7"), {"a": {"x": CPUSet.parse("1")}})
    after = StateSnapshot(
        "static",
        CPUSet.parse("0,3-6"),
        {"a": {"x": CPUSet.parse("1,7")}, "b": {"y": CPUSet.parse("2")}},
    )
    found = diff_states(before, after)
    assert [(c.pod, c.change) for c in found.changes] == [("a", "changed"), ("b", "added")]
    assert found.shared_lost == CPUSet.parse("7")
    assert not found.shared_gained
    assert not found.same
    assert diff_states(before, before).same
    assert [c.change for c in diff_states(after, before).changes] == ["changed", "removed"]
