"""InMemoryStore: the StateStore for tests and the simulator, keeping the exact file bytes.

It runs the same codec as :class:`CheckpointStore`, so tests see byte for byte what a kubelet
would find on disk after each save (``data``, and every write in ``history``).
Set ``fail_saves`` to make saves raise StoreError, to exercise "persist first, publish second".
"""

from __future__ import annotations

from cpumanager.checkpoint import codec
from cpumanager.checkpoint.codec import DecodeOrder
from cpumanager.checkpoint.loader import restore_state
from cpumanager.core.containermap import ContainerMap
from cpumanager.core.state import StateSnapshot
from cpumanager.errors import StoreError

__all__ = ["InMemoryStore"]


class InMemoryStore:
    """A checkpoint held in memory as the bytes a kubelet would have written."""

    def __init__(
        self,
        data: bytes | None = None,
        *,
        order: DecodeOrder = "v1-first",
        source: str = "memory:cpu_manager_state",
    ) -> None:
        self.data = data
        self.history: list[bytes] = []
        self.fail_saves = False
        self._order: DecodeOrder = order
        self._source = source

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
        self.data = codec.encode_v2(snapshot)
        self.history.append(self.data)
