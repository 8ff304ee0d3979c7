"""A scenario's device and memory tables, parsed into the node's typed resources.

``devices: {resource: {node: count}}`` names counted devices ``<kind>-<node>-<i>`` (the
part of the resource name after its last ``/``); ``devices: {resource: [{id, numa: [..]}]}``
lists them. ``memory: {node: {memory: 64Gi, hugepages-1Gi: 8Gi}}`` gives the memory
manager's allocatable amounts per NUMA node. Every problem is a one-line ScenarioError
naming the field (quantities keep their own quantity errors).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cpumanager.core.devices import Device
from cpumanager.core.quantity import parse_quantity
from cpumanager.errors import ScenarioError
from cpumanager.manager.node import NodeResources

__all__ = ["parse_devices", "parse_memory", "parse_resources"]

_MAX_DEVICES_PER_NODE = 65_536


def _whole(value: object, where: str, what: str) -> int:
    """A non-negative whole number written as an int or as digits (YAML keys are either)."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        msg = f"{where}: {value!r} is not {what}; write a whole number such as 0"
        raise ScenarioError(msg)
    text = str(value).strip()
    if not text.isdigit():
        msg = f"{where}: {value!r} is not {what}; write a whole number such as 0"
        raise ScenarioError(msg)
    return int(text)


def _counted(resource: str, spec: Mapping[Any, Any], where: str) -> list[Device]:
    devices: list[Device] = []
    for node, count in spec.items():
        node_id = _whole(node, where, "a NUMA node id")
        many = _whole(count, f"{where}.{node}", "a device count")
        if many > _MAX_DEVICES_PER_NODE:
            msg = f"{where}.{node}: {many} devices on one node (at most "
            msg += f"{_MAX_DEVICES_PER_NODE})"
            raise ScenarioError(msg)
        kind = resource.rsplit("/", 1)[-1]
        devices.extend(Device(f"{kind}-{node_id}-{i}", (node_id,)) for i in range(many))
    return devices


def _listed(spec: list[Any], where: str) -> list[Device]:
    devices: list[Device] = []
    for index, item in enumerate(spec):
        if not isinstance(item, Mapping):
            msg = f"{where}[{index}]: expected {{id, numa: [nodes]}}"
            raise ScenarioError(msg)
        nodes = item.get("numa", [])
        listed = nodes if isinstance(nodes, list) else [] if nodes is None else [nodes]
        numa = tuple(_whole(n, f"{where}[{index}].numa", "a NUMA node id") for n in listed)
        devices.append(Device(str(item.get("id", f"dev{index}")), numa))
    return devices


def parse_devices(raw: Mapping[str, Any]) -> dict[str, tuple[Device, ...]]:
    """``{resource: {node: count}}`` or ``{resource: [{id, numa: [..]}]}``."""
    found: dict[str, tuple[Device, ...]] = {}
    for resource, spec in raw.items():
        where = f"devices.{resource}"
        if isinstance(spec, Mapping):
            devices = _counted(str(resource), spec, where)
        elif isinstance(spec, list):
            devices = _listed(spec, where)
        else:
            msg = f"{where}: give {{node: count}} or a list of {{id, numa}}"
            raise ScenarioError(msg)
        found[str(resource)] = tuple(devices)
    return found


def parse_memory(
    raw: Mapping[str, Any],
) -> tuple[dict[int, int] | None, dict[int, dict[str, int]]]:
    """Bytes of memory per NUMA node (None: the machine's own) and hugepages per node."""
    if not raw:
        return None, {}
    memory: dict[int, int] = {}
    hugepages: dict[int, dict[str, int]] = {}
    for node, spec in raw.items():
        if not isinstance(spec, Mapping):
            msg = f"memory.{node}: expected {{memory: 64Gi, hugepages-1Gi: 8Gi}}"
            raise ScenarioError(msg)
        node_id = _whole(node, "memory", "a NUMA node id")
        for resource, amount in spec.items():
            if resource != "memory" and not str(resource).startswith("hugepages-"):
                msg = f"memory.{node}.{resource}: only memory and hugepages-<size> go here"
                raise ScenarioError(msg)
            size = int(parse_quantity(amount, field=f"memory.{node}.{resource}"))
            if resource == "memory":
                memory[node_id] = size
            else:
                hugepages.setdefault(node_id, {})[str(resource)] = size
    return memory, hugepages


def parse_resources(devices: Mapping[str, Any], memory: Mapping[str, Any]) -> NodeResources:
    """Both tables (memory first, as the simulator always read them)."""
    amounts, hugepages = parse_memory(memory)
    return NodeResources(devices=parse_devices(devices), hugepages=hugepages, memory=amounts)
