"""InMemoryStore: the StateStore for tests and the simulator, keeping the exact file bytes.

It runs the same codec as :class:`CheckpointStore`, so tests see byte for byte what a kubelet
would find on disk after each save (``data``, and every write in ``history``).
Set ``fail_saves`` to make saves raise StoreError, to exercise "persist first, publish second".
"""

from __future__ import annotations

from cpumanager.checkpoint.cpu import codec
from cpumanager.checkpoint.cpu.codec import DecodeOrder
from cpumanager.checkpoint.cpu.restore import restore_state
from cpumanager.core.containermap import ContainerMap
from cpumanager.core.state import StateSnapshot
from cpumanager.errors import StoreError

__all__ = ["InMemoryStore"]


class InMemoryStore:
    """A checkpoint held in memory as the bytes a kubelet would have written.

    Saves are encoded when first read (``data``, ``history``), not when made: a store whose
    bytes nobody reads (trial admissions) never pays for the encoder. The bytes are the
    same either way, since a snapshot is an immutable value.
    """

    def __init__(
        self,
        data: bytes | None = None,
        *,
        order: DecodeOrder = "v1-first",
        source: str = "memory:cpu_manager_state",
    ) -> None:
        self._writes: list[bytes | StateSnapshot] = []
        self._data: bytes | StateSnapshot | None = data
        self.fail_saves = False
        self._order: DecodeOrder = order
        self._source = source

    @property
    def data(self) -> bytes | None:
        """The checkpoint's bytes now (None: no file)."""
        if isinstance(self._data, StateSnapshot):
            self._encode_writes()
        assert not isinstance(self._data, StateSnapshot)
        return self._data

    @data.setter
    def data(self, value: bytes | None) -> None:
        self._data = value

    @property
    def history(self) -> list[bytes]:
        """Every write, oldest first."""
        self._encode_writes()
        return [write for write in self._writes if isinstance(write, bytes)]

    def _encode_writes(self) -> None:
        """Encode the pending writes (the current data is always the last of them)."""
        for index, write in enumerate(self._writes):
            if isinstance(write, StateSnapshot):
                encoded = codec.encode_v2(write)
                self._writes[index] = encoded
                if self._data is write:
                    self._data = encoded

    def load(self, policy_name: str, container_map: ContainerMap) -> StateSnapshot | None:
        return restore_state(
            self.data,
            source=self._source,
            configured_policy=policy_name,
            container_map=container_map,
            order=self._order,
        )

    def save(self, snapshot: StateSnapshot) -> None:
        if self.fail_saves:
            message = f"cannot write {self._source!r}: injected failure (fail_saves is set)"
            raise StoreError(message)
        self._data = snapshot
        self._writes.append(snapshot)
