"""Checkpoint and container-map files for the state commands, on real trees."""

from __future__ import annotations

from pathlib import Path

import pytest

from cpumanager.adapters.checkpoint_files import (
    read_checkpoint,
    read_container_map,
    write_conversion,
)
from cpumanager.checkpoint.convert import Conversion
from cpumanager.core.ids import ContainerID
from cpumanager.errors import CheckpointError, InputError, InvalidPathError


def test_missing_files_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match="does not exist"):
        read_checkpoint(tmp_path / "nope")
    with pytest.raises(InputError, match="container map"):
        read_container_map(tmp_path / "nope")
    with pytest.raises(InvalidPathError):
        read_checkpoint(tmp_path)
    assert read_container_map(None) is None


def test_container_map_file_is_parsed(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text('{"cid": {"podUID": "p", "containerName": "c"}}')
    cmap = read_container_map(path)
    assert cmap is not None
    assert cmap.container_ref(ContainerID("cid")) == ("p", "c")


def test_in_place_write_keeps_the_old_file_as_last_good(tmp_path: Path) -> None:
    path = tmp_path / "state"
    path.write_bytes(b"old")
    write_conversion(Conversion("v1", "v2", b"new", 1), path, in_place=True)
    assert path.read_bytes() == b"new"
    assert (tmp_path / "state.last-good").read_bytes() == b"old"
    other = tmp_path / "other"
    write_conversion(Conversion("v1", "v2", b"x", 1), other, in_place=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other", "state", "state.last-good"]
