"""The simulator: drive the real managers through a scenario, with no I/O, and report.

The same Node, CPUManager, TopologyManager and policies that run anywhere else run here,
wired to an in-memory checkpoint (the exact bytes a kubelet would write), a recording runtime
and a fake clock. Nothing simulated is special-cased: the simulator only plays the kubelet's
part around the managers (pod admission, PreStartContainer, the reconcile loop, restarts).

Event semantics:

* ``admit``: the kubelet's admission; on success the pod's containers start (their ids are
  recorded through ``Node.container_started``, the kubelet's PreStartContainer hook).
* ``delete``: the pod is removed; its containers stop and, as the kubelet's reconcile loop
  does within a period, stale state is removed right away.
* ``exit``: the pod's containers stop without the manager being told; its CPUs come back at
  the next stale-state removal (next admission, hint request, reconcile or restart).
* ``restart``: the kubelet stops and starts again from the checkpoint it wrote; pods absent
  from ``running`` are gone. Pending ``offline``/``online``/``reconfigure`` changes take
  effect here. A state the kubelet would refuse stops the node (until a later restart)
  unless ``recover: true``. Running pods are re-admitted, as the kubelet does.
* ``reconcile``: one pass of the reconcile loop against the recording runtime.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from cpumanager.adapters.memory_store import InMemoryStore
from cpumanager.core import versions
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.events import Allocated, Released, StateRepaired
from cpumanager.core.ids import ContainerID, ContainerKey, PodUID
from cpumanager.core.reconcile import ContainerPhase, ContainerStatus
from cpumanager.core.topology import CPUInfo, CPUTopology
from cpumanager.core.workload import Pod
from cpumanager.errors import ConfigError, CpuManagerError, ScenarioError
from cpumanager.formats.kubelet_config import KubeletConfig
from cpumanager.manager.node import Node, NodeState
from cpumanager.metrics import PrometheusObserver
from cpumanager.nodeview.version_preflight import config_findings
from cpumanager.sim.fakes import AppliedCpusets, Collector, FakeClock
from cpumanager.sim.report import (
    EventReport,
    SimulationReport,
    decision_entries,
    placement_entry,
)
from cpumanager.sim.resize import resize_event
from cpumanager.sim.scenario import (
    Admit,
    Delete,
    Event,
    Exit,
    Hotplug,
    Reconcile,
    Reconfigure,
    Resize,
    Restart,
    RunningPod,
    Scenario,
)

__all__ = ["EventReport", "SimulationReport", "simulate"]

CHECKPOINT_PATH = "/var/lib/kubelet/cpu_manager_state"


class _Simulation:
    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.machine = scenario.topology
        self.offline = CPUSet()
        self.kubelet_raw: dict[str, Any] = dict(scenario.kubelet)
        self.store = InMemoryStore(scenario.state_bytes, source=CHECKPOINT_PATH)
        self.metrics = PrometheusObserver(numa_of_cpu=lambda cpu: self.machine.info(cpu).numa)
        self.collector = Collector(self.metrics)
        self.clock = FakeClock()
        self.runtime = AppliedCpusets()
        self.pods: dict[PodUID, Pod] = {}
        self.active: list[PodUID] = []
        self.container_ids: dict[ContainerKey, ContainerID] = {}
        self.node: Node | None = None
        self.saved: NodeState | None = None  # memory and devices across restarts
        self.reports: list[EventReport] = []

    # --- helpers ---------------------------------------------------------------------------

    def active_pods(self) -> list[Pod]:
        return [self.pods[uid] for uid in self.active]

    def topology(self) -> CPUTopology:
        if not self.offline:
            return self.machine
        online = self.machine.all_cpus - self.offline
        records = [
            CPUInfo(r.cpu, r.core, r.socket, r.numa, r.l3)
            for cpu, r in self.machine.cpus.items()
            if cpu in online
        ]
        return CPUTopology(records, numa_nodes=self.machine.numa_nodes, name=self.machine.name)

    def find(self, ref: str) -> Pod:
        for pod in self.pods.values():
            if ref in (pod.uid, pod.name, pod.display_name):
                return pod
        msg = f"no pod named {ref!r} in this scenario; name a pod admitted earlier"
        raise ScenarioError(msg)

    def default_text(self) -> str:
        return str(self.node.snapshot().cpu.default_cpuset) if self.node else ""

    def container_id(self, pod: Pod, name: str) -> ContainerID:
        key = pod.key(name)
        return self.container_ids.setdefault(
            key, ContainerID(f"cri://{pod.name or pod.uid}-{name}")
        )

    def describe_containers(self, pod: Pod) -> dict[str, dict[str, Any]]:
        node = self.node
        if node is None:
            return {}
        found: dict[str, dict[str, Any]] = {}
        for container in pod.all_containers():
            placed = node.placement(pod, container)
            found[container.name] = placement_entry(self.machine, placed, placed.cpus)
        return found

    def absorb(self, report: EventReport) -> None:
        """Move manager events of this step into the report."""
        for event in self.collector.drain():
            if isinstance(event, Released):
                report.released.append(
                    {
                        "pod": self._pod_name(event.pod_uid),
                        "uid": event.pod_uid,
                        "container": event.container_name,
                        "cpus": str(event.cpus),
                        "returned": str(event.returned),
                        "reason": event.reason,
                    }
                )
            elif isinstance(event, StateRepaired):
                report.repairs.append(event.description)
            elif isinstance(event, Allocated) and event.trace:
                report.explain.append(
                    {
                        "container": event.container_name,
                        "cpus": str(event.cpus),
                        "why": list(event.trace),
                    }
                )

    def _pod_name(self, uid: str) -> str:
        pod = self.pods.get(PodUID(uid))
        return pod.name if pod is not None and pod.name else uid

    # --- the kubelet's part -------------------------------------------------------------------

    def release_config(self, kubelet: KubeletConfig) -> KubeletConfig:
        """The configuration as the scenario's kubelet release starts with it: refused
        (ConfigError) when that release does not accept its gates, else with the release's
        gate values filled in (the Node built for the release refuses options it lacks or
        gates off, in the kubelet's words)."""
        release = self.scenario.kubelet_version or versions.NEWEST
        findings = config_findings(kubelet, release, option_levels=False)
        refusals = [f.text for f in findings if f.verdict == "refuse"]
        if refusals:
            raise ConfigError("; ".join(refusals))
        return kubelet.with_gate_values(versions.gate_values(release, kubelet.feature_gates))

    def boot(self, report: EventReport, *, recover: bool) -> bool:
        """Build and start a node; False (and the kubelet's refusal) when it cannot start."""
        self.node = None
        try:
            kubelet = self.release_config(KubeletConfig.from_mapping(self.kubelet_raw))
            node = Node(
                topology=self.topology(),
                kubelet=kubelet,
                store=self.store,
                resources=self.scenario.resources,
                observer=self.collector,
                clock=self.clock,
                state=self.saved,
                release=self.scenario.kubelet_version,
            )
            running = [
                (self.container_id(pod, c.name), pod.uid, c.name)
                for pod in self.active_pods()
                for c in pod.all_containers()
            ]
            node.start(active_pods=self.active_pods, running_containers=running, recover=recover)
        except CpuManagerError as err:
            message = err.message
            if err.reason.startswith(("Checkpoint", "StateValidation")):
                message = (
                    f"could not restore state from checkpoint: {err.message}, please drain this "
                    f'node and delete the CPU manager checkpoint file "{CHECKPOINT_PATH}" before '
                    "restarting Kubelet (or restart with recover: true to repair it)"
                )
            report.error = {"type": err.reason, "message": message}
            report.admitted = False
            self.absorb(report)
            return False
        self.node = node
        self.absorb(report)
        for pod in self.active_pods():
            result = node.admit(pod)
            self.absorb(report)
            if not result.admitted:
                report.notes.append(
                    f"re-admission of running pod {pod.display_name} failed: {result.reason}: "
                    f"{result.message}"
                )
            report.containers.update(
                {f"{pod.name}/{k}": v for k, v in self.describe_containers(pod).items()}
            )
        return True

    def admit(self, pod: Pod) -> EventReport:
        report = EventReport("admit", pod.name, pod.uid)
        if pod.uid in self.pods and pod.uid in self.active:
            report.error = {
                "type": "ScenarioError",
                "message": f"pod {pod.display_name} is already running; delete it first",
            }
            report.admitted = False
            return report
        self.pods[pod.uid] = pod
        node = self.node
        if node is None:
            report.admitted = False
            report.error = {
                "type": "NodeNotReady",
                "message": "the kubelet is not running (its last start failed); add a restart",
            }
            return report
        self.clock.now += 0.001
        result = node.admit(pod)
        report.admitted = result.admitted
        report.explain.extend(decision_entries(result))
        self.absorb(report)
        if result.admitted:
            self.active.append(pod.uid)
            for container in pod.all_containers():
                node.container_started(pod, container, self.container_id(pod, container.name))
            report.containers = self.describe_containers(pod)
        else:
            report.error = {"type": result.reason, "message": result.message}
        report.default_cpuset = self.default_text()
        return report

    def remove(self, ref: str, *, tell_manager: bool) -> EventReport:
        pod = self.find(ref)
        report = EventReport("delete" if tell_manager else "exit", pod.name, pod.uid)
        if pod.uid in self.active:
            self.active.remove(pod.uid)
        else:
            report.notes.append(f"pod {pod.display_name} was not running")
        if self.node is not None:
            # The containers stopped (PostStopContainer drops the pod's hints); a delete
            # also runs stale-state removal right away, as the reconcile loop would.
            self.node.remove_pod(pod.uid, reclaim=tell_manager)
            if not tell_manager:
                report.notes.append(
                    "the manager was not told; the CPUs return at the next stale-state removal"
                )
        self.absorb(report)
        report.default_cpuset = self.default_text()
        return report

    def restart(self, event: Restart) -> EventReport:
        report = EventReport("restart")
        if self.node is not None:
            self.saved = _carried_over(self.node.stop(), self.saved)
        self.node = None
        if event.running is not None:
            keep: list[PodUID] = []
            for item in event.running:
                pod = self.find(item.pod)
                keep.append(pod.uid)
                self._record_ids(pod, item)
            gone = [uid for uid in self.active if uid not in keep]
            if gone:
                report.notes.append(
                    "pods gone while the kubelet was down: "
                    + ", ".join(self._pod_name(u) for u in gone)
                )
            self.active = keep
        ok = self.boot(report, recover=event.recover)
        report.admitted = ok
        report.default_cpuset = self.default_text()
        return report

    def _record_ids(self, pod: Pod, item: RunningPod) -> None:
        for name, container_id in item.container_ids.items():
            self.container_ids[pod.key(name)] = ContainerID(container_id)

    def reconcile(self) -> EventReport:
        report = EventReport("reconcile")
        if self.node is None:
            report.error = {"type": "NodeNotReady", "message": "the kubelet is not running"}
            return report
        statuses = [
            ContainerStatus(pod.key(c.name), self.container_id(pod, c.name), ContainerPhase.RUNNING)
            for pod in self.active_pods()
            for c in pod.all_containers()
        ]
        result = self.node.reconcile(self.runtime, statuses)
        self.absorb(report)
        report.reconcile = {
            "updated": {
                f"{self._pod_name(k.pod_uid)}/{k.container_name}": str(c) for k, c in result.updated
            },
            "unchanged": [
                f"{self._pod_name(k.pod_uid)}/{k.container_name}" for k in result.unchanged
            ],
            "failed": {
                f"{self._pod_name(k.pod_uid)}/{k.container_name}": m for k, m in result.failed
            },
        }
        report.default_cpuset = self.default_text()
        return report

    def resize(self, event: Resize) -> EventReport:
        pod = self.find(event.pod)
        release = self.scenario.kubelet_version or versions.NEWEST
        report, resized = resize_event(pod, event, self.kubelet_raw, release)
        if resized is not None:
            self.pods[pod.uid] = resized
        report.default_cpuset = self.default_text()
        return report

    def run(self, events: Iterable[Event]) -> list[EventReport]:
        start = EventReport("start")
        for pod in self.scenario.pods:
            self.pods[pod.uid] = pod
            self.active.append(pod.uid)
        for ref, ids in self.scenario.container_ids.items():
            self._record_ids(self.find(ref), RunningPod(ref, ids))
        start.admitted = self.boot(start, recover=False)
        start.default_cpuset = self.default_text()
        self.reports.append(start)
        for event in events:
            self.reports.append(self.step(event))
        return self.reports

    def step(self, event: Event) -> EventReport:
        match event:
            case Admit():
                return self.admit(event.pod)
            case Delete():
                return self.remove(event.pod, tell_manager=True)
            case Exit():
                return self.remove(event.pod, tell_manager=False)
            case Restart():
                return self.restart(event)
            case Reconcile():
                return self.reconcile()
            case Hotplug():
                report = EventReport("online" if event.online else "offline")
                self.offline = (
                    self.offline - event.cpus if event.online else self.offline | event.cpus
                )
                unknown = event.cpus - self.machine.all_cpus
                if unknown:
                    report.error = {
                        "type": "ScenarioError",
                        "message": f"CPUs {unknown} are not on this machine",
                    }
                report.notes.append(
                    f"CPUs {event.cpus} {'online' if event.online else 'offline'}; the kubelet "
                    "reads the topology at start: takes effect at the next restart"
                )
                report.default_cpuset = self.default_text()
                return report
            case Resize():
                return self.resize(event)
            case Reconfigure():
                self.kubelet_raw.update(event.kubelet)
                report = EventReport("reconfigure")
                report.notes.append(
                    "kubelet configuration changed ("
                    + ", ".join(sorted(event.kubelet))
                    + "); takes effect at the next restart"
                )
                report.default_cpuset = self.default_text()
                return report


def _carried_over(state: NodeState, earlier: NodeState | None) -> NodeState:
    """A manager that was off in the run that stopped keeps the state it had before (its
    checkpoint stays on disk while it is off)."""
    if earlier is None:
        return state
    if state.memory is None and earlier.memory is not None:
        state = replace(state, memory=earlier.memory)
    if state.devices is None and earlier.devices is not None:
        state = replace(state, devices=earlier.devices)
    return state


def simulate(scenario: Scenario) -> SimulationReport:
    """Run every event of ``scenario`` through the managers and report what happened."""
    sim = _Simulation(scenario)
    reports = sim.run(scenario.events)
    snapshot = sim.node.snapshot().cpu if sim.node is not None else None
    entries: dict[str, dict[str, str]] = {}
    default = ""
    if snapshot is not None:
        default = str(snapshot.default_cpuset)
        entries = {
            str(pod): {str(name): str(cpus) for name, cpus in containers.items()}
            for pod, containers in snapshot.assignments.items()
        }
    return SimulationReport(
        scenario=scenario.source,
        machine=scenario.topology.name,
        events=reports,
        final_default=default,
        final_entries=entries,
        checkpoint=(sim.store.data or b"").decode("utf-8", "replace"),
        metrics=sim.metrics.samples(),
    )
