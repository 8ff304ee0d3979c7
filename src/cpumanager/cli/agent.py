"""`cpumanager run` and `cpumanager agent`: pin real local workloads (thin edge over app)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from cpumanager.cli.logs import configure, log, log_format_option
from cpumanager.cli.options import load_topology, machine_options

__all__ = ["agent", "run"]

_DURATION_HELP = "Go duration such as 10s, 500ms or 1m."


def _kubelet(path: Path | None) -> Any:
    from cpumanager.app import DEFAULT_KUBELET_CONFIG

    if path is None:
        return DEFAULT_KUBELET_CONFIG
    from cpumanager.adapters.kubelet_config_file import read_kubelet_config

    return read_kubelet_config(path)


def _config(
    *,
    state_dir: Path,
    kubelet_config: Path | None,
    sysfs: Path | None,
    machine: str | None,
    **extra: Any,
) -> Any:
    from cpumanager.app import AgentConfig

    topology = load_topology(sysfs=sysfs, machine=machine)
    return AgentConfig(
        state_dir=state_dir, kubelet=_kubelet(kubelet_config), topology=topology, **extra
    )


def _nonempty_dir(ctx: click.Context, param: click.Parameter, value: str) -> Path:
    # Path("") is Path("."): an empty value would silently mean the current directory.
    if not value.strip():
        msg = "must name a directory, e.g. /var/lib/cpumanager (an empty value is refused)"
        raise click.BadParameter(msg)
    return Path(value)


_state_dir = click.option(
    "--state-dir",
    type=click.Path(file_okay=False),
    callback=_nonempty_dir,
    default="/var/lib/cpumanager",
    show_default=True,
    help="Where the checkpoint (kubelet format) and the lock live.",
)
_kubelet_config = click.option(
    "--kubelet-config",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="A KubeletConfiguration file. Default: static policy, 1 reserved CPU, "
    "topology manager best-effort.",
)


@click.command(context_settings={"ignore_unknown_options": False})
@click.option("--cpus", type=click.IntRange(min=1), required=True, help="Exclusive CPUs.")
@click.option("--memory", default="1Gi", show_default=True, help="Memory request and limit.")
@_state_dir
@_kubelet_config
@machine_options
@click.option("--dry-run", is_flag=True, help="Print the CPUs that would be chosen; run nothing.")
@click.option("-v", "--verbose", is_flag=True, help="Say on stderr which CPUs were chosen.")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def run(
    *,
    cpus: int,
    memory: str,
    state_dir: Path,
    kubelet_config: Path | None,
    sysfs: Path | None,
    machine: str | None,
    dry_run: bool,
    verbose: bool,
    command: tuple[str, ...],
) -> None:
    """Admit a Guaranteed pod of CPUS through the kubelet's managers, then run COMMAND on them.

    \b
    Example: cpumanager run --cpus 2 -- ./benchmark --threads 2

    Exits with COMMAND's exit code; a rejection prints the kubelet's reason and exits 1.
    """
    from cpumanager.app import build_run_session, run_pod_of_this_process
    from cpumanager.errors import InputError

    if not command and not dry_run:
        msg = "give the command to run after '--', e.g. cpumanager run --cpus 2 -- ./job"
        raise InputError(msg)
    config = _config(
        state_dir=state_dir, kubelet_config=kubelet_config, sysfs=sysfs, machine=machine
    )
    session = build_run_session(config, dry_run=dry_run, notice=_say)
    pod = run_pod_of_this_process(cpus=cpus, memory=memory)
    admission = session.admit(pod, locked=not dry_run)
    for uid in sorted(session.reclaimed):
        _say(
            f"reclaimed the CPUs of {uid}: that run ended without releasing them (killed "
            "with SIGKILL?); a command it started may still run on them"
        )
    if dry_run:
        click.echo(json.dumps({**admission.to_json(), "command": list(command)}, sort_keys=True))
        return
    if verbose:
        numa = ",".join(map(str, admission.numa_nodes))
        click.echo(f"cpumanager: running on CPUs {admission.cpus} (NUMA {numa})", err=True)
    try:
        code = session.execute(command, admission.cpus)
    finally:
        problem = session.release(pod)
        if problem is not None:
            click.echo(
                f"cpumanager: warning: CPUs {admission.cpus} not released now ({problem}); "
                "the next run or agent tick reclaims them",
                err=True,
            )
    raise SystemExit(code)


def _say(message: str) -> None:
    click.echo(f"cpumanager: {message}", err=True)


def _duration(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    if value is None:
        return None
    from cpumanager.errors import ConfigError
    from cpumanager.formats.kubelet_config import parse_go_duration

    try:
        seconds = parse_go_duration(value, field="--period")
    except ConfigError as err:
        raise click.BadParameter(err.message) from err
    if seconds <= 0:
        msg = "must be positive, e.g. 10s"
        raise click.BadParameter(msg)
    return float(seconds)


@click.command()
@click.option(
    "--workloads",
    "workloads",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    required=True,
    help="Directory of Pod manifests annotated cpumanager.io/pid or cpumanager.io/cgroup.",
)
@_state_dir
@_kubelet_config
@machine_options
@click.option("--period", callback=_duration, default=None, help=_DURATION_HELP + " Default: "
              "the kubelet configuration's cpuManagerReconcilePeriod (10s).")  # fmt: skip
@click.option(
    "--runtime",
    type=click.Choice(["affinity", "cgroup"]),
    default="affinity",
    show_default=True,
    help="How cpusets are applied: sched_setaffinity on pids, or cgroup v2 cpuset.cpus.",
)
@click.option(
    "--cgroup-root",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("/sys/fs/cgroup"),
    show_default=True,
    help="The cgroup v2 mount (with --runtime cgroup).",
)
@click.option("--metrics-port", type=click.IntRange(1, 65535), default=None,
              help="Serve Prometheus metrics on 127.0.0.1:PORT.")  # fmt: skip
@click.option("--once", is_flag=True, help="Run one tick, print its JSON report, exit.")
@click.option(
    "--log-level",
    type=click.Choice(["debug", "info", "warning", "error"]),
    default="info",
    show_default=True,
    help="The least severe log lines shown.",
)
@log_format_option
def agent(
    *,
    workloads: Path,
    state_dir: Path,
    kubelet_config: Path | None,
    sysfs: Path | None,
    machine: str | None,
    period: float | None,
    runtime: str,
    cgroup_root: Path,
    metrics_port: int | None,
    once: bool,
    log_level: str,
    log_format: str,
) -> None:
    """Keep local workloads pinned: admit new ones, reclaim gone ones, apply cpusets.

    Each Pod manifest in WORKLOADS names what to pin with the annotation
    cpumanager.io/pid: "1234" or cpumanager.io/cgroup: "path/below/root". SIGTERM or
    SIGINT stops the agent and gives every workload its original CPUs back.
    """
    from cpumanager.app import build_agent

    configure(log_format, log_level)
    config = _config(
        state_dir=state_dir,
        kubelet_config=kubelet_config,
        sysfs=sysfs,
        machine=machine,
        workloads_dir=workloads,
        period_s=period,
        runtime=runtime,
        cgroup_root=cgroup_root,
        metrics_port=metrics_port,
    )
    wired = build_agent(config)
    log(
        "agent",
        "starting",
        workloads=str(workloads),
        stateDir=str(state_dir),
        runtime=runtime,
        period=config.period(),
        metrics=f"127.0.0.1:{metrics_port}" if metrics_port else "off",
        once=once,
    )
    try:
        if once:
            wired.loop.start()
            report = wired.loop.tick()
            click.echo(json.dumps(report.to_json(), sort_keys=True))
            return
        wired.serve_metrics()
        wired.daemon.run()
    finally:
        wired.close()
