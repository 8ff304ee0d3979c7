"""Command lines from text, /proc cmdline, systemd units with drop-ins, and env files."""

from __future__ import annotations

import pytest

from cpumanager.errors import ConfigError
from cpumanager.formats.kubelet_config.launch import (
    argv_from_env,
    expand_exec_start,
    parse_env_file,
    parse_systemd_unit,
    split_command_line,
)


def test_split_shell_text_and_proc_cmdline() -> None:
    assert split_command_line("kubelet --a='x y' --b") == ["kubelet", "--a=x y", "--b"]
    assert split_command_line("kubelet\0--a=x y\0--b\0") == ["kubelet", "--a=x y", "--b"]
    with pytest.raises(ConfigError, match="cannot split into words"):
        split_command_line("kubelet --a='x")


def test_env_file_reading() -> None:
    text = (
        "# comment\n; also a comment\nA=\"--x=1 --y=2\"\nB='--z'\nexport C=3\n"
        "D=one \\\n two\nnot a line\n"
    )
    assert parse_env_file(text) == {"A": "--x=1 --y=2", "B": "--z", "C": "3", "D": "one   two"}


def test_argv_from_env_takes_flag_values_only() -> None:
    env = {"LABELS": "a=b,c=d", "ARGS": "--x=1 --y=2", "EMPTY": "", "MORE": "--z"}
    assert argv_from_env(env) == ["--x=1", "--y=2", "--z"]


UNIT = """
[Unit]
Description=kubelet
[Service]
Environment="A=--a=1 --b=2" B=--c
EnvironmentFile=-/etc/default/kubelet
ExecStart=/usr/bin/kubelet --old
"""
DROP_IN = """
[Service]
Environment="C=--d=4"
ExecStart=
ExecStart=-/usr/bin/kubelet $A ${B} x${C}y $MISSING \\
  --tail
[Install]
ExecStart=/ignored
"""


def test_unit_and_drop_in_merge() -> None:
    service = parse_systemd_unit([("kubelet.service", UNIT), ("10-x.conf", DROP_IN)])
    assert service.environment == {"A": "--a=1 --b=2", "B": "--c", "C": "--d=4"}
    assert service.environment_files == (("/etc/default/kubelet", True),)
    assert service.exec_start is not None
    words = expand_exec_start(service.exec_start, service.environment, source="u")
    # $A splits into words, ${B} is one word, ${C} inside a word, $MISSING is no word
    assert words == ["/usr/bin/kubelet", "--a=1", "--b=2", "--c", "x--d=4y", "--tail"]


def test_empty_exec_start_resets() -> None:
    service = parse_systemd_unit([("u", "[Service]\nExecStart=/a\nExecStart=\n")])
    assert service.exec_start is None
