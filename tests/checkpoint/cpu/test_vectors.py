"""Every kubelet checkpoint vector gets the kubelet's verdict (restore level, V1 first)."""

from __future__ import annotations

import pytest

from cpumanager.checkpoint.cpu import codec
from cpumanager.checkpoint.cpu.restore import diagnose, restore_state
from cpumanager.core.state import StateSnapshot
from cpumanager.errors import CheckpointCorruptError, CheckpointError
from tests.checkpoint.vectors import ALL, DEV, RELEASED, Vector


def test_all_vectors_are_ported() -> None:
    assert len(ALL) == 71
    assert sorted({v.format for v in ALL}) == ["v1", "v2", "v3-dev", "v4-dev"]
    assert len(RELEASED) == 50
    assert len(DEV) == 21


def _restore(v: Vector, *, order: codec.DecodeOrder = "v1-first") -> StateSnapshot | None:
    return restore_state(
        v.content,
        source="cpu_manager_state",
        configured_policy=v.policy,
        container_map=v.container_map,
        order=order,
    )


@pytest.mark.parametrize("v", ALL, ids=lambda v: v.name)
def test_restore_verdict(v: Vector) -> None:
    if v.valid:
        restored = _restore(v)
        if v.content is None:
            assert restored is None
            fresh = StateSnapshot(v.policy)
            assert codec.encode_v2(fresh).decode() == v.raw["written_file"]
        else:
            assert restored == v.expected
        return
    with pytest.raises(CheckpointError) as caught:
        _restore(v)
    if v.error == "checkpoint is corrupted":
        assert isinstance(caught.value, CheckpointCorruptError)
    else:
        assert v.error in caught.value.message
    assert "\n" not in caught.value.message


@pytest.mark.parametrize("v", [v for v in ALL if v.content is not None], ids=lambda v: v.name)
def test_checksum_matches(v: Vector) -> None:
    assert v.content is not None
    matches = sorted(
        result.format
        for result in codec.attempts(v.content)
        if result.checkpoint is not None
        and result.checkpoint.checksum == result.computed_checksum
        and result.checkpoint.checksum != 0
    )
    assert matches == sorted(v.checksum_matches)


@pytest.mark.parametrize("v", ALL, ids=lambda v: v.name)
def test_v2_first_order_agrees_except_where_recorded(v: Vector) -> None:
    valid = v.raw.get("valid_if_v2_first", v.valid)
    if v.content is None:
        assert _restore(v, order="v2-first") is None
    elif valid:
        assert _restore(v, order="v2-first") == (v.expected if v.valid else _v2_first_state(v))
    else:
        with pytest.raises(CheckpointError):
            _restore(v, order="v2-first")


def _v2_first_state(v: Vector) -> StateSnapshot:
    assert v.content is not None
    return codec.snapshot_from_v2(codec.decode_as(v.content, "v2", source="x"), source="x")  # type: ignore[arg-type]


@pytest.mark.parametrize("v", [v for v in ALL if v.content is not None], ids=lambda v: v.name)
def test_diagnosis_agrees_with_the_kubelet(v: Vector) -> None:
    assert v.content is not None
    found = diagnose(
        v.content, source="x", configured_policy=v.policy, container_map=v.container_map
    )
    assert found.ok is v.valid, found.reasons
    if v.valid:
        assert found.snapshot == v.expected


CANONICAL = {
    "derived/kubelet-initial-none",
    "derived/kubelet-initial-static-before-policy-start",
    "derived/blog-static-0-63",
    "derived/blog-static-strict",
    "derived/one-pod-two-containers",
    "derived/html-escaping-and-key-order",
    "derived/empty-inner-map",
    "derived/v1-canonical",
    "derived/checksum-zero-accepted",
    "derived/overlapping-assignments",
}


@pytest.mark.parametrize("v", [v for v in ALL if v.name in CANONICAL], ids=lambda v: v.name)
def test_canonical_vectors_reencode_byte_for_byte(v: Vector) -> None:
    assert v.content is not None
    checkpoint = codec.decode(v.content, source="x", order="v2-first")
    assert checkpoint.format == v.format
    assert codec.encode_checkpoint(checkpoint) == v.content


def test_canonical_set_is_complete() -> None:
    assert len([v for v in ALL if v.name in CANONICAL]) == len(CANONICAL)
