"""`state rewrite|migrate` outputs (issue 11, items 4 and 14): regular files or new paths only.

Renaming the converted file over a device or FIFO used to replace that node with a regular
0600 file (as root, ``-o /dev/null`` broke /dev/null for the host), and ``--in-place`` on a
symbolic link replaced the link while the real file stayed unchanged.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from cpumanager.checkpoint.cpu.codec import encode_v2
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.state import StateSnapshot
from tests.cli.runner import run_main
from tests.cli.test_state import assert_one_line_error

STATE = StateSnapshot("static", CPUSet.parse("0,2-3"), {"pod-a": {"main": CPUSet.parse("1")}})


def checkpoint(path: Path) -> Path:
    data = encode_v2(STATE).replace(b'"checksum":', b' "checksum":')  # valid, not canonical
    path.write_bytes(data)
    return path


def test_output_to_a_fifo_is_refused_and_the_fifo_stays(tmp_path: Path) -> None:
    source = checkpoint(tmp_path / "state")
    fifo = tmp_path / "out"
    os.mkfifo(fifo)
    result = run_main(["state", "rewrite", source, "--output-file", fifo])
    assert_one_line_error(result, 1)
    assert "is a device, FIFO or socket" in result.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.skipif(os.geteuid() != 0, reason="only root could replace /dev/null")
def test_output_to_dev_null_is_refused_as_root(tmp_path: Path) -> None:
    source = checkpoint(tmp_path / "state")
    result = run_main(["state", "rewrite", source, "--output-file", "/dev/null"])
    assert_one_line_error(result, 1)
    assert stat.S_ISCHR(os.lstat("/dev/null").st_mode)


def test_output_to_a_symlink_is_refused(tmp_path: Path) -> None:
    source = checkpoint(tmp_path / "state")
    target = tmp_path / "elsewhere"
    target.write_text("keep me")
    link = tmp_path / "out"
    link.symlink_to(target)
    result = run_main(["state", "rewrite", source, "--output-file", link])
    assert_one_line_error(result, 1)
    assert "is a symbolic link" in result.stderr
    assert link.is_symlink()
    assert target.read_text() == "keep me"


def test_output_to_a_new_path_or_a_regular_file_works(tmp_path: Path) -> None:
    source = checkpoint(tmp_path / "state")
    for out in (tmp_path / "new", tmp_path / "new"):  # created, then replaced
        result = run_main(["state", "rewrite", source, "--output-file", out])
        assert result.exit_code == 0, result.stderr
        assert out.read_bytes() == encode_v2(STATE)


def test_in_place_on_a_symlink_rewrites_the_real_file(tmp_path: Path) -> None:
    real = checkpoint(tmp_path / "real_state")
    before = real.read_bytes()
    link = tmp_path / "link"
    link.symlink_to(real)
    result = run_main(["state", "rewrite", link, "--in-place"])
    assert result.exit_code == 0, result.stderr
    assert link.is_symlink()
    assert real.read_bytes() == encode_v2(STATE)
    assert (tmp_path / "real_state.last-good").read_bytes() == before
