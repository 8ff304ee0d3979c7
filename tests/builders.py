"""One-line builders for test tables: cpus("0-3"), snapshot(...), pod(...)."""

from __future__ import annotations

from fractions import Fraction

from cpumanager.core.cpuset import CPUSet
from cpumanager.core.ids import ContainerName, PodUID
from cpumanager.core.state import StateSnapshot
from cpumanager.core.workload import Container, ContainerKind, Pod


def cpus(text: str) -> CPUSet:
    return CPUSet.parse(text)


def snapshot(default: str = "", policy: str = "static", **pods: dict[str, str]) -> StateSnapshot:
    """snapshot("4-7", p1={"c": "0-3"}) — pod UIDs as keyword names."""
    return StateSnapshot(
        policy,
        cpus(default),
        {
            PodUID(uid): {ContainerName(name): cpus(s) for name, s in containers.items()}
            for uid, containers in pods.items()
        },
    )


def container(
    name: str,
    cpu: str | None = None,
    *,
    memory: str | None = "1Gi",
    kind: ContainerKind = ContainerKind.APP,
    limit: str | None = None,
    **extra: int,
) -> Container:
    """A container whose requests equal its limits unless ``limit`` says otherwise."""
    from cpumanager.core.quantity import parse_quantity

    requests: dict[str, Fraction] = {}
    limits: dict[str, Fraction] = {}
    if cpu is not None:
        requests["cpu"] = parse_quantity(cpu)
        limits["cpu"] = parse_quantity(limit if limit is not None else cpu)
    if memory is not None:
        requests["memory"] = limits["memory"] = parse_quantity(memory)
    for resource, amount in extra.items():
        requests[resource.replace("_", "/")] = limits[resource.replace("_", "/")] = Fraction(amount)
    return Container(ContainerName(name), requests, limits, kind)


def pod(uid: str, *containers: Container, init: tuple[Container, ...] = ()) -> Pod:
    return Pod(PodUID(uid), name=uid, init_containers=init, containers=containers)


def guaranteed(uid: str, **cpus_by_container: str) -> Pod:
    """guaranteed("p1", app="2") — one Guaranteed pod, containers in keyword order."""
    return pod(uid, *(container(name, cpu) for name, cpu in cpus_by_container.items()))
