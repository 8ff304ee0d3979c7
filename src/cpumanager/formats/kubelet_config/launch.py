"""Where a kubelet's command line comes from: a command line, a systemd unit, env files (pure).

* A command line as text: shell words (``ps -o args`` style), or ``/proc/PID/cmdline``'s
  NUL-separated words.
* A systemd unit with its drop-ins (``kubelet.service`` then ``kubelet.service.d/*.conf`` in
  name order, as systemd reads them): ``Environment=`` assignments, then ``EnvironmentFile=``
  files (which override them, later files winning), then the last ``ExecStart=`` after any
  empty reset. ``$NAME`` alone as a word becomes the variable's words (kubeadm's
  ``$KUBELET_KUBEADM_ARGS``); ``${NAME}`` becomes exactly one word.
* An environment file on its own (``kubeadm-flags.env``, ``/etc/default/kubelet``, kops'
  ``/etc/sysconfig/kubelet``): every variable whose value starts with a ``--flag``.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from cpumanager.formats.kubelet_config.fields import fail

__all__ = [
    "SystemdService",
    "argv_from_env",
    "expand_exec_start",
    "parse_env_file",
    "parse_systemd_unit",
    "split_command_line",
]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BRACED = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_EXEC_PREFIXES = "@-:+!"


@dataclass(frozen=True, slots=True)
class SystemdService:
    """The parts of a ``[Service]`` section that decide the kubelet's command line."""

    environment: Mapping[str, str] = field(default_factory=dict)
    environment_files: tuple[tuple[str, bool], ...] = ()  # (path, optional: '-' prefix)
    exec_start: str | None = None


def split_command_line(text: str, *, source: str = "command line") -> list[str]:
    """Words of a kubelet command line: NUL-separated (/proc) or shell-quoted text."""
    if "\0" in text:
        return [word for word in text.split("\0") if word]
    try:
        return shlex.split(text, comments=False, posix=True)
    except ValueError as err:
        fail(f"{source}: cannot split into words ({err}); check its quotes")


def parse_env_file(text: str) -> dict[str, str]:
    """``KEY=VALUE`` lines as systemd's EnvironmentFile= reads them (quotes removed)."""
    out: dict[str, str] = {}
    for line in _logical_lines(text):
        stripped = line.strip()
        if not stripped or stripped[0] in "#;":
            continue
        stripped = stripped.removeprefix("export ").lstrip()
        key, found, value = stripped.partition("=")
        key = key.strip()
        if not found or _NAME.fullmatch(key) is None:
            continue  # systemd ignores lines it cannot read, with a warning
        out[key] = _unquote(value.strip())
    return out


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        inner = value[1:-1]
        return re.sub(r"\\(.)", r"\1", inner) if value[0] == '"' else inner
    return value


def _logical_lines(text: str) -> list[str]:
    """Lines with backslash-newline continuations joined, as systemd reads unit files."""
    lines: list[str] = []
    pending = ""
    for raw in text.splitlines():
        if raw.endswith("\\"):
            pending += raw[:-1] + " "
            continue
        lines.append(pending + raw)
        pending = ""
    if pending:
        lines.append(pending)
    return lines


def parse_systemd_unit(files: Sequence[tuple[str, str]]) -> SystemdService:
    """Merge a unit and its drop-ins (in the order given) into the service's settings."""
    environment: dict[str, str] = {}
    env_files: list[tuple[str, bool]] = []
    exec_start: str | None = None
    for name, text in files:
        section = ""
        for line in _logical_lines(text):
            stripped = line.strip()
            if not stripped or stripped[0] in "#;":
                continue
            if stripped.startswith("[") and stripped.endswith("]"):
                section = stripped[1:-1]
                continue
            if section != "Service":
                continue
            key, found, value = stripped.partition("=")
            key, value = key.strip(), value.strip()
            if not found:
                continue
            if key == "Environment":
                environment.update(_assignments(value, source=name))
            elif key == "EnvironmentFile":
                if not value:
                    env_files.clear()
                else:
                    optional = value.startswith("-")
                    env_files.append((value.removeprefix("-"), optional))
            elif key == "ExecStart":
                exec_start = value or None
    return SystemdService(
        environment=environment, environment_files=tuple(env_files), exec_start=exec_start
    )


def _assignments(value: str, *, source: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for word in split_command_line(value, source=f"{source}: Environment="):
        key, found, text = word.partition("=")
        if found and _NAME.fullmatch(key):
            out[key] = text
    return out


def expand_exec_start(line: str, environment: Mapping[str, str], *, source: str) -> list[str]:
    """An ``ExecStart=`` line's words with ``$NAME`` and ``${NAME}`` expanded, as systemd does."""
    command = line.lstrip(_EXEC_PREFIXES)
    words: list[str] = []
    for word in split_command_line(command, source=f"{source}: ExecStart="):
        if word.startswith("$") and _NAME.fullmatch(word[1:]):
            words += environment.get(word[1:], "").split()
            continue
        words.append(_BRACED.sub(lambda m: environment.get(m[1], ""), word))
    return words


def argv_from_env(environment: Mapping[str, str]) -> list[str]:
    """The flags an environment file holds: words of each value that starts with ``--``."""
    words: list[str] = []
    for value in environment.values():
        parts = value.split()
        if parts and parts[0].startswith("--"):
            words += parts
    return words
