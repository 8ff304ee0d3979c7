"""The composition root: configuration in, wired agent or run session out.

This is the only place that constructs production adapters (sysfs reader, checkpoint store,
runtimes, metrics server). Everything else receives them through ports, so tests build the
same loop with an in-memory store and a recording runtime.

Defaults, chosen so ``cpumanager run --cpus 2 -- cmd`` works on a stock machine:

* state directory ``/var/lib/cpumanager`` (the checkpoint is ``cpu_manager_state`` there, in
  the kubelet's format, next to the ``lock`` file);
* kubelet configuration: static CPU manager policy with one reserved CPU the kubelet's way
  (``kubeReserved.cpu: 1``, so the policy picks which), topology manager ``best-effort``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from cpumanager.adapters import filestore
from cpumanager.adapters.checkpoint_store import DEFAULT_NAME, CheckpointStore
from cpumanager.adapters.memory_store import InMemoryStore
from cpumanager.adapters.runtimes._originals import ORIGINALS_NAME, OriginalsFile
from cpumanager.adapters.runtimes.affinity import AffinityRuntime, process_start_time
from cpumanager.adapters.runtimes.cgroupv2 import cgroup_runtime
from cpumanager.adapters.sysfs import SysfsReader
from cpumanager.adapters.workloads import TargetCheck, read_workloads
from cpumanager.agent.daemon import Daemon, StateDirLock
from cpumanager.agent.loop import AgentLoop, EventBuffer, FanOut, PinningRuntime
from cpumanager.agent.owners import run_owner_alive
from cpumanager.agent.run import RunSession, pod_for_this_process
from cpumanager.core.topology import CPUTopology
from cpumanager.core.workload import Pod
from cpumanager.errors import ConfigError, HostError
from cpumanager.formats.kubelet_config import KubeletConfig
from cpumanager.manager.node import Node
from cpumanager.metrics import PrometheusObserver
from cpumanager.ports import NULL_OBSERVER, Clock, Observer, StateStore

__all__ = [
    "DEFAULT_KUBELET_CONFIG",
    "DEFAULT_STATE_DIR",
    "RUNTIME_KINDS",
    "Agent",
    "AgentConfig",
    "build_agent",
    "build_run_session",
    "build_runtime",
    "run_pod_of_this_process",
]

DEFAULT_STATE_DIR = Path("/var/lib/cpumanager")
DEFAULT_KUBELET_CONFIG: Mapping[str, object] = MappingProxyType(
    {
        "kind": "KubeletConfiguration",
        "cpuManagerPolicy": "static",
        "kubeReserved": {"cpu": "1"},
        "topologyManagerPolicy": "best-effort",
    }
)
RUNTIME_KINDS = ("affinity", "cgroup")
RUN_LOCK_TIMEOUT_S = 10.0  # runs hold the lock for milliseconds; an agent holds it for good


@dataclass(frozen=True, slots=True)
class AgentConfig:
    """Everything the agent and ``run`` need, as plain values (built by the CLI)."""

    state_dir: Path = DEFAULT_STATE_DIR
    kubelet: KubeletConfig | Mapping[str, object] = field(
        default_factory=lambda: DEFAULT_KUBELET_CONFIG
    )
    sysfs_root: Path = Path("/")
    topology: CPUTopology | None = None  # a machine given directly (overrides sysfs_root)
    runtime: str = "affinity"
    cgroup_root: Path = Path("/sys/fs/cgroup")
    period_s: float | None = None  # None: the kubelet's cpuManagerReconcilePeriod
    metrics_port: int | None = None
    workloads_dir: Path | None = None
    extra_observers: tuple[Observer, ...] = field(default_factory=tuple)

    def kubelet_config(self) -> KubeletConfig:
        if isinstance(self.kubelet, KubeletConfig):
            return self.kubelet
        return KubeletConfig.from_mapping(self.kubelet)

    def machine(self) -> CPUTopology:
        if self.topology is not None:
            return self.topology
        return SysfsReader(self.sysfs_root).read()

    def period(self) -> float:
        if self.period_s is not None:
            if self.period_s <= 0:
                msg = f"--period must be positive, e.g. '10s'; got {self.period_s}s"
                raise ConfigError(msg)
            return self.period_s
        period = self.kubelet_config().cpu_manager_reconcile_period_seconds
        if period <= 0:  # a drop-in or flag can set 0s; the kubelet would then spin
            msg = "cpuManagerReconcilePeriod is 0s; set it (e.g. '10s') or give --period"
            raise ConfigError(msg)
        return float(period)


def build_runtime(
    kind: str, *, cgroup_root: Path = Path("/sys/fs/cgroup"), state_dir: Path | None = None
) -> PinningRuntime:
    """The runtime named ``affinity`` (sched_setaffinity) or ``cgroup`` (v2 or v1 cpusets).

    With ``state_dir`` (whose lock the caller holds) the originals it saves are persisted
    there, so a restarted agent knows them.
    """
    originals = None
    if state_dir is not None:
        originals = OriginalsFile(state_dir / ORIGINALS_NAME, kind=kind)
    if kind == "affinity":
        return AffinityRuntime(originals=originals)
    if kind == "cgroup":
        return cgroup_runtime(cgroup_root, originals=originals)
    msg = f"unknown runtime {kind!r}; use one of {', '.join(RUNTIME_KINDS)}"
    raise ConfigError(msg)


def _alive(uid: str) -> bool:
    return run_owner_alive(uid, process_start_time)


@dataclass
class Agent:
    """A wired agent: the loop, its daemon, the state-directory lock and the metrics."""

    loop: AgentLoop
    daemon: Daemon
    lock: StateDirLock
    metrics: PrometheusObserver
    metrics_port: int | None = None
    _close_metrics: Callable[[], None] | None = None

    def serve_metrics(self) -> None:
        """Serve the Prometheus exposition on 127.0.0.1:<metrics_port> (if one is set)."""
        if self.metrics_port is None or self._close_metrics is not None:
            return
        from prometheus_client import start_http_server

        try:
            server, _thread = start_http_server(
                self.metrics_port, addr="127.0.0.1", registry=self.metrics.registry
            )
        except OSError as err:
            msg = (
                f"cannot serve metrics on 127.0.0.1:{self.metrics_port}: "
                f"{err.strerror or err}; pick a free --metrics-port"
            )
            raise HostError(msg) from err

        def close() -> None:
            server.shutdown()
            server.server_close()

        self._close_metrics = close

    def close(self) -> None:
        """Stop serving metrics and drop the lock."""
        if self._close_metrics is not None:
            self._close_metrics()
            self._close_metrics = None
        self.lock.release()


def build_agent(
    config: AgentConfig,
    *,
    runtime: PinningRuntime | None = None,
    store: StateStore | None = None,
    clock: Clock | None = None,
) -> Agent:
    """Lock the state directory, then wire machine, store, Node, runtime and observers."""
    if config.workloads_dir is None:
        msg = "the agent needs --workloads DIR (Pod manifests naming a pid or a cgroup)"
        raise ConfigError(msg)
    workloads_dir = config.workloads_dir
    kubelet = config.kubelet_config()
    period = config.period()
    topology = config.machine()
    if runtime is None and config.runtime not in RUNTIME_KINDS:
        build_runtime(config.runtime)  # the one-line ConfigError, before taking the lock
    lock = StateDirLock(config.state_dir).acquire()
    try:
        pinning = runtime or build_runtime(
            config.runtime, cgroup_root=config.cgroup_root, state_dir=config.state_dir
        )
        refuse: TargetCheck | None = getattr(pinning, "target_refusal", None)
        metrics = PrometheusObserver(numa_of_cpu=lambda cpu: topology.info(cpu).numa)
        events = EventBuffer()
        node = Node(
            topology=topology,
            kubelet=kubelet,
            store=store or CheckpointStore(config.state_dir, clean_temps=True),
            observer=FanOut((events, metrics, *config.extra_observers)),
        )
        loop = AgentLoop(
            node=node,
            events=events,
            workloads=lambda: read_workloads(workloads_dir, refuse=refuse),
            runtime=pinning,
            run_owner_alive=_alive,
        )
        daemon = Daemon(loop=loop, period_s=period, clock=clock)
    except BaseException:
        lock.release()
        raise
    return Agent(loop, daemon, lock, metrics, config.metrics_port)


def build_run_session(
    config: AgentConfig,
    *,
    dry_run: bool = False,
    notice: Callable[[str], None] = lambda message: None,
) -> RunSession:
    """A run session on the state directory (a read-only in-memory copy with ``dry_run``)."""
    kubelet = config.kubelet_config()
    topology = config.machine()
    stores: list[CheckpointStore] = []

    def store() -> StateStore:
        if dry_run:
            path = config.state_dir / DEFAULT_NAME
            return InMemoryStore(filestore.read_bytes(path), source=str(path))
        stores.append(CheckpointStore(config.state_dir, clean_temps=True))
        return stores[-1]

    def node() -> Node:
        return Node(topology=topology, kubelet=kubelet, store=store(), observer=NULL_OBSERVER)

    def host_failure() -> HostError | None:
        return stores[-1].failure if stores else None

    return RunSession(
        node_factory=node,
        lock=lambda: StateDirLock(config.state_dir, timeout_s=RUN_LOCK_TIMEOUT_S, role="run"),
        run_owner_alive=_alive,
        host_failure=host_failure,
        notice=notice,
    )


def run_pod_of_this_process(*, cpus: int, memory: str) -> Pod:
    """The pod ``cpumanager run`` admits, owned by this very process."""
    pid = os.getpid()
    started = process_start_time(pid)
    if started is None:  # pragma: no cover - we are running
        msg = "cannot read this process's start time from /proc; is /proc mounted?"
        raise HostError(msg)
    return pod_for_this_process(cpus=cpus, memory=memory, pid=pid, started=started)
