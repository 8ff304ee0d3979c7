"""The output convention, enforced on every click command (kubectl's):

* ``-o/--output`` is a format: a choice among table, wide, json, yaml (html where a picture
  helps), json and yaml always among them; no other option takes ``-o``;
* a file is named by ``--output-file`` (or a positional argument), never by ``-o``;
* a command that prints a result has ``-o`` (the exceptions are listed with why);
* every option has help text; ``--help`` reads at 80 columns with nothing cut ("...");
* JSON keys are camelCase (``tests/cli/fixture_runs.py`` runs each command on fixtures).
"""

from __future__ import annotations

import json
import re
from typing import Any

import click
import pytest

from cpumanager.cli.group import cli
from tests.cli.fixture_runs import Case, json_cases, prepared
from tests.cli.runner import run_main

FORMATS = {"table", "wide", "json", "yaml", "html"}

# Commands that print no result of their own, and why.
NO_OUTPUT = {
    "agent": "a daemon: it logs (--log-format); --once prints its JSON tick report",
    "extender": "a server: it logs (--log-format)",
    "node publish": "a daemon: it logs (--log-format); --once says so in its exit code",
    "run": "runs a command pinned; the command's own output is what prints",
    "compute take": "the JSON-lines protocol of docs/compute.md: answers are JSON, one a line",
    "compute hints": "the JSON-lines protocol of docs/compute.md",
    "compute merge": "the JSON-lines protocol of docs/compute.md",
}


def _commands() -> list[tuple[str, click.Command]]:
    found: list[tuple[str, click.Command]] = []

    def walk(command: click.Command, path: list[str], ctx: click.Context) -> None:
        if isinstance(command, click.Group):
            found.append((" ".join(path), command))
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                assert sub is not None, name
                walk(sub, [*path, name], click.Context(sub, parent=ctx, info_name=name))
        else:
            found.append((" ".join(path), command))

    walk(cli, [], click.Context(cli, info_name="cpumanager"))
    return found


COMMANDS = _commands()
LEAVES = [(name, c) for name, c in COMMANDS if not isinstance(c, click.Group)]


def _options(command: click.Command) -> list[click.Option]:
    return [p for p in command.params if isinstance(p, click.Option)]


@pytest.mark.parametrize(("name", "command"), LEAVES, ids=[n for n, _ in LEAVES])
def test_dash_o_is_a_format(name: str, command: click.Command) -> None:
    outputs = [o for o in _options(command) if "-o" in o.opts or "--output" in o.opts]
    if name in NO_OUTPUT:
        assert not outputs, f"{name} has -o: drop it from NO_OUTPUT"
        return
    assert outputs, f"{name} prints a result but has no -o/--output"
    (option,) = outputs
    assert option.opts == ["-o", "--output"], option.opts
    assert isinstance(option.type, click.Choice), f"{name}: -o is not a choice of formats"
    choices = set(option.type.choices)
    assert choices <= FORMATS, choices - FORMATS
    assert {"json", "yaml"} <= choices, f"{name}: -o lacks json or yaml"


@pytest.mark.parametrize(("name", "command"), LEAVES, ids=[n for n, _ in LEAVES])
def test_files_are_named_by_output_file(name: str, command: click.Command) -> None:
    for option in _options(command):
        long = [o for o in option.opts if o.startswith("--")]
        writes = any(re.fullmatch(r"--(out|output)(-file|-path)?", o) for o in long)
        if writes and "--output" not in option.opts:
            assert "--output-file" in option.opts, f"{name}: {option.opts} names a file"


@pytest.mark.parametrize(
    ("name", "command"), COMMANDS, ids=[n or "cpumanager" for n, _ in COMMANDS]
)
def test_every_option_has_help(name: str, command: click.Command) -> None:
    missing = [o.opts[0] for o in _options(command) if not o.help and not o.hidden]
    assert not missing, f"{name or 'cpumanager'}: no help for {missing}"


@pytest.mark.parametrize(
    ("name", "command"), COMMANDS, ids=[n or "cpumanager" for n, _ in COMMANDS]
)
def test_help_reads_at_80_columns(name: str, command: click.Command) -> None:
    result = run_main([*name.split(), "--help"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.stderr
    section = ""
    for line in result.output.splitlines():
        assert len(line) <= 80, line
        if line and not line.startswith(" "):
            section = line
        if section == "Commands:":  # click cuts a command's description with "..."
            assert not line.rstrip().endswith("..."), f"cut: {line!r}"


_SNAKE = re.compile(r"^[a-z][A-Za-z0-9]*_[A-Za-z0-9_]+$")
# Maps whose keys are data, not schema: Prometheus metric names, pod uids and container
# names (checkpoint entries), resource names.
_DATA_MAPS = {"metrics", "entries", "containers", "perNode", "memory", "devices"}


def _snake_keys(value: Any, where: str = "") -> list[str]:
    found: list[str] = []
    if isinstance(value, dict):
        data = where.rsplit(".", 1)[-1] in _DATA_MAPS
        for key, item in value.items():
            if not data and isinstance(key, str) and _SNAKE.match(key):
                found.append(f"{where}.{key}")
            found += _snake_keys(item, f"{where}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value[:3]):
            found += _snake_keys(item, f"{where}[{index}]")
    return found


# Versioned file formats printed as they are stored (renaming their keys would make every
# saved file unreadable): the machine file (``topology -o json``, ``topology --save``) and
# the node snapshot file (schemaVersion 1, which embeds the machine file).
FILE_FORMATS = {"topology", "node-snapshot"}


@pytest.mark.parametrize("case", json_cases(), ids=lambda c: c.name)
def test_json_keys_are_camel_case(case: Case, tmp_path_factory: pytest.TempPathFactory) -> None:
    if case.name in FILE_FORMATS:
        pytest.skip("a stored file format, printed as stored (see FILE_FORMATS)")
    where = prepared(tmp_path_factory)
    result = run_main(case.argv(where, "json"))
    assert result.exit_code in case.codes, (result.exit_code, result.stderr)
    lines = result.output.splitlines() if case.lines else [result.output]
    for text in lines:
        assert not _snake_keys(json.loads(text)), _snake_keys(json.loads(text))


def test_no_command_is_left_out_of_the_fixture_runs() -> None:
    covered = {c.command for c in json_cases()}
    printing = {name for name, _ in LEAVES if name not in NO_OUTPUT}
    assert printing <= covered, printing - covered
