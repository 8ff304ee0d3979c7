"""The device checkpoint with ``Data`` omitted, null or empty, as the v1.32 kubelet reads it.

``getCheckpoint`` pre-initialises ``Data`` with an empty (non-nil) slice and map before
``json.Unmarshal``; an omitted, ``null`` or ``{}`` ``Data`` leaves them so, and the checksum
is go-spew of ``[]`` and ``map[]`` (2932075448); explicit ``null`` members make them nil
(``<nil>``). Verdicts measured with the vendored v1.32 ``devicemanager/checkpoint`` package.
Such a file has no key that tells its kind: ``state verify`` takes the kind from the file's
name (``kubelet_internal_checkpoint``), where it used to judge it as a CPU file and refuse it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cpumanager.checkpoint.device import codec as device
from tests.cli.runner import run_main

CASES = [
    (b'{"Checksum":0}', False),
    (b'{"Checksum":2932075448}', True),
    (b'{"Data":null,"Checksum":2932075448}', True),
    (b'{"Data":{},"Checksum":2932075448}', True),
    (b'{"Data":{"PodDeviceEntries":null,"RegisteredDevices":null},"Checksum":2932075448}', False),
]


@pytest.mark.parametrize(("data", "ok"), CASES)
def test_data_omitted_null_or_empty(data: bytes, ok: bool) -> None:
    result = device.attempt_device(data)
    assert result.ok == ok
    if not ok:
        assert result.error == "checkpoint is corrupted"


def test_state_verify_takes_the_kind_from_the_file_name(tmp_path: Path) -> None:
    path = tmp_path / "kubelet_internal_checkpoint"
    path.write_bytes(b'{"Checksum":2932075448}')
    result = run_main(["state", "verify", path])
    assert result.exit_code == 0, result.output
    assert "the device manager would restore it" in result.output
    path.write_bytes(b'{"Checksum":0}')
    assert run_main(["state", "verify", path]).exit_code == 1
