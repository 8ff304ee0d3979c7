"""The front door: ``cpumanager`` exports exactly these names; everything else is internal."""

from __future__ import annotations

from pathlib import Path

import cpumanager

PUBLIC = [
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


def test_all_is_pinned() -> None:
    assert cpumanager.__all__ == PUBLIC


def test_every_public_name_loads_and_is_what_its_module_defines() -> None:
    for name in PUBLIC:
        value = getattr(cpumanager, name)
        if name != "__version__":
            assert value.__name__ == name, name  # functions and classes, no aliases


def test_errors_share_the_one_base() -> None:
    for name in PUBLIC:
        if name.endswith("Error"):
            assert issubclass(getattr(cpumanager, name), cpumanager.CpuManagerError)


def test_state_file_round_trip(tmp_path: Path) -> None:
    machine = cpumanager.get_preset("dual-socket-ht")
    snapshot = cpumanager.StateSnapshot("static", machine.all_cpus)
    path = tmp_path / "cpu_manager_state"
    cpumanager.write_state_file(path, snapshot)
    assert cpumanager.read_state_file(path) == snapshot
    assert path.read_bytes().startswith(b'{"policyName":"static","defaultCpuSet":"0-11"')
