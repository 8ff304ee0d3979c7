"""The NUMA node counts at which hints change form, and every provider following them."""

from __future__ import annotations

from fractions import Fraction

import pytest

from cpumanager.core.devices import Device, DeviceState, device_hints
from cpumanager.core.hints.limits import ENUMERATE_LIMIT, IMPLICIT_AFTER, implicit_for
from cpumanager.core.hints.source import CapacityHintSource, MultiCapacityHintSource
from cpumanager.core.ids import ContainerName, PodUID
from cpumanager.core.memory import MemoryState, memory_hints
from cpumanager.core.workload import Container, Pod

GI = 2**30


def test_the_limits_are_the_kubelets_eight_and_twenty() -> None:
    assert (IMPLICIT_AFTER, ENUMERATE_LIMIT) == (8, 20)
    assert not implicit_for(IMPLICIT_AFTER)
    assert implicit_for(IMPLICIT_AFTER + 1)


def _pod(**limits: int) -> tuple[Pod, Container]:
    amounts = {"cpu": Fraction(1), **{name: Fraction(n) for name, n in limits.items()}}
    box = Container(ContainerName("app"), requests=dict(amounts), limits=amounts)
    return Pod(uid=PodUID("p"), name="p", containers=(box,)), box


@pytest.mark.parametrize(("nodes", "rule"), [(IMPLICIT_AFTER, False), (IMPLICIT_AFTER + 1, True)])
def test_memory_and_devices_switch_form_by_size(nodes: int, rule: bool) -> None:
    the_pod, box = _pod(memory=GI, gpu=1)
    memory = memory_hints(MemoryState.create(dict.fromkeys(range(nodes), 4 * GI)), the_pod, box)
    devices = DeviceState.create(
        range(nodes), {"gpu": [Device(f"g{n}", (n,)) for n in range(nodes)]}
    )
    gpus = device_hints(devices, the_pod, box)
    assert isinstance(memory["memory"], MultiCapacityHintSource) is rule
    assert isinstance(gpus["gpu"], CapacityHintSource) is rule
