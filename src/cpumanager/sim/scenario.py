"""Scenario: a machine, a kubelet configuration, optional prior state, and events.

A scenario file is YAML or JSON::

    machine: {preset: dual-socket-ht}        # or {shape: 2s1n8c2t}, {sysfs: DIR}, {file: PATH},
                                             # or inline cpus; with sysfs, view: kernel reads
                                             # the kernel's masks (default: the kubelet's view)
    kubelet: {cpuManagerPolicy: static, reservedSystemCPUs: "0"}   # or {file: PATH}
    devices: {nvidia.com/gpu: {0: 2, 1: 2}}  # optional: device counts (or ids) per NUMA node
    memory: {0: {memory: 64Gi}}              # optional: allocatable memory per NUMA node
    state: {file: cpu_manager_state}         # or inline {defaultCpuSet, entries}
    pods: [<Pod manifest>, ...]              # running at start; they own the state entries
    containers: {<pod>: {NAME: ID}}          # optional: container ids of the running pods
                                             # (what a V1 checkpoint is keyed by)
    events:
      - admit: <Pod manifest or {file: PATH}>
      - delete: <pod name or UID>
      - exit: <pod>                          # containers stop; the manager is not told
      - restart: {running: [<pod>, {pod: NAME, containers: {NAME: ID}}], recover: false}
      - reconcile: {}
      - offline: "4-7"  /  - online: "4-7"   # CPU hotplug (takes effect at the next restart)
      - reconfigure: {<kubelet fields>}      # takes effect at the next restart

Other top-level keys (``name``, ``expect``, comments for tools) are ignored, so example
files can carry the outcome they expect next to the story. Container ids default to
``cri://<pod name>-<container name>``.

Relative paths are resolved against the scenario file's folder. Parsing turns everything
into typed values here, at the edge (the device and memory tables through
:mod:`cpumanager.sim.resources`); the simulator never sees raw YAML.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import yaml

from cpumanager.adapters._text import load_yaml_documents, read_utf8_text
from cpumanager.core.cpuset import CPUSet
from cpumanager.core.quantity import parse_quantity
from cpumanager.core.topology import CPUTopology
from cpumanager.core.versions import parse_release
from cpumanager.core.workload import Pod
from cpumanager.errors import CpuManagerError, InputError, InvalidCPUSetError, ScenarioError
from cpumanager.manager.node import NodeResources
from cpumanager.sim.resources import parse_resources

__all__ = [
    "Admit",
    "Delete",
    "Event",
    "Exit",
    "Hotplug",
    "Reconcile",
    "Reconfigure",
    "Resize",
    "Restart",
    "RunningPod",
    "Scenario",
    "load_scenario",
    "parse_scenario",
]


@dataclass(frozen=True, slots=True)
class Admit:
    pod: Pod


@dataclass(frozen=True, slots=True)
class Delete:
    pod: str


@dataclass(frozen=True, slots=True)
class Exit:
    pod: str


@dataclass(frozen=True, slots=True)
class RunningPod:
    """A pod named in a restart's ``running`` list, with optional container ids."""

    pod: str
    container_ids: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Restart:
    running: tuple[RunningPod, ...] | None  # None: every pod the simulator knows is running
    recover: bool = False


@dataclass(frozen=True, slots=True)
class Reconcile:
    pass


@dataclass(frozen=True, slots=True)
class Hotplug:
    cpus: CPUSet
    online: bool


@dataclass(frozen=True, slots=True)
class Reconfigure:
    kubelet: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Resize:
    """An in-place resize of one container: new request = limit for the given resources."""

    pod: str
    container: str
    resources: Mapping[str, Fraction]


Event = Admit | Delete | Exit | Restart | Reconcile | Hotplug | Reconfigure | Resize


@dataclass(frozen=True, slots=True)
class Scenario:
    source: str
    topology: CPUTopology
    kubelet: Mapping[str, Any]
    pods: tuple[Pod, ...]
    events: tuple[Event, ...]
    state_bytes: bytes | None = None
    resources: NodeResources = field(default_factory=NodeResources)  # devices, memory
    name: str = ""
    container_ids: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    kubelet_version: tuple[int, int] | None = None  # None: the newest release


def load_scenario(path: Path) -> Scenario:
    """Read and parse one scenario file; every problem is a one-line ScenarioError."""
    try:
        text = read_utf8_text(path, what="scenario", utf8_remedy="save it as UTF-8")
    except InputError as err:
        msg = f"cannot read scenario {str(path)!r}: {err.message}"
        raise ScenarioError(msg) from err
    data = _safe_yaml(text, f"scenario {str(path)!r}")
    return parse_scenario(data, source=str(path), base=path.parent)


def _safe_yaml(text: str, what: str) -> Any:
    """One YAML document, depth-checked before it is built (``adapters/_text.py``)."""
    try:
        docs = load_yaml_documents(
            text, source=what, error=ScenarioError, remedy="fix it", loader=yaml.SafeLoader
        )
    except ScenarioError as err:
        if "not valid YAML or JSON" in err.message:
            msg = err.message.replace(": not valid YAML or JSON", " is not valid YAML/JSON:", 1)
            raise ScenarioError(msg) from err
        raise
    if len(docs) > 1:
        msg = f"{what} holds {len(docs)} YAML documents; give one"
        raise ScenarioError(msg)
    return docs[0] if docs else None


def _mapping(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        msg = f"{where}: expected a mapping, got {type(value).__name__}"
        raise ScenarioError(msg)
    return value


def _read_yaml_file(base: Path, name: object, where: str) -> Any:
    if not isinstance(name, str):
        msg = f"{where}.file: expected a path"
        raise ScenarioError(msg)
    path = base / name
    try:
        text = read_utf8_text(path, what="file", utf8_remedy="save it as UTF-8")
    except InputError as err:
        msg = f"{where}.file: cannot read {str(path)!r}: {err.message}"
        raise ScenarioError(msg) from err
    return _safe_yaml(text, f"{where}.file: {str(path)!r}")


def _machine(raw: object, base: Path) -> CPUTopology:
    from cpumanager.adapters.machine_file import read_machine_file
    from cpumanager.adapters.sysfs import SysfsReader
    from cpumanager.formats.machine_format import topology_from_dict
    from cpumanager.presets import get_preset

    spec = _mapping(raw, "machine")
    if "preset" in spec:
        return get_preset(str(spec["preset"]))
    if "shape" in spec:
        return get_preset(str(spec["shape"]))
    if "sysfs" in spec:
        return SysfsReader(base / str(spec["sysfs"]), view=str(spec.get("view", "kubelet"))).read()
    if "file" in spec:
        return read_machine_file(base / str(spec["file"]))
    if "cpus" in spec:
        return topology_from_dict(spec)
    msg = "machine: give one of preset, sysfs, file or an inline cpus list"
    raise ScenarioError(msg)


def _pods(raw: object, base: Path, where: str) -> list[Pod]:
    from cpumanager.formats.manifest import pods_from_documents

    if raw is None:
        return []
    items = raw if isinstance(raw, list) else [raw]
    docs: list[object] = []
    for index, item in enumerate(items):
        if isinstance(item, Mapping) and set(item) == {"file"}:
            loaded = _read_yaml_file(base, item["file"], f"{where}[{index}]")
            docs.extend(loaded if isinstance(loaded, list) else [loaded])
        else:
            docs.append(item)
    return pods_from_documents(docs)


def _running(raw: object) -> tuple[RunningPod, ...] | None:
    if raw is None:
        return None
    if not isinstance(raw, list):
        msg = "restart.running: expected a list of pod names or {pod, containers} items"
        raise ScenarioError(msg)
    found = []
    for item in raw:
        if isinstance(item, str):
            found.append(RunningPod(item))
        elif isinstance(item, Mapping) and isinstance(item.get("pod"), str):
            ids = item.get("containers") or {}
            if not isinstance(ids, Mapping):
                msg = "restart.running[].containers: expected {name: container-id}"
                raise ScenarioError(msg)
            found.append(RunningPod(str(item["pod"]), {str(k): str(v) for k, v in ids.items()}))
        else:
            msg = f"restart.running: cannot read item {item!r}; give a pod name or {{pod: NAME}}"
            raise ScenarioError(msg)
    return tuple(found)


def _event(raw: object, index: int, base: Path) -> Event:
    where = f"events[{index}]"
    if not isinstance(raw, Mapping) or len(raw) != 1:
        msg = f"{where}: each event is a mapping with exactly one key (admit, delete, ...)"
        raise ScenarioError(msg)
    ((kind, body),) = raw.items()
    match kind:
        case "admit":
            pods = _pods(body, base, where)
            if len(pods) != 1:
                msg = f"{where}.admit: expected exactly one pod, got {len(pods)}"
                raise ScenarioError(msg)
            return Admit(pods[0])
        case "delete" | "exit":
            if not isinstance(body, str) or not body:
                msg = f"{where}.{kind}: give the pod's name or UID"
                raise ScenarioError(msg)
            return Delete(body) if kind == "delete" else Exit(body)
        case "restart":
            spec = _mapping(body or {}, f"{where}.restart")
            return Restart(_running(spec.get("running")), bool(spec.get("recover", False)))
        case "reconcile":
            return Reconcile()
        case "offline" | "online":
            try:
                cpus = CPUSet.parse(str(body))
            except InvalidCPUSetError as err:
                msg = f"{where}.{kind}: {err.message}"
                raise ScenarioError(msg) from err
            return Hotplug(cpus, online=kind == "online")
        case "reconfigure":
            return Reconfigure(dict(_mapping(body, f"{where}.reconfigure")))
        case "resize":
            return _resize(_mapping(body, f"{where}.resize"), f"{where}.resize")
    msg = (
        f"{where}: unknown event {kind!r}; use admit, delete, exit, restart, reconcile, "
        "offline, online, reconfigure or resize"
    )
    raise ScenarioError(msg)


def _resize(spec: Mapping[str, Any], where: str) -> Resize:
    pod, container = spec.get("pod"), spec.get("container")
    if not isinstance(pod, str) or not pod or not isinstance(container, str) or not container:
        msg = f"{where}: give pod, container and cpu and/or memory, e.g. {{pod: a, container: c}}"
        raise ScenarioError(msg)
    resources: dict[str, Fraction] = {}
    for name in ("cpu", "memory"):
        if name in spec:
            resources[name] = parse_quantity(spec[name], field=f"{where}.{name}")
    if not resources:
        msg = f"{where}: give the new cpu and/or memory"
        raise ScenarioError(msg)
    return Resize(pod, container, resources)


def _container_ids(raw: object) -> dict[str, dict[str, str]]:
    """``containers: {pod: {container: id}}`` for the pods running at start."""
    found: dict[str, dict[str, str]] = {}
    for pod, ids in _mapping(raw or {}, "containers").items():
        inner = _mapping(ids, f"containers.{pod}")
        for name, container_id in inner.items():
            if not isinstance(container_id, str) or not container_id:
                msg = f"containers.{pod}.{name}: expected a container id such as 'containerd://abc'"
                raise ScenarioError(msg)
        found[str(pod)] = {str(name): str(cid) for name, cid in inner.items()}
    return found


def _checked_ids(ids: dict[str, dict[str, str]], pods: Sequence[Pod]) -> dict[str, dict[str, str]]:
    """Every ``containers`` key names a pod of ``pods`` and only its containers."""
    for ref, names in ids.items():
        pod = next((p for p in pods if ref in (p.uid, p.name, p.display_name)), None)
        if pod is None:
            msg = f"containers.{ref}: no pod {ref!r} under pods; name a pod running at start"
            raise ScenarioError(msg)
        known = {c.name for c in pod.all_containers()}
        for name in names:
            if name not in known:
                msg = (
                    f"containers.{ref}.{name}: pod {ref!r} has no container {name!r}; "
                    f"use one of {', '.join(sorted(known))}"
                )
                raise ScenarioError(msg)
    return ids


def _events(raw: object, base: Path) -> tuple[Event, ...]:
    if not isinstance(raw, Sequence) or isinstance(raw, str):
        msg = "events: expected a list"
        raise ScenarioError(msg)
    return tuple(_event(item, i, base) for i, item in enumerate(raw))


def _state_bytes(raw: object, base: Path) -> bytes | None:
    if raw is None:
        return None
    spec = _mapping(raw, "state")
    if "file" in spec:
        path = base / str(spec["file"])
        try:
            return path.read_bytes()
        except OSError as err:
            msg = f"state.file: cannot read {str(path)!r}: {err}"
            raise ScenarioError(msg) from err
    from cpumanager.checkpoint.cpu.codec import encode_v2
    from cpumanager.core.state import StateSnapshot

    entries = _mapping(spec.get("entries") or {}, "state.entries")
    assignments = {
        pod: {name: CPUSet.parse(str(cpus)) for name, cpus in _mapping(c, "state.entries").items()}
        for pod, c in entries.items()
    }
    snapshot = StateSnapshot(
        str(spec.get("policyName", "static")),
        CPUSet.parse(str(spec.get("defaultCpuSet", ""))),
        assignments,  # type: ignore[arg-type]
    )
    return encode_v2(snapshot)


def parse_scenario(data: object, *, source: str, base: Path) -> Scenario:
    """Typed scenario from parsed YAML; library errors are re-raised as one-line messages."""
    spec = _mapping(data, "scenario")
    try:
        topology = _machine(spec.get("machine", {"preset": "dual-socket-ht"}), base)
        kubelet_raw = spec.get("kubelet") or {}
        kubelet = _mapping(kubelet_raw, "kubelet")
        if set(kubelet) == {"file"}:
            kubelet = _mapping(_read_yaml_file(base, kubelet["file"], "kubelet"), "kubelet")
        pods = _pods(spec.get("pods"), base, "pods")
        events = _events(spec.get("events") or [], base)
        state = _state_bytes(spec.get("state"), base)
    except ScenarioError:
        raise
    except CpuManagerError as err:
        msg = f"scenario {source!r}: {err.message}"
        raise ScenarioError(msg) from err
    devices = _mapping(spec.get("devices") or {}, "devices")
    memory = _mapping(spec.get("memory") or {}, "memory")
    container_ids = _checked_ids(_container_ids(spec.get("containers")), pods)
    return Scenario(
        source=source,
        topology=topology,
        kubelet=dict(kubelet),
        pods=tuple(pods),
        events=events,
        state_bytes=state,
        resources=parse_resources(devices, memory),
        name=str(spec.get("name", "")),
        container_ids=container_ids,
        kubelet_version=_kubelet_version(spec.get("kubeletVersion")),
    )


def _kubelet_version(raw: object) -> tuple[int, int] | None:
    if raw is None:
        return None
    try:
        return parse_release(str(raw))
    except CpuManagerError as err:
        msg = f"kubeletVersion: {err.message}"
        raise ScenarioError(msg) from err
