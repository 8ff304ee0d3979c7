"""Every hint provider and every CPU policy implements its whole declared protocol.

The topology manager and the CPU manager call only what ``HintProvider`` (ports.py) and
``Policy`` (core/policy/base.py) declare; these tests check that each implementation has
every member, with the protocol's parameter names, so no call can fall through to a
missing hook.
"""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from cpumanager.adapters.memory_store import InMemoryStore
from cpumanager.core.devices import Device, DeviceState
from cpumanager.core.hints.hint import TopologyHint
from cpumanager.core.ids import ContainerName, PodUID
from cpumanager.core.memory import MemoryState
from cpumanager.core.policy.base import Policy
from cpumanager.core.policy.none import NonePolicy
from cpumanager.core.policy.static import StaticPolicy
from cpumanager.manager.cpu_manager import CPUManager
from cpumanager.manager.providers import CPUProvider, DeviceProvider, MemoryProvider
from cpumanager.ports import HintProvider
from cpumanager.presets import synthetic

MACHINE = synthetic(sockets=2, cores_per_numa=2, threads=2)


def members(protocol: type) -> list[str]:
    """The public methods and properties a protocol declares."""
    return sorted(
        name
        for name, value in vars(protocol).items()
        if not name.startswith("_") and (callable(value) or isinstance(value, property))
    )


def parameters(function: Any) -> list[str]:
    return [name for name in inspect.signature(function).parameters if name != "self"]


def check(instance: object, protocol: type) -> None:
    assert isinstance(instance, protocol)
    for name in members(protocol):
        declared = inspect.getattr_static(protocol, name)
        found = inspect.getattr_static(type(instance), name, None)
        assert found is not None, f"{type(instance).__name__} lacks {name}"
        if isinstance(declared, property):
            getattr(instance, name)  # readable
            continue
        assert callable(found), f"{type(instance).__name__}.{name} is not a method"
        assert parameters(found) == parameters(declared), name


def test_the_protocols_declare_the_hooks_the_managers_call() -> None:
    assert members(HintProvider) == [
        "allocate",
        "hint_details",
        "pod_hint_details",
        "pod_topology_hints",
        "provider_name",
        "topology_hints",
    ]
    assert {
        "container_hint_sources",
        "guaranteed_cpus",
        "pod_hint_sources",
        "strict_reservation",
    } <= set(members(Policy))


def affinity(pod_uid: PodUID, container_name: ContainerName) -> TopologyHint:
    return TopologyHint(None, False)


def providers() -> list[object]:
    cpu = CPUManager(policy=NonePolicy(MACHINE), store=InMemoryStore(), all_cpus=MACHINE.all_cpus)
    memory = MemoryState.from_topology(MACHINE)
    devices = DeviceState.create([0, 1], {"gpu": (Device("g0", (1,)),)})
    return [
        CPUProvider(cpu),
        MemoryProvider(memory, affinity),
        DeviceProvider(devices, affinity),
    ]


@pytest.mark.parametrize("index", [0, 1, 2], ids=["cpu", "memory", "devices"])
def test_every_provider_implements_hint_provider(index: int) -> None:
    check(providers()[index], HintProvider)


@pytest.mark.parametrize(
    "policy",
    [NonePolicy(MACHINE), StaticPolicy(MACHINE, num_reserved_cpus=1)],
    ids=["none", "static"],
)
def test_every_policy_implements_policy(policy: object) -> None:
    check(policy, Policy)


def test_a_provider_without_a_hook_is_not_a_hint_provider() -> None:
    class Partial:
        provider_name = "partial"

        def topology_hints(self, pod: object, container: object) -> None:
            return None

    assert not isinstance(Partial(), HintProvider)
