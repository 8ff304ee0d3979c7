"""cpumanager: the kubelet's CPU Manager and Topology Manager, in Python.

Keep this module light: ``cpumanager --version`` and every short command import it first,
so it imports nothing itself. The names below load on first use (PEP 562);
``tests/test_coldstart.py`` checks what ``import cpumanager`` and ``cpumanager.cli.main``
may load (no click, rich, yaml, grpc, prometheus, psutil, nor the allocation code).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from cpumanager._version import __version__

__all__ = [
    "AllocationError",
    "CPUSet",
    "CPUTopology",
    "CheckpointError",
    "CheckpointStore",
    "ConfigError",
    "CpuManagerError",
    "HostError",
    "InMemoryStore",
    "InputError",
    "KubeletConfig",
    "NUMAMask",
    "Node",
    "NodeState",
    "Pod",
    "StateSnapshot",
    "StaticPolicyOptions",
    "TopologyAffinityError",
    "TopologyHint",
    "__version__",
    "discover",
    "get_preset",
    "load_effective_config",
    "load_pods",
    "load_scenario",
    "load_snapshot",
    "merge",
    "read_kubelet_config",
    "read_state_file",
    "simulate",
    "take_by_topology",
    "write_state_file",
]

# public name -> module that defines it (loaded on first use)
_LAZY = {
    "CPUSet": "cpumanager.core.cpuset",
    "NUMAMask": "cpumanager.core.bitmask",
    "CPUTopology": "cpumanager.core.topology",
    "TopologyHint": "cpumanager.core.hints.hint",
    "StaticPolicyOptions": "cpumanager.core.allocation.options",
    "StateSnapshot": "cpumanager.core.state",
    "Pod": "cpumanager.core.workload",
    "KubeletConfig": "cpumanager.formats.kubelet_config",
    "get_preset": "cpumanager.presets",
    "discover": "cpumanager.adapters.sysfs",
    "take_by_topology": "cpumanager.core.allocation.take",
    "merge": "cpumanager.core.merge.policies",
    "load_effective_config": "cpumanager.adapters.kubelet_config_file",
    "read_kubelet_config": "cpumanager.adapters.kubelet_config_file",
    "load_pods": "cpumanager.adapters.manifests",
    "load_snapshot": "cpumanager.adapters.node_collect",
    "Node": "cpumanager.manager.node",
    "NodeState": "cpumanager.manager.node",
    "InMemoryStore": "cpumanager.adapters.memory_store",
    "CheckpointStore": "cpumanager.adapters.checkpoint_store",
    "read_state_file": "cpumanager.adapters.checkpoint_files",
    "write_state_file": "cpumanager.adapters.checkpoint_files",
    "simulate": "cpumanager.sim.simulate",
    "load_scenario": "cpumanager.sim.scenario",
    "CpuManagerError": "cpumanager.errors",
    "InputError": "cpumanager.errors",
    "ConfigError": "cpumanager.errors",
    "CheckpointError": "cpumanager.errors",
    "AllocationError": "cpumanager.errors",
    "TopologyAffinityError": "cpumanager.errors",
    "HostError": "cpumanager.errors",
}

if TYPE_CHECKING:
    from cpumanager.adapters.checkpoint_files import read_state_file, write_state_file
    from cpumanager.adapters.checkpoint_store import CheckpointStore
    from cpumanager.adapters.kubelet_config_file import load_effective_config, read_kubelet_config
    from cpumanager.adapters.manifests import load_pods
    from cpumanager.adapters.memory_store import InMemoryStore
    from cpumanager.adapters.node_collect import load_snapshot
    from cpumanager.adapters.sysfs import discover
    from cpumanager.core.allocation.options import StaticPolicyOptions
    from cpumanager.core.allocation.take import take_by_topology
    from cpumanager.core.bitmask import NUMAMask
    from cpumanager.core.cpuset import CPUSet
    from cpumanager.core.hints.hint import TopologyHint
    from cpumanager.core.merge.policies import merge
    from cpumanager.core.state import StateSnapshot
    from cpumanager.core.topology import CPUTopology
    from cpumanager.core.workload import Pod
    from cpumanager.errors import (
        AllocationError,
        CheckpointError,
        ConfigError,
        CpuManagerError,
        HostError,
        InputError,
        TopologyAffinityError,
    )
    from cpumanager.formats.kubelet_config import KubeletConfig
    from cpumanager.manager.node import Node, NodeState
    from cpumanager.presets import get_preset
    from cpumanager.sim.scenario import load_scenario
    from cpumanager.sim.simulate import simulate


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        msg = f"module 'cpumanager' has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
