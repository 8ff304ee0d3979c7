"""Atomic, durable writes under an injected failure at every step; careful reads."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from cpumanager.adapters import filestore
from cpumanager.adapters.filestore import STEPS, preserve_copy, read_bytes, set_aside, write_atomic
from cpumanager.errors import InvalidPathError, StoreError


def fail_at(step: str, exc: BaseException | None = None):
    def hook(current: str) -> None:
        if current == step:
            raise exc if exc is not None else OSError(errno.EIO, "injected I/O error")

    return hook


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


def test_write_then_read(tmp_path: Path) -> None:
    target = tmp_path / "state"
    write_atomic(target, b"one")
    assert read_bytes(target) == b"one"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    write_atomic(target, b"two" * 100_000)
    assert read_bytes(target) == b"two" * 100_000
    assert leftovers(tmp_path) == []


def test_mode_can_be_chosen(tmp_path: Path) -> None:
    write_atomic(tmp_path / "f", b"x", mode=0o644)
    assert stat.S_IMODE((tmp_path / "f").stat().st_mode) == 0o644


@pytest.mark.parametrize("step", [s for s in STEPS if s != "fsync_dir"])
def test_failure_before_rename_leaves_the_old_file_and_no_temp(tmp_path: Path, step: str) -> None:
    target = tmp_path / "state"
    write_atomic(target, b"old")
    with pytest.raises(StoreError) as caught:
        write_atomic(target, b"new", fault=fail_at(step))
    assert f"{step} failed" in caught.value.message
    assert "previous file is unchanged" in caught.value.message
    assert target.read_bytes() == b"old"
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("step", [s for s in STEPS if s != "fsync_dir"])
def test_failure_on_a_new_file_creates_nothing(tmp_path: Path, step: str) -> None:
    with pytest.raises(StoreError):
        write_atomic(tmp_path / "state", b"new", fault=fail_at(step))
    assert list(tmp_path.iterdir()) == []


def test_failure_syncing_the_directory_reports_but_the_file_is_replaced(tmp_path: Path) -> None:
    target = tmp_path / "state"
    write_atomic(target, b"old")
    with pytest.raises(StoreError, match="could not sync its directory"):
        write_atomic(target, b"new", fault=fail_at("fsync_dir"))
    assert target.read_bytes() == b"new"
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("step", STEPS)
def test_interrupt_at_any_step_cleans_up_and_propagates(tmp_path: Path, step: str) -> None:
    target = tmp_path / "state"
    write_atomic(target, b"old")
    with pytest.raises(KeyboardInterrupt):
        write_atomic(target, b"new", fault=fail_at(step, KeyboardInterrupt()))
    assert target.read_bytes() in (b"old", b"new")
    assert leftovers(tmp_path) == []


def test_writing_over_a_directory_or_into_a_missing_one_fails_cleanly(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(InvalidPathError, match="it is a directory"):
        write_atomic(tmp_path / "d", b"x")
    assert leftovers(tmp_path) == []
    with pytest.raises(StoreError, match="create failed"):
        write_atomic(tmp_path / "missing" / "f", b"x")


def test_read_missing_is_none_and_odd_files_are_input_or_store_errors(tmp_path: Path) -> None:
    assert read_bytes(tmp_path / "nope") is None
    with pytest.raises(InvalidPathError, match="it is a directory"):
        read_bytes(tmp_path)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(InvalidPathError, match="not a regular file"):
        read_bytes(fifo)
    (tmp_path / "file").write_bytes(b"x")
    with pytest.raises(StoreError, match="not a directory"):
        read_bytes(tmp_path / "file" / "child")
    (tmp_path / "big").write_bytes(b"x" * 11)
    with pytest.raises(InvalidPathError, match="too large"):
        read_bytes(tmp_path / "big", max_bytes=10)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file(tmp_path: Path) -> None:
    target = tmp_path / "secret"
    target.write_bytes(b"x")
    target.chmod(0)
    with pytest.raises(StoreError, match="cannot read"):
        read_bytes(target)


def test_preserve_copy_links_the_current_file(tmp_path: Path) -> None:
    target, copy = tmp_path / "state", tmp_path / "state.last-good"
    assert preserve_copy(target, copy) is False
    write_atomic(target, b"v1")
    assert preserve_copy(target, copy) is True
    write_atomic(target, b"v2")
    assert copy.read_bytes() == b"v1"
    assert target.read_bytes() == b"v2"


@pytest.mark.parametrize("step", ["link", "rename_copy"])
def test_preserve_copy_failure_leaves_no_temp(tmp_path: Path, step: str) -> None:
    target, copy = tmp_path / "state", tmp_path / "state.last-good"
    write_atomic(target, b"v1")
    with pytest.raises(StoreError, match="cannot keep a copy"):
        preserve_copy(target, copy, fault=fail_at(step))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state"]


def test_set_aside_picks_a_free_name(tmp_path: Path) -> None:
    target = tmp_path / "state"
    for expected in ("state.corrupt", "state.corrupt.1", "state.corrupt.2"):
        target.write_bytes(expected.encode())
        moved = set_aside(target)
        assert moved.name == expected
        assert moved.read_bytes() == expected.encode()
        assert not target.exists()
    with pytest.raises(StoreError):
        set_aside(target)


def test_ensure_dir(tmp_path: Path) -> None:
    filestore.ensure_dir(tmp_path / "a" / "b")
    assert (tmp_path / "a" / "b").is_dir()
    (tmp_path / "f").write_bytes(b"")
    with pytest.raises(StoreError):
        filestore.ensure_dir(tmp_path / "f" / "g")
