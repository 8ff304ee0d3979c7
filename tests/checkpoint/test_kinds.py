"""decode_any: the three kubelet checkpoints recognised by content, round trips for each."""

from __future__ import annotations

from pathlib import Path

import pytest

from cpumanager.checkpoint.kinds import decode_any, detect_kind, encode_any
from cpumanager.errors import CheckpointCorruptError, CheckpointFormatError

GOLDEN = Path(__file__).resolve().parent / "golden"
VALID = [
    *((p, "cpu") for p in sorted(GOLDEN.glob("*.json"))),
    *((p, "memory") for p in sorted((GOLDEN / "memory").glob("*.json")) if "invalid" not in p.name),
    *((p, "device") for p in sorted((GOLDEN / "device").glob("*.json"))),
]


@pytest.mark.parametrize(("path", "kind"), VALID, ids=lambda v: getattr(v, "name", v))
def test_every_golden_file_is_recognised(path: Path, kind: str) -> None:
    data = path.read_bytes()
    found, checkpoint = decode_any(data, source=path.name)
    assert found == kind
    if "canonical" not in path.name and not path.name.startswith("kubelet-test-restore-valid"):
        assert encode_any(checkpoint) == data


DETECT = [
    (b'{"policyName":"none","defaultCpuSet":"","checksum":1}', "cpu"),
    (b'{"POLICYNAME":"static","entries":{}}', "cpu"),
    (b'{"policyName":"Static","MachineState":{}}', "memory"),
    (b'{"data":{"PodDeviceEntries":null}}', "device"),
]


@pytest.mark.parametrize(
    ("data", "kind"), DETECT, ids=[d[1] + str(i) for i, d in enumerate(DETECT)]
)
def test_detection_by_content(data: bytes, kind: str) -> None:
    assert detect_kind(data, source="f") == kind


@pytest.mark.parametrize(
    "data",
    [b"", b"[]", b'{"data":"a string, as in newer layouts"}', b'{"hello":1}', b"\xff"],
)
def test_unknown_content_is_one_line_format_error(data: bytes) -> None:
    with pytest.raises(CheckpointFormatError) as caught:
        decode_any(data, source="x")
    assert "\n" not in caught.value.message


def test_corruption_is_reported_per_kind() -> None:
    data = (GOLDEN / "memory" / "kubelet-test-invalid-checksum.json").read_bytes()
    with pytest.raises(CheckpointCorruptError):
        decode_any(data, source="memory_manager_state")
