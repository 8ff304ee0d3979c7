"""The kubelet's PodResources answers (``v1.PodResourcesLister``) as plain frozen values.

The gRPC client (``cpumanager.adapters.podresources``) decodes the wire messages into these;
the snapshot file stores them with :func:`answers_to_dict` and reads them back with
:func:`answers_from_dict`. Field meanings follow the public ``api.proto``:

* ``cpu_ids`` are the exclusive CPUs the CPU manager gave a container (empty for shared-pool
  containers); the pod-level ``cpu_ids`` (newer kubelets) repeat the containers' CPUs.
* ``numa_nodes`` is None when the kubelet sent no ``topology`` (a device without NUMA
  affinity), and a tuple of node ids otherwise.
* ``memory`` lists the memory manager's blocks: ``memory_type`` is ``memory`` or
  ``hugepages-<size>``, ``size_bytes`` the bytes pinned on ``numa_nodes``.
* Dynamic resources (DRA claims) are kept as the kubelet reports them.

Each of the three calls may be missing from a snapshot (an older kubelet, a disabled gate,
rate limiting); :class:`CallResult` records what happened with a one-line reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from cpumanager.core.cpuset import MAX_CPU_ID, CPUSet
from cpumanager.errors import InvalidCPUSetError
from cpumanager.nodeview._fields import fail, get_int, get_list, get_map, get_str, obj

__all__ = [
    "AllocatableResources",
    "CallResult",
    "CallStatus",
    "ClaimResource",
    "ContainerResources",
    "DeviceAllocation",
    "DynamicResource",
    "MemoryBlock",
    "PodResources",
    "PodResourcesAnswers",
    "answers_from_dict",
    "answers_to_dict",
    "cpu_set_of",
]

CallStatus = Literal["ok", "unimplemented", "disabled", "rate-limited", "error", "skipped"]
_STATUSES: tuple[str, ...] = ("ok", "unimplemented", "disabled", "rate-limited", "error", "skipped")


def cpu_set_of(ids: Sequence[object], where: str) -> CPUSet:
    """A CPUSet from wire or JSON CPU ids; ids outside 0..MAX_CPU_ID are refused (ValueError)."""
    for cpu in ids:
        if isinstance(cpu, bool) or not isinstance(cpu, int) or not 0 <= cpu <= MAX_CPU_ID:
            msg = f"{where}: CPU id {cpu!r} is not between 0 and {MAX_CPU_ID}"
            raise ValueError(msg)
    return CPUSet(ids)  # type: ignore[arg-type]  # every id was checked above


_NO_CPUS = CPUSet()


@dataclass(frozen=True, slots=True)
class DeviceAllocation:
    """Devices of one resource, with their NUMA affinity (None: no topology reported)."""

    resource_name: str
    device_ids: tuple[str, ...]
    numa_nodes: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True)
class MemoryBlock:
    """Memory of one type pinned by the memory manager on a set of NUMA nodes."""

    memory_type: str
    size_bytes: int
    numa_nodes: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True)
class ClaimResource:
    """One device a DRA driver prepared for a claim."""

    cdi_devices: tuple[str, ...] = ()
    driver_name: str = ""
    pool_name: str = ""
    device_name: str = ""
    share_id: str | None = None


@dataclass(frozen=True, slots=True)
class DynamicResource:
    """A resource claim of a container and the devices prepared for it."""

    claim_name: str
    claim_namespace: str
    claim_resources: tuple[ClaimResource, ...] = ()


@dataclass(frozen=True, slots=True)
class ContainerResources:
    """What one container holds: devices, exclusive CPUs, pinned memory, claims."""

    name: str
    devices: tuple[DeviceAllocation, ...] = ()
    cpu_ids: CPUSet = _NO_CPUS
    memory: tuple[MemoryBlock, ...] = ()
    dynamic_resources: tuple[DynamicResource, ...] = ()


@dataclass(frozen=True, slots=True)
class PodResources:
    """One pod's containers and its pod-level exclusive CPUs and memory (newer kubelets)."""

    name: str
    namespace: str
    containers: tuple[ContainerResources, ...] = ()
    cpu_ids: CPUSet = _NO_CPUS
    memory: tuple[MemoryBlock, ...] = ()


@dataclass(frozen=True, slots=True)
class AllocatableResources:
    """What the kubelet can hand out: devices, CPUs and memory, per NUMA node."""

    devices: tuple[DeviceAllocation, ...] = ()
    cpu_ids: CPUSet = _NO_CPUS
    memory: tuple[MemoryBlock, ...] = ()


@dataclass(frozen=True, slots=True)
class CallResult:
    """How one RPC went: ``ok`` or why not, in one line."""

    status: CallStatus
    reason: str = ""


@dataclass(frozen=True, slots=True)
class PodResourcesAnswers:
    """Everything the PodResources API said. ``pods`` is None when ``List`` failed; ``get``
    holds the answer of the probe ``Get`` call (the first listed pod), None when not made."""

    pods: tuple[PodResources, ...] | None
    allocatable: AllocatableResources | None
    calls: Mapping[str, CallResult]
    get: PodResources | None = None


# --- to JSON ---------------------------------------------------------------------------


def _numa(nodes: tuple[int, ...] | None) -> dict[str, object]:
    return {} if nodes is None else {"numaNodes": list(nodes)}


def _devices(devices: tuple[DeviceAllocation, ...]) -> list[dict[str, object]]:
    return [
        {"resourceName": d.resource_name, "deviceIds": list(d.device_ids), **_numa(d.numa_nodes)}
        for d in devices
    ]


def _memory(blocks: tuple[MemoryBlock, ...]) -> list[dict[str, object]]:
    return [
        {"memoryType": m.memory_type, "sizeBytes": m.size_bytes, **_numa(m.numa_nodes)}
        for m in blocks
    ]


def _claims(claims: tuple[DynamicResource, ...]) -> list[dict[str, object]]:
    return [
        {
            "claimName": c.claim_name,
            "claimNamespace": c.claim_namespace,
            "claimResources": [
                {
                    "cdiDevices": list(r.cdi_devices),
                    "driverName": r.driver_name,
                    "poolName": r.pool_name,
                    "deviceName": r.device_name,
                    **({} if r.share_id is None else {"shareId": r.share_id}),
                }
                for r in c.claim_resources
            ],
        }
        for c in claims
    ]


def _pod(pod: PodResources) -> dict[str, object]:
    return {
        "name": pod.name,
        "namespace": pod.namespace,
        "cpuIds": str(pod.cpu_ids),
        "memory": _memory(pod.memory),
        "containers": [
            {
                "name": c.name,
                "cpuIds": str(c.cpu_ids),
                "devices": _devices(c.devices),
                "memory": _memory(c.memory),
                "dynamicResources": _claims(c.dynamic_resources),
            }
            for c in pod.containers
        ],
    }


def answers_to_dict(answers: PodResourcesAnswers) -> dict[str, object]:
    """The snapshot's ``podResources`` object (CPU ids in the kubelet's list format)."""
    result: dict[str, object] = {
        "calls": {
            name: {"status": call.status, "reason": call.reason}
            for name, call in sorted(answers.calls.items())
        },
        "pods": None if answers.pods is None else [_pod(p) for p in answers.pods],
        "allocatable": None,
        "get": None if answers.get is None else _pod(answers.get),
    }
    if answers.allocatable is not None:
        alloc = answers.allocatable
        result["allocatable"] = {
            "cpuIds": str(alloc.cpu_ids),
            "devices": _devices(alloc.devices),
            "memory": _memory(alloc.memory),
        }
    return result


# --- from JSON -------------------------------------------------------------------------


def _cpus(body: Mapping[str, object], where: str) -> CPUSet:
    text = get_str(body, "cpuIds", where)
    try:
        return CPUSet.parse(text)
    except InvalidCPUSetError as err:
        fail(f"{where}.cpuIds", f"{text!r} is not a CPU list ({err.detail})")


def _numa_of(body: Mapping[str, object], where: str) -> tuple[int, ...] | None:
    if "numaNodes" not in body:
        return None
    nodes = get_list(body, "numaNodes", where)
    for node in nodes:
        if isinstance(node, bool) or not isinstance(node, int) or node < 0:
            fail(f"{where}.numaNodes", f"{node!r} is not a NUMA node id")
    return tuple(nodes)  # type: ignore[arg-type]  # checked above


def _devices_of(body: Mapping[str, object], where: str) -> tuple[DeviceAllocation, ...]:
    result = []
    for index, raw in enumerate(get_list(body, "devices", where)):
        path = f"{where}.devices[{index}]"
        item = obj(raw, path)
        ids = get_list(item, "deviceIds", path)
        if not all(isinstance(i, str) for i in ids):
            fail(f"{path}.deviceIds", "expected a list of strings")
        result.append(
            DeviceAllocation(
                resource_name=get_str(item, "resourceName", path),
                device_ids=tuple(str(i) for i in ids),
                numa_nodes=_numa_of(item, path),
            )
        )
    return tuple(result)


def _memory_of(body: Mapping[str, object], where: str) -> tuple[MemoryBlock, ...]:
    result = []
    for index, raw in enumerate(get_list(body, "memory", where)):
        path = f"{where}.memory[{index}]"
        item = obj(raw, path)
        result.append(
            MemoryBlock(
                memory_type=get_str(item, "memoryType", path),
                size_bytes=get_int(item, "sizeBytes", path),
                numa_nodes=_numa_of(item, path),
            )
        )
    return tuple(result)


def _claims_of(body: Mapping[str, object], where: str) -> tuple[DynamicResource, ...]:
    result = []
    for index, raw in enumerate(get_list(body, "dynamicResources", where)):
        path = f"{where}.dynamicResources[{index}]"
        item = obj(raw, path)
        resources = []
        for r_index, r_raw in enumerate(get_list(item, "claimResources", path)):
            r_path = f"{path}.claimResources[{r_index}]"
            r_item = obj(r_raw, r_path)
            cdi = get_list(r_item, "cdiDevices", r_path)
            if not all(isinstance(name, str) for name in cdi):
                fail(f"{r_path}.cdiDevices", "expected a list of strings")
            share = r_item.get("shareId")
            if share is not None and not isinstance(share, str):
                fail(f"{r_path}.shareId", "expected a string")
            resources.append(
                ClaimResource(
                    cdi_devices=tuple(str(name) for name in cdi),
                    driver_name=get_str(r_item, "driverName", r_path),
                    pool_name=get_str(r_item, "poolName", r_path),
                    device_name=get_str(r_item, "deviceName", r_path),
                    share_id=share,
                )
            )
        result.append(
            DynamicResource(
                claim_name=get_str(item, "claimName", path),
                claim_namespace=get_str(item, "claimNamespace", path),
                claim_resources=tuple(resources),
            )
        )
    return tuple(result)


def _pod_of(raw: object, where: str) -> PodResources:
    body = obj(raw, where)
    containers = []
    for index, c_raw in enumerate(get_list(body, "containers", where)):
        path = f"{where}.containers[{index}]"
        item = obj(c_raw, path)
        containers.append(
            ContainerResources(
                name=get_str(item, "name", path),
                devices=_devices_of(item, path),
                cpu_ids=_cpus(item, path),
                memory=_memory_of(item, path),
                dynamic_resources=_claims_of(item, path),
            )
        )
    return PodResources(
        name=get_str(body, "name", where),
        namespace=get_str(body, "namespace", where),
        containers=tuple(containers),
        cpu_ids=_cpus(body, where),
        memory=_memory_of(body, where),
    )


def answers_from_dict(raw: object, where: str = "podResources") -> PodResourcesAnswers:
    """Read back :func:`answers_to_dict`'s object; SnapshotError names a bad field."""
    body = obj(raw, where)
    calls = {}
    for name, call_raw in get_map(body, "calls", where).items():
        path = f"{where}.calls.{name}"
        call = obj(call_raw, path)
        status = get_str(call, "status", path)
        if status not in _STATUSES:
            fail(f"{path}.status", f"{status!r} is not one of {', '.join(_STATUSES)}")
        calls[name] = CallResult(status=status, reason=get_str(call, "reason", path))  # type: ignore[arg-type]
    pods = None
    if body.get("pods") is not None:
        pods = tuple(
            _pod_of(p, f"{where}.pods[{i}]") for i, p in enumerate(get_list(body, "pods", where))
        )
    allocatable = None
    if body.get("allocatable") is not None:
        path = f"{where}.allocatable"
        alloc = obj(body["allocatable"], path)
        allocatable = AllocatableResources(
            devices=_devices_of(alloc, path),
            cpu_ids=_cpus(alloc, path),
            memory=_memory_of(alloc, path),
        )
    get = None if body.get("get") is None else _pod_of(body["get"], f"{where}.get")
    return PodResourcesAnswers(pods=pods, allocatable=allocatable, calls=calls, get=get)
