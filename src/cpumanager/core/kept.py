"""Answers kept across calls, and the one switch that turns keeping off.

Three pure functions keep their answers, bounded, because the extender and the fleet ask
them the same questions on thousands of nodes of one shape: ``take_by_topology`` (with
the machine's index), CPU hint generation (with the machine's mask table) and the short
merges (one table). Each checks :data:`KEEP` first. Benches that compare the algorithms
with the kubelet's turn keeping off (:func:`answers_kept`), so that a repeated question
measures the work and not a lookup; tests use it to compare kept and fresh answers.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import TypeVar

__all__ = ["KEEP", "answers_kept", "kept_answer"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class _Keep:
    __slots__ = ("on",)

    def __init__(self) -> None:
        self.on = True


KEEP = _Keep()


@contextmanager
def answers_kept(on: bool) -> Iterator[None]:
    """Keeping on or off inside the block (process-wide; not for concurrent threads)."""
    before = KEEP.on
    KEEP.on = on
    try:
        yield
    finally:
        KEEP.on = before


def kept_answer(table: dict[K, V], key: K, compute: Callable[[], V], limit: int) -> V:
    """``table[key]``, computed once while keeping is on (a full table starts over); with
    keeping off, computed every time and not stored."""
    if not KEEP.on:
        return compute()
    try:
        return table[key]
    except KeyError:
        pass
    found = compute()
    if len(table) >= limit:
        table.clear()
    table[key] = found
    return found
