"""The runtimes' saved originals, persisted beside the checkpoint (one JSON file).

A runtime saves a workload's affinity or ``cpuset.cpus`` before its first change, to put it
back when the workload is released or the agent stops. Kept in memory only, they were lost
with the process (``--once``, SIGKILL, a crash): the next agent then took the exclusive pin
for the original and later wrote those CPUs back while they belonged to another workload.
So every change of the saved set is written here first (atomically, 0600), and a new
runtime starts from what the file holds. The file is the runtime's own; a file that cannot
be read is set aside as ``<name>.corrupt`` and the runtime starts empty (as before).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from cpumanager.adapters import filestore
from cpumanager.errors import CpuManagerError, RuntimeApplyError

__all__ = ["ORIGINALS_NAME", "OriginalsFile"]

ORIGINALS_NAME = "cpumanager_originals.json"
_MAX_BYTES = 16 * 1024 * 1024
_LOG = logging.getLogger("cpumanager.agent")


class OriginalsFile:
    """``{"version": 1, "kind": <runtime>, "entries": {<container id>: <value>}}``."""

    def __init__(self, path: Path, *, kind: str) -> None:
        self.path = path
        self.kind = kind

    def load(self) -> dict[str, object]:
        """The saved entries; empty when there is no usable file."""
        try:
            data = filestore.read_bytes(self.path, max_bytes=_MAX_BYTES)
        except CpuManagerError as err:
            _LOG.warning("ignoring saved originals: %s", err.message)
            return {}
        if data is None:
            return {}
        try:
            entries = _entries(json.loads(data), self.kind)
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
            try:
                moved = filestore.set_aside(self.path)
            except CpuManagerError as err:
                _LOG.warning("saved originals are unreadable: %s", err.message)
            else:
                _LOG.warning("saved originals were unreadable; set aside as %s", moved)
            return {}
        return {str(key): value for key, value in entries.items()}

    def save(self, entries: dict[str, object]) -> None:
        """Persist ``entries`` atomically; RuntimeApplyError (nothing applied) on failure."""
        text = json.dumps({"version": 1, "kind": self.kind, "entries": entries}, sort_keys=True)
        try:
            filestore.write_atomic(self.path, text.encode("utf-8") + b"\n")
        except CpuManagerError as err:
            msg = f"cannot record the original CPUs before changing them: {err.message}"
            raise RuntimeApplyError(msg) from err


def _entries(tree: object, kind: str) -> dict[str, object]:
    if not isinstance(tree, dict):
        raise TypeError(tree)
    entries = tree["entries"] if tree.get("kind") == kind else {}
    if not isinstance(entries, dict):
        raise TypeError(entries)
    return entries
