"""Topology discovery from sysfs (work in progress: the full reader lands next)."""

from __future__ import annotations

from pathlib import Path

from cpumanager.core.topology import CPUTopology
from cpumanager.errors import MachineError

__all__ = ["SysfsReader"]


class SysfsReader:
    """Reads ``sys/devices/system/{cpu,node}`` under ``root``."""

    def __init__(self, root: Path = Path("/")) -> None:
        self._root = root

    def read(self) -> CPUTopology:
        msg = f"sysfs discovery under {str(self._root)!r} is not available yet"
        raise MachineError(msg)
