"""The state directory and its lock (issue 11, items 5 and 14).

The lock used to be 0644 and opened through symlinks (truncating their target), existing
directories were not checked, modes followed the umask (0777 / 0666 under umask 000), any
user could hold the lock and shut every run and agent out, and a run next to an agent
waited 10 s before saying so.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cpumanager.agent.daemon import StateDirLock
from cpumanager.errors import StoreError
from tests.agent.test_daemon import FakeClock

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another user")


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture
def umask_000() -> Iterator[None]:
    previous = os.umask(0)
    yield
    os.umask(previous)


def test_modes_do_not_follow_the_umask(tmp_path: Path, umask_000: None) -> None:
    state = tmp_path / "state"
    with StateDirLock(state):
        pass
    assert mode(state) == 0o700
    assert mode(state / "lock") == 0o600


def test_an_existing_open_directory_is_refused_with_the_reason(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    state.chmod(0o755)
    with pytest.raises(StoreError, match=r"has mode 0755, open to group or others; 'chmod 700'"):
        StateDirLock(state).acquire()
    state.chmod(0o700)
    StateDirLock(state).acquire().release()


@as_root
def test_a_directory_of_another_user_is_refused(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    os.chown(state, 4242, 4242)
    with pytest.raises(StoreError, match=r"is owned by uid 4242, not by this user"):
        StateDirLock(state).acquire()


def test_a_lock_symlink_is_not_followed_nor_its_target_truncated(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (state / "lock").symlink_to(victim)
    with pytest.raises(StoreError, match="is a symbolic link"):
        StateDirLock(state).acquire()
    assert victim.read_text() == "precious\n"


@as_root
def test_a_lock_file_of_another_user_is_refused(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    (state / "lock").write_text("")
    os.chown(state / "lock", 4242, 4242)
    with pytest.raises(StoreError, match="not a regular file owned by uid 0"):
        StateDirLock(state).acquire()


def test_an_old_0644_lock_is_tightened(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    (state / "lock").write_text("123\n")
    (state / "lock").chmod(0o644)
    with StateDirLock(state):
        assert mode(state / "lock") == 0o600


@as_root
def test_another_user_cannot_take_the_lock(tmp_path: Path) -> None:
    state = tmp_path / "state"
    StateDirLock(state).acquire().release()
    grab = (
        "import fcntl, os, sys\n"
        "os.setgid(65534); os.setuid(65534)\n"
        "try:\n"
        "    fd = os.open(sys.argv[1], os.O_RDONLY)\n"
        "except PermissionError:\n"
        "    print('denied')\n"
        "else:\n"
        "    fcntl.flock(fd, fcntl.LOCK_EX); print('held')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", grab, str(state / "lock")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.stdout.strip() == "denied", done.stderr


def test_a_run_fails_at_once_next_to_an_agent(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with StateDirLock(state, role="agent"):
        clock = FakeClock()
        run_lock = StateDirLock(state, timeout_s=10.0, clock=clock, role="run")
        with pytest.raises(StoreError, match=r"in use by pid \d+ \(an agent\)"):
            run_lock.acquire()
        assert clock.now == 0.0  # no 10 s wait


def test_a_run_waits_for_another_run(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with StateDirLock(state, role="run"):
        clock = FakeClock()
        with pytest.raises(StoreError, match=r"\(an agent or a run\)"):
            StateDirLock(state, timeout_s=0.5, clock=clock, role="run").acquire()
        assert clock.now >= 0.5
