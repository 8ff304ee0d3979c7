"""V1 <-> V2 migration, the container-map file, restore and diagnosis edge cases."""

from __future__ import annotations

import pytest

from cpumanager.checkpoint.cpu import codec
from cpumanager.checkpoint.cpu.migrate import parse_container_map, v1_to_v2, v2_to_v1
from cpumanager.checkpoint.cpu.model import CheckpointV1, CheckpointV2
from cpumanager.checkpoint.cpu.restore import V1_PSEUDO_POD, diagnose, restore_state
from cpumanager.core.containermap import ContainerMap
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.ids import ContainerID, ContainerName, PodUID
from cpumanager.errors import InputError, StateValidationError

CMAP = ContainerMap(
    [
        (ContainerID("cid-app"), PodUID("pod-uid-1"), ContainerName("app")),
        (ContainerID("cid-sidecar"), PodUID("pod-uid-1"), ContainerName("sidecar")),
    ]
)
V1 = CheckpointV1("static", "0,3-7", {"cid-app": "1-2", "cid-sidecar": "8"}, 3102233326)
V2 = CheckpointV2("static", "0,3-7", {"pod-uid-1": {"app": "1-2", "sidecar": "8"}}, 300718079)


def test_v1_to_v2_and_back() -> None:
    assert v1_to_v2(V1, CMAP) == V2
    assert v2_to_v1(V2, CMAP) == V1
    assert codec.encode_checkpoint(v2_to_v1(V2, CMAP)) == (
        b'{"policyName":"static","defaultCpuSet":"0,3-7","entries":{"cid-app":"1-2",'
        b'"cid-sidecar":"8"},"checksum":3102233326}'
    )


def test_v1_to_v2_lists_every_unknown_id_and_keeps_the_kubelet_text() -> None:
    v1 = CheckpointV1("static", "0", {"b": "1", "a": "2", "cid-app": "3"})
    with pytest.raises(StateValidationError) as caught:
        v1_to_v2(v1, CMAP, source="f")
    assert "containerID 'a' not found in initial containers list" in caught.value.message
    assert "unknown IDs: a, b" in caught.value.message
    assert caught.value.reasons == (
        "error migrating v1 checkpoint state to v2 checkpoint state: "
        "containerID 'a' not found in initial containers list",
    )


def test_v1_to_v2_two_ids_for_one_container_last_sorted_wins() -> None:
    cmap = CMAP.add(PodUID("pod-uid-1"), ContainerName("app"), ContainerID("zz"))
    v2 = v1_to_v2(CheckpointV1("s", "", {"cid-app": "1", "zz": "2"}), cmap)
    assert v2.plain_entries() == {"pod-uid-1": {"app": "2"}}


def test_v1_nil_entries_migrate_to_empty() -> None:
    assert v1_to_v2(CheckpointV1("s", "0", None), ContainerMap()).plain_entries() == {}


def test_v2_to_v1_needs_every_id_and_drops_empty_pods() -> None:
    with pytest.raises(StateValidationError, match="no container ID for pod-uid-1/app"):
        v2_to_v1(V2, ContainerMap())
    v1 = v2_to_v1(CheckpointV2("s", "0", {"p": None, "q": {}}), ContainerMap())
    assert v1.plain_entries() == {}


CONTAINER_MAPS = [
    (b'{"c1": {"podUID": "p", "containerName": "n"}}', {"c1": ("p", "n")}),
    (b'[{"containerID": "c1", "podUID": "p", "containerName": "n"}]', {"c1": ("p", "n")}),
    (b"{}", {}),
    (b"[]", {}),
]


@pytest.mark.parametrize(("data", "expected"), CONTAINER_MAPS)
def test_parse_container_map(data: bytes, expected: dict[str, tuple[str, str]]) -> None:
    assert {k: tuple(v) for k, v in parse_container_map(data, source="m").as_dict().items()} == (
        expected
    )


@pytest.mark.parametrize(
    "data",
    [b"", b"{", b"1", b'{"c": 1}', b'{"c": {"podUID": "p"}}', b'[{"podUID": "p"}]', b"[1]",
     b'{"c": {"podUID": "", "containerName": "n"}}'],
)  # fmt: skip
def test_parse_container_map_rejects_bad_files(data: bytes) -> None:
    with pytest.raises(InputError) as caught:
        parse_container_map(data, source="m")
    assert "\n" not in caught.value.message


def test_restore_state_policy_mismatch_and_missing_file() -> None:
    assert restore_state(None, source="s", configured_policy="none", container_map=CMAP) is None
    with pytest.raises(StateValidationError, match='configured policy "none" differs'):
        restore_state(
            codec.encode_checkpoint(V2), source="s", configured_policy="none", container_map=CMAP
        )


def test_diagnose_collects_every_reason() -> None:
    data = b'{"policyName":"static","defaultCpuSet":"x","entries":{"p":{"a":"y","b":"0"}}}'
    found = diagnose(data, source="s", configured_policy="none", all_cpus=CPUSet.range(0, 4))
    assert not found.ok
    assert len(found.reasons) == 3
    assert found.checksum_status == "unchecked (stored 0)"
    assert found.format == "v2"


def test_diagnose_validates_static_states_against_the_machine() -> None:
    data = codec.encode_checkpoint(V2)
    found = diagnose(data, source="s", all_cpus=CPUSet.range(0, 9), reserved=CPUSet([0]))
    assert found.ok, found.reasons
    assert found.checksum_status == "ok (300718079)"
    small = diagnose(data, source="s", all_cpus=CPUSet.range(0, 4))
    assert any("doesn't match with CPUs in state" in r for r in small.reasons)
    none_policy = b'{"policyName":"none","defaultCpuSet":"","checksum":1353318690}'
    assert diagnose(none_policy, source="s", all_cpus=CPUSet.range(0, 4)).notes


def test_diagnose_v1_without_a_container_map_is_a_note() -> None:
    found = diagnose(codec.encode_checkpoint(V1), source="s", all_cpus=CPUSet.range(0, 9))
    assert found.ok
    assert found.notes
    assert found.snapshot is not None
    assert PodUID(V1_PSEUDO_POD) in found.snapshot.assignments
    missing = diagnose(codec.encode_checkpoint(V1), source="s", container_map=ContainerMap())
    assert not missing.ok


def test_diagnose_undecodable() -> None:
    found = diagnose(b'{"checksum":5}', source="s")
    assert found.format == ""
    assert found.reasons == ("as V1: checkpoint is corrupted", "as V2: checkpoint is corrupted")
    assert found.checksum_status.startswith("mismatch (stored 5")
    assert diagnose(b"{", source="s").checksum_status == "not decodable"
