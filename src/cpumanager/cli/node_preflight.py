"""`cpumanager node preflight`: would the kubelet start with a new configuration here?

The new configuration is assembled as ``node config`` assembles it (file, drop-ins, flags);
the node's checkpoints are then restored under it as the kubelet's managers would
(``nodeanswers/preflight.py``). Prints the kubelet's refusal, the pods to drain and what
``recover`` would keep. Exit 0 only when a plain restart is safe, 1 otherwise.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import click

from cpumanager.cli.node_common import live_options, load_node, printable
from cpumanager.cli.node_versions import check_release, kubelet_version_option, node_release
from cpumanager.cli.options import STRUCTURED, emit_as, output_option

__all__ = ["preflight"]

_WIDTH = 80


def _lines(title: str, items: list[str]) -> list[str]:
    if not items:
        return []
    out = [title]
    for item in items:
        out += textwrap.wrap(
            printable(item), width=_WIDTH, initial_indent="  - ", subsequent_indent="    "
        )
    return out


@click.command("preflight")
@click.argument("snapshot", required=False, type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--kubelet-config",
    "kubelet_config",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="The new --config file.",
)
@click.option(
    "--config-dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="The new --config-dir drop-in directory.",
)
@click.option("--flags", default="", metavar="TEXT", help="The new kubelet flags, as one string.")
@click.option(
    "--to-kubelet",
    "to_kubelet",
    default=None,
    metavar="1.N",
    help="Upgrade/downgrade check: the node's files and configuration under this release.",
)
@live_options
@kubelet_version_option
@output_option
@click.pass_context
def preflight(
    ctx: click.Context,
    *,
    snapshot: Path | None,
    kubelet_config: Path | None,
    config_dir: Path | None,
    flags: str,
    to_kubelet: str | None,
    live: bool,
    root: Path,
    kubelet_root: Path,
    pods: Path | None,
    kubelet_version: str | None,
    output: str,
) -> None:
    """SNAPSHOT --kubelet-config NEW: would the kubelet start with NEW on this node?"""
    from cpumanager.adapters.kubelet_config_file import load_effective_config
    from cpumanager.errors import ConfigError, KubeletConfigInvalidError
    from cpumanager.formats.kubelet_config.launch import split_command_line
    from cpumanager.nodeanswers.preflight import Preflight
    from cpumanager.nodeanswers.preflight import preflight as check

    if kubelet_config is None and config_dir is None and not flags and to_kubelet is None:
        msg = "give the new configuration: --kubelet-config FILE, --config-dir DIR or --flags"
        raise click.UsageError(msg)
    node = load_node(snapshot, live=live, root=root, kubelet_root=kubelet_root, pods=pods)
    release = node_release(node, kubelet_version)
    if to_kubelet is not None:
        from cpumanager.cli.node_versions import to_release

        new = None
        if kubelet_config is not None or config_dir is not None or flags:
            new = load_effective_config(
                config=kubelet_config, config_dir=config_dir,
                flags=split_command_line(flags, source="--flags") if flags else (),
            ).config  # fmt: skip
        ctx.exit(to_release(node, to_kubelet, config=new, output=output, from_release=release))
    try:
        effective = load_effective_config(
            config=kubelet_config,
            config_dir=config_dir,
            flags=split_command_line(flags, source="--flags") if flags else (),
            release=release,
        )
        check_release(node, release, config=effective.config)
        answer = check(node, effective.config)
    except KubeletConfigInvalidError as err:
        answer = Preflight(False, "; ".join(err.errors), list(err.errors))
        answer.notes.append(
            f"The kubelet {release[0]}.{release[1]} refuses the configuration itself (stage: "
            f"{err.stage}): fix it first."
        )
    except ConfigError as err:
        answer = Preflight(False, str(err), [str(err)])
        answer.notes.append("The kubelet refuses the configuration itself: fix it first.")
    if output in STRUCTURED:
        emit_as(output, answer.to_json())
    else:
        if answer.safe:
            lines = ["safe: the kubelet would start with this configuration"]
        else:
            lines = ["refused: the kubelet would not start; it would log:"]
            lines += textwrap.wrap(
                printable(answer.refusal), width=_WIDTH, initial_indent="  ",
                subsequent_indent="  ",
            )  # fmt: skip
            lines += _lines("every reason:", answer.reasons)
            lines += _lines("drain these pods (they lose their exclusive CPUs):", answer.drain)
            lines += _lines("'recover' would keep:", answer.recover_keeps)
            lines += _lines("'recover' would return to the shared pool:", answer.recover_returns)
        lines += _lines("notes:", answer.notes)
        click.echo("\n".join(lines))
    if not answer.safe:
        ctx.exit(1)
