"""Between wire messages (``messages.py``) and the plain values of ``nodeview.podresources``.

Decoding checks what protobuf cannot: CPU ids must fit a CPUSet and NUMA ids must be
non-negative; a kubelet answer that breaks that is a one-line PodResourcesError naming the
call. Encoding is what the test server (``server.py``) sends.
"""

from __future__ import annotations

from typing import Any

from cpumanager.adapters.podresources.messages import message_class
from cpumanager.errors import PodResourcesError
from cpumanager.nodeview.podresources import (
    AllocatableResources,
    ClaimResource,
    ContainerResources,
    DeviceAllocation,
    DynamicResource,
    MemoryBlock,
    PodResources,
    cpu_set_of,
)

__all__ = [
    "allocatable_from_message",
    "allocatable_response",
    "get_response",
    "list_response",
    "pod_from_message",
    "pods_from_list",
]


def _numa(message: Any, where: str) -> tuple[int, ...] | None:
    if not message.HasField("topology"):
        return None
    nodes = tuple(int(node.ID) for node in message.topology.nodes)
    if any(node < 0 for node in nodes):
        msg = f"{where}: NUMA node ids {list(nodes)} include a negative id"
        raise ValueError(msg)
    return nodes


def _devices(messages: Any, where: str) -> tuple[DeviceAllocation, ...]:
    return tuple(
        DeviceAllocation(
            resource_name=str(m.resource_name),
            device_ids=tuple(str(i) for i in m.device_ids),
            numa_nodes=_numa(m, f"{where}.devices[{n}]"),
        )
        for n, m in enumerate(messages)
    )


def _memory(messages: Any, where: str) -> tuple[MemoryBlock, ...]:
    return tuple(
        MemoryBlock(
            memory_type=str(m.memory_type),
            size_bytes=int(m.size),
            numa_nodes=_numa(m, f"{where}.memory[{n}]"),
        )
        for n, m in enumerate(messages)
    )


def _claims(messages: Any) -> tuple[DynamicResource, ...]:
    return tuple(
        DynamicResource(
            claim_name=str(m.claim_name),
            claim_namespace=str(m.claim_namespace),
            claim_resources=tuple(
                ClaimResource(
                    cdi_devices=tuple(str(d.name) for d in r.cdi_devices),
                    driver_name=str(r.driver_name),
                    pool_name=str(r.pool_name),
                    device_name=str(r.device_name),
                    share_id=str(r.share_id) if r.HasField("share_id") else None,
                )
                for r in m.claim_resources
            ),
        )
        for m in messages
    )


def _checked(call: str, build: Any, *args: Any) -> Any:
    try:
        return build(*args)
    except ValueError as err:
        msg = f"the kubelet's {call} answer is unusable ({err}); report it with the kubelet version"
        raise PodResourcesError(msg) from err


def _pod(message: Any, where: str) -> PodResources:
    containers = tuple(
        ContainerResources(
            name=str(c.name),
            devices=_devices(c.devices, f"{where}.containers[{n}]"),
            cpu_ids=cpu_set_of(list(c.cpu_ids), f"{where}.containers[{n}].cpu_ids"),
            memory=_memory(c.memory, f"{where}.containers[{n}]"),
            dynamic_resources=_claims(c.dynamic_resources),
        )
        for n, c in enumerate(message.containers)
    )
    return PodResources(
        name=str(message.name),
        namespace=str(message.namespace),
        containers=containers,
        cpu_ids=cpu_set_of(list(message.cpu_ids), f"{where}.cpu_ids"),
        memory=_memory(message.memory, where),
    )


def pod_from_message(call: str, message: Any) -> PodResources:
    """One ``PodResources`` message as a value."""
    return _checked(call, _pod, message, "pod_resources")  # type: ignore[no-any-return]


def pods_from_list(message: Any) -> tuple[PodResources, ...]:
    """Every pod of a ``ListPodResourcesResponse``."""

    def build() -> tuple[PodResources, ...]:
        return tuple(_pod(p, f"pod_resources[{n}]") for n, p in enumerate(message.pod_resources))

    return _checked("List", build)  # type: ignore[no-any-return]


def allocatable_from_message(message: Any) -> AllocatableResources:
    """An ``AllocatableResourcesResponse`` as a value."""

    def build() -> AllocatableResources:
        return AllocatableResources(
            devices=_devices(message.devices, "allocatable"),
            cpu_ids=cpu_set_of(list(message.cpu_ids), "allocatable.cpu_ids"),
            memory=_memory(message.memory, "allocatable"),
        )

    return _checked("GetAllocatableResources", build)  # type: ignore[no-any-return]


# --- encoding (what a kubelet would send) ----------------------------------------------


def _fill_numa(target: Any, nodes: tuple[int, ...] | None) -> None:
    if nodes is None:
        return
    target.topology.SetInParent()
    for node in nodes:
        target.topology.nodes.add(ID=node)


def _fill_devices(target: Any, devices: tuple[DeviceAllocation, ...]) -> None:
    for device in devices:
        entry = target.add(resource_name=device.resource_name, device_ids=device.device_ids)
        _fill_numa(entry, device.numa_nodes)


def _fill_memory(target: Any, blocks: tuple[MemoryBlock, ...]) -> None:
    for block in blocks:
        entry = target.add(memory_type=block.memory_type, size=block.size_bytes)
        _fill_numa(entry, block.numa_nodes)


def _fill_pod(target: Any, pod: PodResources) -> None:
    target.name = pod.name
    target.namespace = pod.namespace
    target.cpu_ids.extend(pod.cpu_ids)
    _fill_memory(target.memory, pod.memory)
    for container in pod.containers:
        entry = target.containers.add(name=container.name)
        entry.cpu_ids.extend(container.cpu_ids)
        _fill_devices(entry.devices, container.devices)
        _fill_memory(entry.memory, container.memory)
        for claim in container.dynamic_resources:
            claim_entry = entry.dynamic_resources.add(
                claim_name=claim.claim_name, claim_namespace=claim.claim_namespace
            )
            for resource in claim.claim_resources:
                r = claim_entry.claim_resources.add(
                    driver_name=resource.driver_name,
                    pool_name=resource.pool_name,
                    device_name=resource.device_name,
                )
                for name in resource.cdi_devices:
                    r.cdi_devices.add(name=name)
                if resource.share_id is not None:
                    r.share_id = resource.share_id


def list_response(pods: tuple[PodResources, ...]) -> Any:
    """A ``ListPodResourcesResponse`` holding ``pods``."""
    response = message_class("ListPodResourcesResponse")()
    for pod in pods:
        _fill_pod(response.pod_resources.add(), pod)
    return response


def get_response(pod: PodResources) -> Any:
    """A ``GetPodResourcesResponse`` holding ``pod``."""
    response = message_class("GetPodResourcesResponse")()
    _fill_pod(response.pod_resources, pod)
    return response


def allocatable_response(allocatable: AllocatableResources) -> Any:
    """An ``AllocatableResourcesResponse``."""
    response = message_class("AllocatableResourcesResponse")()
    response.cpu_ids.extend(allocatable.cpu_ids)
    _fill_devices(response.devices, allocatable.devices)
    _fill_memory(response.memory, allocatable.memory)
    return response
