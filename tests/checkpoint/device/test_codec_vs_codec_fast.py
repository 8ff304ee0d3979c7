"""The fast kubelet_internal_checkpoint writer and reader agree with the exact path."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cpumanager.checkpoint import kinds
from cpumanager.checkpoint.device import codec as device
from cpumanager.checkpoint.device import codec_fast as device_fast
from cpumanager.checkpoint.device.codec import (
    DeviceAttempt,
    DeviceCheckpointData,
    DeviceManagerCheckpoint,
    PodDevicesEntry,
)
from cpumanager.checkpoint.go import gojson
from tests.checkpoint.mutations import merged, mutated, outcome, with_python_checksum

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "device"

TEXTS = st.one_of(
    st.sampled_from(["vendor.com/gpu", "GPU-0", "pod-1", "c", "", "-1"]),
    st.text(alphabet=st.sampled_from('"\\<>&é\n :,[]{}ab01-'), max_size=5),
)
IDS = st.one_of(st.none(), st.lists(TEXTS, max_size=3).map(tuple))
ENTRIES = st.builds(
    PodDevicesEntry,
    TEXTS,
    TEXTS,
    TEXTS,
    st.one_of(st.none(), st.dictionaries(st.integers(-1, 12), IDS, max_size=3)),
    st.one_of(st.none(), st.binary(max_size=40)),
)
CHECKPOINTS = st.builds(
    DeviceManagerCheckpoint,
    st.builds(
        DeviceCheckpointData,
        st.one_of(st.none(), st.lists(ENTRIES, max_size=4).map(tuple)),
        st.one_of(st.none(), st.dictionaries(TEXTS, IDS, max_size=3)),
    ),
    st.one_of(st.integers(0, 20), st.integers(0, (1 << 64) - 1)),
)


def exact_attempt(data: bytes) -> DeviceAttempt:
    """The kubelet's read (V2, then V1) through the faithful parser and type walk only."""
    try:
        tree = gojson.parse(data)
    except gojson.GoJSONSyntaxError as err:
        return DeviceAttempt("v2", "syntax", None, err.message)
    return device.attempt_device(data, tree=tree)


def exact_encode(checkpoint: DeviceManagerCheckpoint) -> bytes:
    return device.marshal(checkpoint, device.CHECKPOINT_TYPE)


def exact_render(checkpoint: DeviceManagerCheckpoint) -> str:
    return device.spew(checkpoint.data, device.DATA_TYPE)


def exact_any(data: bytes) -> object:
    kind, tree = kinds._detect(data, "<bytes>")
    if kind == "device":
        return kind, device.decode_device(data, source="<bytes>", tree=tree)
    return kinds.decode_any(data)


def python_checksum(canonical: bytes) -> int | None:
    attempt = exact_attempt(canonical)
    return attempt.computed_checksum if attempt.kind in ("ok", "corrupt") else None


def usual(entries: int, dash: str = "-") -> DeviceManagerCheckpoint:
    rows = tuple(
        PodDevicesEntry(
            f"pod{dash}{index // 2}",
            f"c{index % 2}",
            "vendor.com/gpu",
            {index % 3 - 1: (f"GPU{dash}{index}", f"GPU{dash}x{index}"), 10: ()},
            bytes(range(index, index + 30)),
        )
        for index in range(entries)
    )
    registered = {"vendor.com/gpu": tuple(f"GPU{dash}{i}" for i in range(entries)), "x": ()}
    checkpoint = DeviceManagerCheckpoint(DeviceCheckpointData(rows, registered))
    return checkpoint.with_checksum(device.checksum_of_device(checkpoint))


@pytest.mark.parametrize("entries", [0, 1, 5])
def test_the_usual_file_takes_the_fast_paths(entries: int) -> None:
    checkpoint = usual(entries)
    assert device_fast.spew_device(checkpoint) == exact_render(checkpoint)
    data = device_fast.marshal_device(checkpoint)
    assert data == exact_encode(checkpoint)
    assert device_fast.decode_device_plain(data) == checkpoint
    assert kinds.decode_any(data) == ("device", checkpoint)


def test_v1_and_corrupt_files_go_to_the_exact_reader() -> None:
    v1 = (GOLDEN / "generated-v1-pre120.json").read_bytes()
    assert device_fast.decode_device_plain(v1) is None
    assert device.attempt_device(v1) == exact_attempt(v1)
    corrupt = exact_encode(usual(3).with_checksum(1))
    assert device_fast.decode_device_plain(corrupt) is None
    assert device.attempt_device(corrupt).kind == "corrupt"


@given(CHECKPOINTS)
@settings(max_examples=300)
def test_random_checkpoints_write_and_read_the_same(checkpoint: DeviceManagerCheckpoint) -> None:
    assert device.render_device(checkpoint) == exact_render(checkpoint)
    assert device.encode_device(checkpoint) == exact_encode(checkpoint)
    fresh = device.with_fresh_checksum(checkpoint)
    data = exact_encode(fresh)  # type: ignore[arg-type]
    fast = device_fast.decode_device_plain(data)
    expected = exact_attempt(data)
    if fast is not None:
        assert expected.kind == "ok"
        assert expected.checkpoint == fast
    assert device.attempt_device(data) == expected
    assert outcome(lambda: kinds.decode_any(data)) == outcome(lambda: exact_any(data))


@given(st.data())
@settings(max_examples=400)
def test_mutated_files_read_the_same(data: st.DataObject) -> None:
    text = data.draw(mutated(exact_encode(usual(data.draw(st.sampled_from([1, 3]))))))
    if data.draw(st.booleans()):
        text = with_python_checksum(text, b"Checksum", python_checksum)
    assert device.attempt_device(text) == exact_attempt(text)
    assert outcome(lambda: kinds.decode_any(text)) == outcome(lambda: exact_any(text))


@given(st.data())
@settings(max_examples=60)
def test_merged_duplicates_read_the_same(data: st.DataObject) -> None:
    base = exact_encode(usual(3, dash=""))
    assert b"-" not in base.replace(b'"-1"', b"")
    text = with_python_checksum(data.draw(merged(base)), b"Checksum", python_checksum)
    assert device.attempt_device(text) == exact_attempt(text)


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.json")), ids=lambda p: p.name)
def test_golden_files_read_the_same(path: Path) -> None:
    data = path.read_bytes()
    boot = data.replace(b'{"Data"', b'{"BootID":"b1","Data"', 1)  # the development line's key
    for variant in (data, data.replace(b":", b": "), data.replace(b'"0"', b'"-0"'), boot):
        assert device.attempt_device(variant) == exact_attempt(variant)
        assert outcome(lambda v=variant: kinds.decode_any(v)) == outcome(
            lambda v=variant: exact_any(v)
        )


@given(st.lists(st.binary(max_size=12), max_size=6), st.booleans())
def test_bulk_byte_texts_match_one_value_at_a_time(values: list[bytes], thirds: bool) -> None:
    """Both bulk paths (lengths all multiples of 3, or not; empty values) give each value's."""
    if thirds:
        values = [value[: len(value) - len(value) % 3] for value in values]
    assert device_fast._base64_all(values) == [base64.b64encode(v).decode() for v in values]
    assert device_fast._spew_all_bytes(values) == [" ".join(map(str, v)) for v in values]


@given(
    st.lists(
        st.one_of(
            st.binary(max_size=9).map(lambda v: base64.b64encode(v).decode()),
            st.text(alphabet="AQgw+/=ab", max_size=9),
        ),
        max_size=5,
    )
)
def test_base64_reading_matches_b64decode(texts: list[str]) -> None:
    """Valid encodings, and texts with padding inside, too much of it or too little."""
    expected: list[bytes] | None = []
    for text in texts:
        try:
            expected.append(base64.b64decode(text, validate=True))  # type: ignore[union-attr]
        except ValueError:
            expected = None
            break
    assert device_fast._base64_decoded(texts) == expected
