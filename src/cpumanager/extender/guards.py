"""The extender's HTTP edge: what one caller may cost the server before any work is done.

:class:`Bodies` bounds request bodies in size, in time and all together; :class:`Offload`
runs work off the event loop in lanes, each call with a deadline; header_timeout_protocol
closes connections that do not finish their request head in time. The caps are in
``core/limits.py`` (docs/limits.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import anyio
from starlette.requests import Request

from cpumanager.errors import InputError

__all__ = [
    "BodyTimeout",
    "BodyTooLarge",
    "Bodies",
    "Busy",
    "Offload",
    "header_timeout_protocol",
]

T = TypeVar("T")


class Busy(Exception):  # noqa: N818 - answered 503
    """The server cannot take this request now (answered 503 with the reason)."""


class BodyTooLarge(InputError):  # noqa: N818 - answered 413
    """A request body over its route's limit (answered 413)."""


class BodyTimeout(Exception):  # noqa: N818 - answered 408
    """A request body that did not arrive in time (answered 408)."""


class Bodies:
    """Request bodies, bounded in size, in time and all together.

    One body is refused past its ``limit`` (413) and must arrive whole within ``timeout``
    seconds of the handler asking for it (408: a sender at one byte a second holds a
    connection for ``timeout`` seconds at most, never its worker). Every body held by a
    request, from its first byte to the end of its answer, counts against ``budget``; a
    chunk that would go over it ends the request with a 503 at once, so partial or queued
    bodies cannot pile up memory.
    """

    def __init__(self, budget: int, timeout: float) -> None:
        self.budget = budget
        self.timeout = timeout
        self.held = 0

    async def read(self, request: Request, limit: int) -> bytes:
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            msg = f"body of {declared} bytes is over the {limit}-byte limit"
            raise BodyTooLarge(msg)
        chunks: list[bytes] = []
        size = 0
        with anyio.move_on_after(self.timeout) as scope:
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    msg = f"body is over the {limit}-byte limit"
                    raise BodyTooLarge(msg)
                self._hold(request, len(chunk))
                chunks.append(chunk)
        if scope.cancelled_caught:
            msg = f"the body did not arrive within {self.timeout:g} s"
            raise BodyTimeout(msg)
        return b"".join(chunks)

    def _hold(self, request: Request, size: int) -> None:
        if self.held + size > self.budget:
            msg = "too many request bodies are being received; try again"
            raise Busy(msg)
        self.held += size
        request.state.held = getattr(request.state, "held", 0) + size

    def release(self, request: Request) -> None:
        """End ``request``'s hold on the budget (its answer is out)."""
        self.held -= getattr(request.state, "held", 0)
        request.state.held = 0


class Offload:
    """Work off the event loop: each lane is a thread limiter; a call waits for its lane,
    runs in a thread, and raises :class:`Busy` when ``deadline`` seconds pass first (the
    thread, which cannot be stopped, finishes unseen)."""

    def __init__(self, **lanes: int) -> None:
        self.lanes = {name: anyio.CapacityLimiter(size) for name, size in lanes.items()}

    async def run(self, lane: str, deadline: float, work: Callable[[], T]) -> T:
        with anyio.move_on_after(deadline) as scope:
            return await anyio.to_thread.run_sync(
                work, limiter=self.lanes[lane], abandon_on_cancel=True
            )
        msg = f"the {lane} did not finish within {deadline:g} s; the server is busy"
        raise Busy(msg) if scope.cancelled_caught else AssertionError(msg)


def header_timeout_protocol(seconds: float) -> type[Any]:
    """uvicorn's h11 protocol with a deadline on request headers: a connection that has not
    sent a whole request head ``seconds`` after it opened (or after its last answer) is
    closed. uvicorn itself only times out idle keep-alive connections."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class HeaderTimeoutProtocol(H11Protocol):
        _head_timer: Any = None

        def _arm(self) -> None:
            self._disarm()
            self._head_timer = self.loop.call_later(seconds, self._head_late, self.cycle)

        def _disarm(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_late(self, cycle: Any) -> None:
            waiting = cycle is None or cycle.response_complete  # no request under way
            if self.cycle is cycle and waiting and not self.transport.is_closing():
                self.transport.close()

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def handle_events(self) -> None:
            before = self.cycle
            super().handle_events()
            if self.cycle is not before:
                self._disarm()  # a whole request head arrived

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()

    return HeaderTimeoutProtocol
