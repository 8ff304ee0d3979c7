"""`cpumanager node config`: the kubelet's effective configuration, field by field.

Reads the sources the kubelet reads (``--config`` file, ``--config-dir`` drop-ins, flags from
a command line, a systemd unit or env files, or a ``/configz`` answer), assembles them in
the kubelet's order (``adapters/kubelet_config_file.load_effective_config``) and prints each
field under its v1beta1 name with where it came from. ``--kubelet-version`` picks the
release whose defaults and checks apply (default: the newest). A configuration the kubelet
would refuse prints the stage that refuses it (``loads``, ``validates`` or ``starts``) and
every error it would give, and exits 1.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from cpumanager.cli.options import output_option

if TYPE_CHECKING:
    from cpumanager.formats.kubelet_config import EffectiveConfig

__all__ = ["config", "render_value"]

_FILE = click.Path(path_type=Path, dir_okay=False)
_MAX_CELL = 20  # characters of a value shown in its cell; longer ones go whole below the row
_WIDTH = 80  # the table fits a terminal this wide (long origins wrap)


@click.command("config")
@click.option("--kubelet-config", "kubelet_config", type=_FILE, help="The --config file.")
@click.option(
    "--config-dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="The --config-dir drop-in directory (*.conf, merged in file-name order).",
)
@click.option("--flags", "flags", default="", metavar="TEXT", help="Kubelet flags, as one string.")
@click.option(
    "--kubelet-cmdline", type=_FILE, help="A kubelet command line (text, or /proc/PID/cmdline)."
)
@click.option("--systemd-unit", type=_FILE, help="kubelet.service (its .d/*.conf are read too).")
@click.option(
    "--env-file",
    "env_files",
    type=_FILE,
    multiple=True,
    help="kubeadm-flags.env, /etc/default/kubelet, ... (repeatable).",
)
@click.option("--configz", type=_FILE, help="A saved answer of the kubelet's /configz.")
@click.option(
    "--root",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("/"),
    show_default=True,
    help="Where absolute paths named by the unit or flags (--config, EnvironmentFile=) are.",
)
@click.option(
    "--kubelet-version",
    "kubelet_version",
    default=None,
    metavar="1.N",
    help="The kubelet release whose defaults and checks apply (default: the newest).",
)
@output_option
@click.pass_context
def config(
    ctx: click.Context,
    *,
    kubelet_config: Path | None,
    config_dir: Path | None,
    flags: str,
    kubelet_cmdline: Path | None,
    systemd_unit: Path | None,
    env_files: tuple[Path, ...],
    configz: Path | None,
    root: Path,
    kubelet_version: str | None,
    output: str,
) -> None:
    """The kubelet's effective configuration and where each field came from."""
    from cpumanager.adapters.kubelet_config_file import load_effective_config
    from cpumanager.core.versions import NEWEST, parse_release
    from cpumanager.errors import KubeletConfigInvalidError
    from cpumanager.formats.kubelet_config.launch import split_command_line

    release = NEWEST if kubelet_version is None else parse_release(kubelet_version)
    try:
        effective = load_effective_config(
            config=kubelet_config,
            config_dir=config_dir,
            flags=split_command_line(flags, source="--flags") if flags else (),
            kubelet_cmdline=kubelet_cmdline,
            systemd_unit=systemd_unit,
            env_files=env_files,
            configz=configz,
            root=root,
            release=release,
        )
    except KubeletConfigInvalidError as err:
        refusal = {
            "valid": False,
            "kubeletVersion": _release_name(release),
            "stage": err.stage,
            "kubelet": _kubelet_text(err),
            "errors": list(err.errors),
        }
        _emit(refusal, output, errors=err.errors, stage=err.stage, release=release)
        ctx.exit(1)
    document = {
        "valid": True,
        "kubeletVersion": _release_name(release),
        "sources": list(effective.sources),
        "rootDir": {"value": effective.root_dir, "from": effective.root_dir_origin},
        "fields": effective.fields(),
    }
    if effective.warnings:
        document["warnings"] = list(effective.warnings)
    if output in ("table", "wide"):
        _table(effective)
    else:
        _emit(document, output, errors=())


def _release_name(release: tuple[int, int]) -> str:
    return f"{release[0]}.{release[1]}"


def _kubelet_text(err: object) -> str:
    """The line the kubelet itself would end with, for the stage that refuses."""
    from cpumanager.errors import KubeletConfigInvalidError
    from cpumanager.formats.kubelet_config.whole import kubelet_text

    assert isinstance(err, KubeletConfigInvalidError)
    return kubelet_text(err.stage, err.errors)


def _emit(
    document: dict[str, object],
    output: str,
    *,
    errors: tuple[str, ...],
    stage: str = "",
    release: tuple[int, int] | None = None,
) -> None:
    if output == "json":
        click.echo(json.dumps(document, sort_keys=True, separators=(",", ":")))
    elif output == "yaml":
        import yaml

        click.echo(yaml.safe_dump(document, sort_keys=True, width=100), nl=False)
    else:
        where = f" (kubelet {_release_name(release)}, stage: {stage})" if release else ""
        head = f"the kubelet would refuse this configuration{where}:"
        if len(errors) == 1:  # one refusal, one line
            click.echo(f"{head} {_printable(errors[0])}", err=True)
            return
        click.echo(head, err=True)
        for message in errors:
            click.echo(f"  {_printable(message)}", err=True)


def render_value(value: object) -> str:
    """A field's value on one line: maps as ``k=v,...``, lists comma-separated, ``-`` if empty."""
    if isinstance(value, dict):
        text = ",".join(f"{k}={render_value(v)}" for k, v in value.items())
    elif isinstance(value, list):
        if value and all(isinstance(v, dict) and "numaNode" in v for v in value):
            text = ";".join(f"{v['numaNode']}:{render_value(v.get('limits', {}))}" for v in value)
        else:
            text = ",".join(render_value(v) for v in value)
    elif isinstance(value, bool):
        text = "true" if value else "false"
    else:
        text = str(value)
    return _printable(text) or "-"


def _printable(text: str) -> str:
    """Control characters from a hostile file escaped, so they cannot drive the terminal."""
    from cpumanager.core.gocompat import one_line

    return one_line(text)


def _comma_lines(text: str, *, indent: str) -> list[str]:
    """A long value in lines of at most 80 columns, broken after its commas only (what a
    line holds stays as written; joining the lines gives the value back)."""
    lines: list[str] = []
    line = ""
    for piece in text.split(","):
        if line and len(indent) + len(line) + len(piece) + 2 > _WIDTH:
            lines.append(indent + line + ",")
            line = piece
        else:
            line = piece if not line else line + "," + piece
    return [*lines, indent + line]


def _table(effective: EffectiveConfig) -> None:
    from cpumanager.cli.options import wrap_line

    rows = [("FIELD", "VALUE", "FROM")]
    below: dict[str, str] = {}  # a value too long for its cell: whole, on the next lines
    for name, entry in effective.fields().items():
        shown = render_value(entry["value"])
        if len(shown) > _MAX_CELL:
            below[name], shown = shown, "(below)"
        rows.append((name, shown, _printable(str(entry["from"]))))
    widths = [max(len(row[i]) for row in rows) for i in range(2)]
    sources = _printable(", ".join(effective.sources)) or "none (all the kubelet's defaults)"
    for line in wrap_line(sources, prefix="sources: "):
        click.echo(line)
    click.echo(f"root dir: {effective.root_dir} ({effective.root_dir_origin})")
    for name, value, origin in rows:
        head = f"{name.ljust(widths[0])}  {value.ljust(widths[1])}  "
        for line in wrap_line(origin, prefix=head, indent=" " * len(head), width=_WIDTH):
            click.echo(line.rstrip())
        if name in below:
            for line in _comma_lines(_printable(below[name]), indent="    "):
                click.echo(line)
    for warning in effective.warnings:
        click.echo(f"warning: {_printable(warning)}", err=True)
