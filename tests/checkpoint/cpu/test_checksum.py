"""Literal checksums: go-spew renderings hashed with FNV-1a 32 (values from the kubelet)."""

from __future__ import annotations

import pytest

from cpumanager.checkpoint.cpu.checksum import checksum_of, render, verifies
from cpumanager.checkpoint.cpu.model import CheckpointV1, CheckpointV2
from cpumanager.checkpoint.go.fnv import fnv1a_32

PC = {"pod": {"container1": "4-6", "container2": "1-3"}}
PRE118 = {"container1": "4-6", "container2": "1-3"}
CID = {"containerID1": "4-6", "containerID2": "1-3"}

V2_CASES = [
    pytest.param("none", "", {}, 1353318690, id="none-initial"),
    pytest.param("static", "", {}, 3083571066, id="static-initial"),
    pytest.param("static", "0-63", {}, 1058907510, id="blog-0-63"),
    pytest.param("static", "2-15,17-31,34-47,49-63", {}, 4141502832, id="blog-strict"),
    pytest.param("none", "4-6", {}, 354655845, id="none-4-6"),
    pytest.param("none", "1-3", PC, 3610638499, id="none-pod"),
    pytest.param("other", "1-3", {}, 1394507217, id="other-policy"),
    pytest.param("none", "1.3", {}, 3021697696, id="unparsable-default"),
    pytest.param(
        "none", "1-3", {"pod": {"container1": "4-6", "container2": "asd"}}, 962272150, id="asd"
    ),
    pytest.param(
        "static", "0,3-7", {"pod-uid-1": {"app": "1-2", "sidecar": "8"}}, 300718079, id="1pod"
    ),
    pytest.param("static", "0-1", None, 1674203617, id="nil-entries"),
    pytest.param("static", "0-1", {"p": {}}, 391330294, id="empty-inner"),
    pytest.param(
        "static",
        "0-1",
        {"A": {"x<&>": "6"}, "a": {"c": "4-5"}, "b": {"a": "3", "z": "2"}},
        1595659163,
        id="html-chars-bytewise-order",
    ),
]

V1_CASES = [
    pytest.param("none", "1-3", {}, 1694838852, id="no-entries"),
    pytest.param("none", "1-3", CID, 3680390589, id="migration"),
    pytest.param("static", "7-9", CID, 2026311253, id="static"),
    pytest.param("none", "4-6", {}, 2912033808, id="pre118-default"),
    pytest.param("none", "1-3", PRE118, 1535905563, id="pre118-valid"),
    pytest.param("other", "1-3", {}, 4195836012, id="pre118-other"),
    pytest.param("none", "1.3", {}, 1025273327, id="pre118-unparsable"),
    pytest.param(
        "none", "1-3", {"container1": "4-6", "container2": "asd"}, 2764213924, id="pre118-asd"
    ),
    pytest.param(
        "static", "0,3-7", {"cid-app": "1-2", "cid-sidecar": "8"}, 3102233326, id="canonical"
    ),
]


@pytest.mark.parametrize(("policy", "default", "entries", "expected"), V2_CASES)
def test_v2_checksums(policy: str, default: str, entries: dict, expected: int) -> None:
    checkpoint = CheckpointV2(policy, default, entries)
    assert checksum_of(checkpoint) == expected
    assert verifies(checkpoint.with_checksum(expected))


@pytest.mark.parametrize(("policy", "default", "entries", "expected"), V1_CASES)
def test_v1_checksums(policy: str, default: str, entries: dict, expected: int) -> None:
    checkpoint = CheckpointV1(policy, default, entries)
    assert checksum_of(checkpoint) == expected
    assert verifies(checkpoint.with_checksum(expected))


def test_v1_hashed_under_the_v1_type_name_is_the_rejected_value() -> None:
    checkpoint = CheckpointV1("static", "0,3-7", {"cid-app": "1-2", "cid-sidecar": "8"})
    assert checksum_of(checkpoint, type_name="CPUManagerCheckpointV1") == 3328837715
    assert not verifies(checkpoint.with_checksum(3328837715))


def test_v2_hashed_under_the_v2_alias_name_is_rejected() -> None:
    checkpoint = CheckpointV2("static", "0,3-7", {"pod-uid-1": {"app": "1-2", "sidecar": "8"}})
    assert checksum_of(checkpoint, type_name="CPUManagerCheckpointV2") == 1678199427
    assert not verifies(checkpoint.with_checksum(1678199427))


RENDERINGS = [
    (
        CheckpointV2("none", "", {}),
        "(*state.CPUManagerCheckpoint){PolicyName:(string)none DefaultCPUSet:(string) "
        "Entries:(map[string]map[string]string)map[] Checksum:(checksum.Checksum)0}",
    ),
    (
        CheckpointV2("static", "0,3-7", {"pod-uid-1": {"sidecar": "8", "app": "1-2"}}, 99),
        "(*state.CPUManagerCheckpoint){PolicyName:(string)static DefaultCPUSet:(string)0,3-7 "
        "Entries:(map[string]map[string]string)map[pod-uid-1:map[app:1-2 sidecar:8]] "
        "Checksum:(checksum.Checksum)0}",
    ),
    (
        CheckpointV1("static", "0,3-7", {"cid-sidecar": "8", "cid-app": "1-2"}),
        "(*state.CPUManagerCheckpoint){PolicyName:(string)static DefaultCPUSet:(string)0,3-7 "
        "Entries:(map[string]string)map[cid-app:1-2 cid-sidecar:8] Checksum:(checksum.Checksum)0}",
    ),
    (
        CheckpointV2("static", "0-1", {"p": None, "q": {}}),
        "(*state.CPUManagerCheckpoint){PolicyName:(string)static DefaultCPUSet:(string)0-1 "
        "Entries:(map[string]map[string]string)map[p:<nil> q:map[]] Checksum:(checksum.Checksum)0}",
    ),
    (
        CheckpointV1("s", "", None),
        "(*state.CPUManagerCheckpoint){PolicyName:(string)s DefaultCPUSet:(string) "
        "Entries:(map[string]string)<nil> Checksum:(checksum.Checksum)0}",
    ),
]


@pytest.mark.parametrize(("checkpoint", "text"), RENDERINGS)
def test_renderings(checkpoint: CheckpointV1 | CheckpointV2, text: str) -> None:
    assert render(checkpoint) == text


def test_fnv1a_32_reference_values() -> None:
    assert fnv1a_32(b"") == 0x811C9DC5
    assert fnv1a_32(b"a") == 0xE40C292C
    assert fnv1a_32(b"foobar") == 0xBF9CF968


def test_zero_is_unchecked_and_type_name_text_in_values_is_not_substituted() -> None:
    assert verifies(CheckpointV2("anything", "junk", {}, 0))
    sneaky = CheckpointV1("CPUManagerCheckpointV1", "", {})
    assert render(sneaky).startswith(
        "(*state.CPUManagerCheckpoint){PolicyName:(string)CPUManagerCheckpointV1 "
    )


def test_strings_render_raw_and_surrogates_as_replacement() -> None:
    checkpoint = CheckpointV2('a "b" \\ c', "", {"p\ud800": {"x y": ""}})
    text = render(checkpoint)
    assert 'PolicyName:(string)a "b" \\ c DefaultCPUSet' in text
    assert "map[p\ufffd:map[x y:]]" in text
