"""CheckpointStore: the StateStore over a kubelet-compatible ``cpu_manager_state`` file.

``load`` reads the file as the kubelet does (V1 first, then V2; a V1 file is migrated
through the container map of the containers running at start) and returns None when there is
no file. ``save`` writes the V2 bytes the kubelet writes, atomically and durably.

Safer than the kubelet in three ways:

* the file that was current before each save is kept as ``<name>.last-good`` (a hard link,
  so it costs nothing); it always held a state that loaded or that we wrote;
* a file that failed to load (or that does not decode, when ``save`` comes first) is never
  overwritten or deleted: ``save`` refuses until :meth:`CheckpointStore.set_aside` renames it
  to ``<name>.corrupt[.N]``;
* a failed save raises StoreError instead of being logged and forgotten.
"""

from __future__ import annotations

from pathlib import Path

from cpumanager.adapters import filestore
from cpumanager.adapters.filestore import FaultHook
from cpumanager.checkpoint.cpu import codec
from cpumanager.checkpoint.cpu.codec import DecodeOrder
from cpumanager.checkpoint.cpu.restore import restore_state
from cpumanager.core.containermap import ContainerMap
from cpumanager.core.state import StateSnapshot
from cpumanager.errors import CheckpointError, StoreError

__all__ = ["DEFAULT_NAME", "LAST_GOOD_SUFFIX", "CheckpointStore"]

DEFAULT_NAME = "cpu_manager_state"
LAST_GOOD_SUFFIX = ".last-good"


class CheckpointStore:
    """A kubelet-compatible checkpoint file in ``directory``."""

    def __init__(
        self,
        directory: Path,
        name: str = DEFAULT_NAME,
        *,
        keep_last_good: bool = True,
        order: DecodeOrder = "v1-first",
        clean_temps: bool = False,
        fault: FaultHook | None = None,
    ) -> None:
        if not name or "/" in name or name in (".", ".."):
            message = f"checkpoint name {name!r} must be a plain file name"
            raise StoreError(message)
        self.directory = directory
        self.path = directory / name
        self.last_good_path = directory / f"{name}{LAST_GOOD_SUFFIX}"
        self._keep_last_good = keep_last_good
        self._order: DecodeOrder = order
        self._fault = fault
        self._clean_temps = clean_temps  # only for owners of the state-dir lock
        self.removed_temps: list[Path] = []
        self.failure: StoreError | None = None  # the last save that failed, for callers
        self._trusted = False  # the file on disk loaded fine, was written by us, or is absent
        self._refused: str | None = None  # why the file on disk must not be replaced

    def load(self, policy_name: str, container_map: ContainerMap) -> StateSnapshot | None:
        """The stored state, None when there is no file; CheckpointError when unusable.

        With ``clean_temps`` the first load removes temp files of writers killed mid-write.
        """
        if self._clean_temps:
            self._clean_temps = False
            self.removed_temps = filestore.remove_stale_temps(self.path)
        data = filestore.read_bytes(self.path)
        if data is None:
            self._trusted, self._refused = True, None
            return None
        try:
            snapshot = restore_state(
                data,
                source=str(self.path),
                configured_policy=policy_name,
                container_map=container_map,
                order=self._order,
            )
        except CheckpointError as err:
            self._trusted, self._refused = False, err.message
            raise
        self._trusted, self._refused = True, None
        return snapshot

    def _check_replaceable(self) -> None:
        if self._refused is None and not self._trusted:
            data = filestore.read_bytes(self.path)
            if data is not None:
                try:
                    codec.decode(data, source=str(self.path), order=self._order)
                except CheckpointError as err:
                    self._refused = err.message
        if self._refused is not None:
            message = (
                f"refusing to overwrite {str(self.path)!r}: it failed to load and is kept "
                "for inspection; set it aside first ('cpumanager state verify' shows why)"
            )
            raise StoreError(message)

    def save(self, snapshot: StateSnapshot) -> None:
        """Write the kubelet's V2 bytes atomically, keeping the previous file as last-good."""
        try:
            self._check_replaceable()
            filestore.ensure_dir(self.directory)
            data = codec.encode_v2(snapshot)
            if self._keep_last_good:
                filestore.preserve_copy(self.path, self.last_good_path, fault=self._fault)
            filestore.write_atomic(self.path, data, fault=self._fault)
        except StoreError as err:
            # The managers turn a failed save into an admission rejection (as the kubelet
            # does); callers that must tell a full disk from a full node look here.
            self.failure = err
            raise
        self.failure = None
        self._trusted = True

    def set_aside(self) -> Path | None:
        """Rename the current file to ``<name>.corrupt[.N]`` so saves may proceed."""
        if filestore.read_bytes(self.path) is None:
            self._refused = None
            return None
        moved = filestore.set_aside(self.path)
        self._trusted, self._refused = True, None
        return moved

    def read_last_good(self) -> bytes | None:
        """The bytes of the last-known-good copy, or None when there is none."""
        return filestore.read_bytes(self.last_good_path)
