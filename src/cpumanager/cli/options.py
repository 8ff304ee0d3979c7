"""Options and helpers shared by every subcommand.

* :func:`output_option` gives ``-o/--output`` with a fixed set of formats (default ``table``).
* :func:`machine_options` gives ``--sysfs DIR`` and ``--machine NAME|FILE`` (mutually
  exclusive) and :func:`load_topology` turns their values into a :class:`CPUTopology`.
* :func:`emit_json` prints compact, key-sorted JSON so output is stable and diffable;
  :func:`emit_structured` prints ``-o json`` or ``-o yaml`` (the same values).

The convention is kubectl's: ``-o/--output`` is always a *format* (``table``, ``wide``,
``json``, ``yaml``, and ``html`` where a picture helps); ``-o json|yaml`` write to stdout;
files are named by ``--output-file`` or positional arguments. JSON keys are camelCase, as
Kubernetes' own. ``tests/cli/test_conventions.py`` walks every command and enforces it.

Everything heavy (sysfs reader, presets, YAML) is imported inside the functions that need it,
so importing this module costs only click.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast, overload

import click

if TYPE_CHECKING:
    from cpumanager.core.topology import CPUTopology

__all__ = [
    "DEFAULT_OUTPUTS",
    "DEGRADED_EXIT",
    "FormatChoice",
    "WrappingGroup",
    "wrap_line",
    "STRUCTURED",
    "emit_as",
    "emit_json",
    "emit_structured",
    "kubeconfig_option",
    "load_topology",
    "machine_options",
    "output_option",
    "topology_view",
    "topology_view_option",
]

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_OUTPUTS: tuple[str, ...] = ("table", "wide", "json", "yaml")

STRUCTURED: tuple[str, ...] = ("json", "yaml")

# The exit code of a node answer given from the raw files because the kubelet would not
# start on the node (``node show``/``nrt``/``whatif``): what is known was printed, under a
# banner with the kubelet's refusal. 0 ok, 1 bad input or refused, 2 usage, 3 system.
DEGRADED_EXIT = 4


class FormatChoice(click.Choice):  # type: ignore[type-arg]
    """``-o``'s formats; a value that looks like a file name gets kubectl's hint."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter:
            choices = ", ".join(str(c) for c in self.choices)
            msg = f"{value!r} is not a format ({choices}); -o names a format, as in kubectl"
            if any(c in str(value) for c in "/.") or str(value) == "-":
                msg += "; name the file with --output-file"
            self.fail(msg, param, ctx)


def _output_decorator(choices: tuple[str, ...]) -> Callable[[F], F]:
    return click.option(
        "-o",
        "--output",
        type=FormatChoice(choices, case_sensitive=False),
        default=choices[0] if "table" not in choices else "table",
        show_default=True,
        help="Output format: " + ", ".join(choices) + ".",
    )


@overload
def output_option(func: F, /) -> F: ...


@overload
def output_option(*choices: str) -> Callable[[F], F]: ...


def output_option(*choices: Any) -> Any:
    """``-o/--output`` limited to ``choices`` (``table`` and ``json`` when none are given).

    Usable bare (``@output_option``) or called (``@output_option("table", "json", "yaml")``).
    """
    if len(choices) == 1 and callable(choices[0]):
        return _output_decorator(DEFAULT_OUTPUTS)(choices[0])
    names = tuple(str(choice) for choice in choices) or DEFAULT_OUTPUTS
    return _output_decorator(names)


_VIEW_KEY = "cpumanager.topology_view"


def _use_view(ctx: click.Context, param: click.Parameter, value: str) -> None:
    ctx.meta[_VIEW_KEY] = value


def topology_view() -> str:
    """The ``--topology-view`` of the running command (``kubelet`` outside one)."""
    ctx = click.get_current_context(silent=True)
    return "kubelet" if ctx is None else str(ctx.meta.get(_VIEW_KEY, "kubelet"))


def topology_view_option(func: F) -> F:
    """Add ``--topology-view kubelet|kernel``: how a sysfs tree is read (the kubelet's view,
    cadvisor's reading, by default; the kernel's sibling masks on request)."""
    return click.option(
        "--topology-view",
        type=click.Choice(["kubelet", "kernel"]),
        default="kubelet",
        show_default=True,
        expose_value=False,
        callback=_use_view,
        help="Read sysfs as the kubelet sees it (through cadvisor, its quirks included) or "
        "as the kernel's sibling masks say; warnings name where the two differ.",
    )(func)


def machine_options(func: F) -> F:
    """Add ``--sysfs DIR`` and ``--machine NAME|FILE``; giving both is a usage error."""

    @functools.wraps(func)
    def checked(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("sysfs") is not None and kwargs.get("machine") is not None:
            msg = "give either --sysfs or --machine, not both"
            raise click.UsageError(msg)
        return func(*args, **kwargs)

    with_machine = click.option(
        "--machine",
        "machine",
        metavar="NAME|FILE",
        default=None,
        help="A preset machine name (see 'cpumanager topology --list') or a machine file "
        "(YAML/JSON) written by 'cpumanager topology --save'.",
    )(checked)
    with_sysfs = click.option(
        "--sysfs",
        "sysfs",
        metavar="DIR",
        type=click.Path(path_type=Path, file_okay=False),
        default=None,
        help="Read the topology from a copy of sysfs rooted at DIR (holding sys/devices/...) "
        "instead of this host's /.",
    )(with_machine)
    return topology_view_option(cast(F, with_sysfs))


def load_topology(*, sysfs: Path | None, machine: str | None) -> CPUTopology:
    """The machine the user named: a preset, else a machine file, else sysfs (default ``/``)."""
    if sysfs is not None and machine is not None:
        msg = "give either --sysfs or --machine, not both"
        raise click.UsageError(msg)
    if machine is not None:
        from cpumanager.presets import get_preset, is_preset

        if is_preset(machine):
            return get_preset(machine)
        path = Path(machine)
        if path.exists() or path.suffix.lower() in {".json", ".yaml", ".yml"}:
            from cpumanager.adapters.machine_file import read_machine_file

            return read_machine_file(path)
        return get_preset(machine)  # raises MachineError listing the preset names
    from cpumanager.adapters.sysfs import SysfsReader

    return SysfsReader(sysfs if sysfs is not None else Path("/"), view=topology_view()).read()


def emit_json(obj: object) -> None:
    """Print ``obj`` as compact JSON with sorted keys and a trailing newline."""
    click.echo(json.dumps(obj, sort_keys=True, separators=(",", ":")))


def emit_structured(obj: object, output: str) -> bool:
    """Print ``obj`` for ``-o json`` (compact, sorted) or ``-o yaml``; False for others."""
    if output == "json":
        emit_json(obj)
        return True
    if output == "yaml":
        import yaml

        click.echo(yaml.safe_dump(obj, sort_keys=True, width=100), nl=False)
        return True
    return False


def emit_as(output: str, obj: object) -> None:
    """Print ``obj`` as ``output`` (``json`` or ``yaml``)."""
    emit_structured(obj, output)


class WrappingGroup(click.Group):
    """A group whose command list wraps each description instead of cutting it with
    "..." (click's default at 80 columns)."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is None or command.hidden:
                continue
            text = command.short_help or (command.help or "").split("\n\n")[0]
            rows.append((name, " ".join(text.split())))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def wrap_line(text: str, *, prefix: str = "", indent: str = "  ", width: int = 80) -> list[str]:
    """``prefix + text`` in lines of at most ``width`` columns, continuation lines indented
    by ``indent``; words (paths, CPU lists) are never broken, so a word longer than a line
    stands alone on its line, whole."""
    import textwrap

    return textwrap.wrap(
        text,
        width=width,
        initial_indent=prefix,
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [prefix.rstrip()]


def kubeconfig_option(help_text: str) -> Callable[[F], F]:
    """``--kubeconfig``: the API server access of a command that talks to it (the extender,
    the agent, the NRT writer), each saying what it is for."""
    return click.option(
        "--kubeconfig",
        type=click.Path(path_type=Path, dir_okay=False),
        default=None,
        metavar="FILE",
        help=help_text,
    )
