"""One agent tick: the kubelet's pod lifecycle, for local processes and cgroups.

A tick does, in order:

1. read the workloads (Pod manifests naming a pid or a cgroup); a directory that cannot be
   listed skips the whole tick, so a missing mount never releases every workload;
2. split them into live ones and waiting ones (the runtime says whether the process or the
   cgroup exists); admitted workloads that are no longer listed or no longer alive are
   forgotten, and a process that still runs gets its original affinity back;
3. stale-state removal: every checkpoint entry that is neither a live admitted workload nor
   a live ``cpumanager run`` pod is released (the kubelet's removeStaleState);
4. admit new live workloads in file order through the topology manager (hints, merge,
   allocation); on the agent's first tick this re-admits what the checkpoint already holds,
   which gives every pod its CPUs back, as a restarted kubelet does;
5. reconcile: push each admitted container's cpuset (exclusive or the shared pool) through
   the runtime, skipping those already right;
6. report: what happened, as a :class:`TickReport`, and one log line per allocation,
   release, rejection and failure.

A rejected workload is retried on the next tick (resources may have been freed); its
rejection is logged once until the reason changes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from cpumanager.adapters.workloads import Workload, WorkloadScan
from cpumanager.agent.owners import is_run_uid, placeholder_pods
from cpumanager.core.events import (
    Allocated,
    ManagerEvent,
    PinningFailed,
    Released,
    StateRepaired,
)
from cpumanager.core.ids import ContainerID, PodUID
from cpumanager.core.printable import printable
from cpumanager.core.reconcile import ContainerPhase, ContainerStatus
from cpumanager.core.workload import Pod, guaranteed_cpus
from cpumanager.errors import CpuManagerError, RuntimeApplyError
from cpumanager.manager.node import Node
from cpumanager.ports import Observer, Runtime

__all__ = ["AgentLoop", "EventBuffer", "FanOut", "PinningRuntime", "TickReport"]

_LOG = logging.getLogger("cpumanager.agent")


class PinningRuntime(Runtime, Protocol):
    """A Runtime that can tell whether a workload still exists and undo its changes."""

    def alive(self, container_id: ContainerID) -> bool: ...

    def restore(self, container_id: ContainerID | None = None) -> None: ...


class EventBuffer:
    """Observer that keeps events until the loop drains them."""

    def __init__(self) -> None:
        self.events: list[ManagerEvent] = []

    def notify(self, event: ManagerEvent) -> None:
        self.events.append(event)

    def drain(self) -> list[ManagerEvent]:
        events, self.events = self.events, []
        return events


class FanOut:
    """Observer that hands every event to several observers, in order."""

    def __init__(self, observers: Sequence[Observer]) -> None:
        self._observers = tuple(observers)

    def notify(self, event: ManagerEvent) -> None:
        for observer in self._observers:
            observer.notify(event)


@dataclass
class TickReport:
    """What one tick did (``to_json`` is what ``cpumanager agent --once`` prints)."""

    tick: int
    workloads: int = 0
    admitted: list[dict[str, Any]] = field(default_factory=list)
    rejected: list[dict[str, Any]] = field(default_factory=list)
    released: list[dict[str, Any]] = field(default_factory=list)
    applied: dict[str, str] = field(default_factory=dict)
    unchanged: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    waiting: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    default_cpuset: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "tick": self.tick,
            "workloads": self.workloads,
            "admitted": self.admitted,
            "rejected": self.rejected,
            "released": self.released,
            "applied": self.applied,
            "unchanged": self.unchanged,
            "failed": self.failed,
            "waiting": self.waiting,
            "errors": self.errors,
            "notes": self.notes,
            "defaultCpuSet": self.default_cpuset,
        }


class AgentLoop:
    """Admits, reclaims and pins local workloads through a real Node, one tick at a time."""

    def __init__(
        self,
        *,
        node: Node,
        events: EventBuffer,
        workloads: Callable[[], WorkloadScan],
        runtime: PinningRuntime,
        run_owner_alive: Callable[[str], bool],
        logger: logging.Logger = _LOG,
    ) -> None:
        self.node = node
        self._events = events
        self._workloads = workloads
        self.runtime = runtime
        self._run_owner_alive = run_owner_alive
        self._log = logger
        self._admitted: dict[PodUID, Workload] = {}
        self._pending: dict[PodUID, Workload] = {}  # live at start, not yet re-admitted
        self._rejections: dict[PodUID, str] = {}
        self._ticks = 0
        self._started = False

    # --- wiring --------------------------------------------------------------------------

    def active_pods(self) -> list[Pod]:
        """Admitted live workloads, plus the checkpoint entries of live ``run`` pods."""
        pods = [w.pod for w in self._pending.values() if w.pod.uid not in self._admitted]
        pods += [workload.pod for workload in self._admitted.values()]
        pods += placeholder_pods(
            self.node.snapshot().cpu,
            lambda uid: is_run_uid(uid) and self._run_owner_alive(uid),
        )
        return pods

    def start(self) -> None:
        """Restore the checkpoint (V1 files migrate through the listed workloads).

        Listed live workloads count as active from the start, as the pods the API server
        lists do for a restarting kubelet, so their checkpoint entries survive until the
        first tick re-admits them. What start-up did (stale entries released, repairs) is
        reported by the first tick.
        """
        scan = self._workloads()
        self._pending = {w.pod.uid: w for w in scan.workloads if self.runtime.alive(w.container_id)}
        running = [(w.container_id, w.pod.uid, w.pod.containers[0].name) for w in scan.workloads]
        self.node.start(active_pods=self.active_pods, running_containers=running)
        self._started = True
        self._restore_unlisted({w.container_id for w in scan.workloads})

    def _restore_unlisted(self, listed: set[ContainerID]) -> None:
        """Put back the saved originals of targets no manifest lists any more.

        A previous agent (stopped by SIGKILL, or ``--once``) left them pinned; their
        originals survive in the state directory (the runtime loaded them).
        """
        saved: Callable[[], Mapping[ContainerID, object]] | None = getattr(
            self.runtime, "saved", None
        )
        if saved is None:
            return
        for target in sorted(set(saved()) - listed):
            try:
                self.runtime.restore(target)
            except RuntimeApplyError as err:
                self._log.warning("%s", err.message)
            else:
                self._log.info("%s is no longer listed; its original CPUs are back", target)

    @property
    def started(self) -> bool:
        return self._started

    @property
    def admitted(self) -> dict[PodUID, Workload]:
        return dict(self._admitted)

    # --- the tick ------------------------------------------------------------------------

    def tick(self) -> TickReport:
        """One pass: read, forget the gone, reclaim, admit the new, reconcile, report."""
        if not self._started:
            self.start()
        self._ticks += 1
        report = TickReport(tick=self._ticks)
        try:
            scan = self._workloads()
        except CpuManagerError as err:
            report.errors.append(err.message)
            report.notes.append("workloads could not be read; nothing was changed this tick")
            self._log.error("%s", err.message)
            return report
        for message in scan.errors:
            self._log.error("%s", message)
        report.errors.extend(scan.errors)
        report.workloads = len(scan.workloads)
        live: list[Workload] = []
        for workload in scan.workloads:
            if self.runtime.alive(workload.container_id):
                live.append(workload)
            else:
                report.waiting.append(workload.pod.display_name)
        self._forget_gone(live, report)
        listed = {w.pod.uid: w.container_id for w in live}
        self._pending = {
            uid: w
            for uid, w in self._pending.items()
            if listed.get(uid) == w.container_id and not self._spec_changed(w, report)
        }
        self.node.remove_stale_state()
        self._absorb(report)
        for workload in live:
            if workload.pod.uid not in self._admitted:
                self._admit(workload, report)
        self._pending = {}
        statuses = [
            ContainerStatus(
                w.pod.key(w.pod.containers[0].name), w.container_id, ContainerPhase.RUNNING
            )
            for w in self._admitted.values()
        ]
        result = self.node.reconcile(self.runtime, statuses)
        ids = {w.pod.uid: w.container_id for w in self._admitted.values()}
        for key, cpus in result.updated:
            report.applied[ids[key.pod_uid]] = str(cpus)
            report.failed.pop(ids[key.pod_uid], None)
            self._log.info("applied cpuset %s to %s", cpus, ids[key.pod_uid])
        for key in result.unchanged:
            if ids[key.pod_uid] not in report.applied:
                report.unchanged.append(ids[key.pod_uid])
        for key, message in result.failed:
            target = ids.get(key.pod_uid)
            if target is None:  # a placeholder (run pod): its owner pins it
                continue
            report.failed[target] = message
            self._log.warning("could not apply cpuset to %s: %s", target, message)
        self._absorb(report)
        report.default_cpuset = str(self.node.snapshot().cpu.default_cpuset)
        return report

    def _forget_gone(self, live: list[Workload], report: TickReport) -> None:
        current = {w.pod.uid: w for w in live}
        for uid, workload in list(self._admitted.items()):
            now = current.get(uid)
            if now is not None and now.container_id == workload.container_id:
                if now.pod == workload.pod:
                    continue
                # A changed spec is a new pod, as for the kubelet (a pod's resources are
                # immutable there): release, then admit it again in this tick.
                report.notes.append(
                    f"{now.pod.display_name}: its spec changed; released and admitted again"
                )
                self._log.info("%s: spec changed; released and admitted again", now.source)
            del self._admitted[uid]
            # As the kubelet's RemoveContainer: release now, and forget what was applied, so
            # a new process under the same pod gets its cpuset pushed again.
            self.node.remove_pod(uid, container_ids=(workload.container_id,), reclaim=False)
            if self.runtime.alive(workload.container_id):
                try:
                    self.runtime.restore(workload.container_id)
                except RuntimeApplyError as err:
                    report.failed[workload.container_id] = err.message
                    self._log.warning("%s", err.message)
                else:
                    report.notes.append(
                        f"{workload.pod.display_name}: no longer listed; "
                        f"{workload.container_id} got its original CPUs back"
                    )

    def _spec_changed(self, workload: Workload, report: TickReport) -> bool:
        """Whether a workload kept from before a restart now asks for other exclusive CPUs.

        Its checkpoint entry was made for the old spec; keeping it would silently give the
        old CPUs to the new spec, so the entry is released and the pod admitted anew.
        """
        container = workload.pod.containers[0]
        held = self.node.snapshot().cpu.cpuset_of(workload.pod.uid, container.name)
        wanted = guaranteed_cpus(workload.pod, container)
        if len(held or ()) == wanted:
            return False
        report.notes.append(
            f"{workload.pod.display_name}: its spec changed while the agent was down; "
            "released and admitted again"
        )
        return True

    def _admit(self, workload: Workload, report: TickReport) -> None:
        pod = workload.pod
        container = pod.containers[0]
        self._admitted[pod.uid] = workload  # active while its allocation is made
        admitted = False
        try:
            result = self.node.admit(pod)
            self._absorb(report)
        except CpuManagerError as err:
            reason, message = err.reason, err.message
        else:
            admitted, reason, message = result.admitted, result.reason, result.message
        if admitted:
            self._rejections.pop(pod.uid, None)
            placement = self.node.placement(pod, container)
            cpus = placement.cpus
            exclusive = cpus if placement.exclusive else None
            if exclusive is not None:
                # The kubelet creates the container with its cpuset (PreStartContainer); a
                # local process already runs, so pin it now. On failure the reconcile pass
                # of this tick (and of every later one) retries.
                try:
                    self.runtime.apply(workload.container_id, exclusive)
                except RuntimeApplyError as err:
                    self._log.warning("could not pin %s: %s", pod.display_name, err.message)
                else:
                    report.applied[workload.container_id] = str(exclusive)
                    self.node.container_started(pod, container, workload.container_id)
            report.admitted.append(
                {
                    "pod": pod.display_name,
                    "uid": pod.uid,
                    "target": workload.container_id,
                    "cpus": str(cpus),
                    "exclusive": exclusive is not None,
                }
            )
            if exclusive is None:
                self._log.info("admitted %s to the shared pool %s", pod.display_name, cpus)
            return
        del self._admitted[pod.uid]
        self.node.remove_pod(pod.uid)  # a partial allocation goes back
        report.rejected.append({"pod": pod.display_name, "reason": reason, "message": message})
        if self._rejections.get(pod.uid) != f"{reason}: {message}":
            self._rejections[pod.uid] = f"{reason}: {message}"
            self._log.warning("rejected %s: %s: %s", pod.display_name, reason, message)

    # --- events --------------------------------------------------------------------------

    def _name(self, uid: str) -> str:
        workload = self._admitted.get(PodUID(uid))
        return workload.pod.display_name if workload is not None else printable(uid)

    def _absorb(self, report: TickReport) -> None:
        for event in self._events.drain():
            match event:
                case Allocated(reused=False):
                    self._log.info(
                        "allocated CPUs %s to %s/%s",
                        event.cpus,
                        self._name(event.pod_uid),
                        event.container_name,
                    )
                case Released():
                    report.released.append(
                        {
                            "uid": event.pod_uid,
                            "container": event.container_name,
                            "cpus": str(event.cpus),
                            "reason": event.reason,
                        }
                    )
                    self._log.info(
                        "released CPUs %s of %s/%s (%s)",
                        event.cpus,
                        printable(event.pod_uid),  # stored ids may predate the uid rule
                        printable(event.container_name),
                        event.reason,
                    )
                case PinningFailed():
                    self._log.warning(
                        "pinning failed for %s/%s: %s",
                        self._name(event.pod_uid),
                        event.container_name,
                        event.message,
                    )
                case StateRepaired():
                    report.notes.append(event.description)
                    self._log.warning("state repaired: %s", event.description)
                case _:
                    pass
