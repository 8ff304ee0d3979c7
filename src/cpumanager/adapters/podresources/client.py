"""A client of the kubelet's PodResources API: gRPC ``v1.PodResourcesLister`` on a Unix socket.

Like the kubelet's own client (``podresources.GetV1Client``): an insecure channel to
``unix:<socket>``, a 16 MiB receive limit and a per-call timeout (10 s by default). Every
failure is a one-line :class:`PodResourcesError` whose ``status`` names the case:

* ``missing``: no socket (the kubelet is not running, or another ``--root-dir``); a path that
  is a symbolic link or not a socket is refused without connecting;
* ``unimplemented``: the kubelet predates the call (``GetAllocatableResources`` came in 1.21,
  ``Get`` in 1.27);
* ``disabled``: the kubelet knows the call but its feature gate is off (it answers code
  Unknown with ``PodResources API Get method disabled``);
* ``rate-limited``: the kubelet's limiter (100 calls/s, burst 10) answered ResourceExhausted
  ``rejected by rate limit``;
* ``error``: permission denied, no answer in time, an answer over the receive limit, or
  anything else.

:func:`collect_answers` makes the three calls and records each outcome, so one failing call
never loses the others' answers.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from types import TracebackType
from typing import Any

import grpc

from cpumanager.adapters.podresources import wire
from cpumanager.adapters.podresources.messages import METHODS, SERVICE, message_class
from cpumanager.errors import PodResourcesError
from cpumanager.nodeview.podresources import (
    AllocatableResources,
    CallResult,
    PodResources,
    PodResourcesAnswers,
)

__all__ = [
    "DEFAULT_TIMEOUT_SECONDS",
    "MAX_RECEIVE_BYTES",
    "SOCKET_RELATIVE_PATH",
    "PodResourcesClient",
    "check_socket",
    "collect_answers",
]

MAX_RECEIVE_BYTES = 16 * 1024 * 1024  # the kubelet's client default (defaultPodResourcesMaxSize)
DEFAULT_TIMEOUT_SECONDS = 10.0
SOCKET_RELATIVE_PATH = Path("pod-resources/kubelet.sock")  # under the kubelet's --root-dir
_DETAIL_LIMIT = 200


def _one_line(text: str) -> str:
    """Untrusted server text made safe for a one-line message: no control characters, bounded."""
    cleaned = "".join(ch if ch.isprintable() else " " for ch in text).strip()
    return cleaned if len(cleaned) <= _DETAIL_LIMIT else cleaned[:_DETAIL_LIMIT] + "..."


def check_socket(path: Path) -> None:
    """Refuse a path that is missing, a symbolic link, not a socket, or not ours to open."""
    try:
        info = path.lstat()
    except FileNotFoundError as err:
        msg = (
            f"no PodResources socket at {str(path)!r}; is the kubelet running, and is "
            "--kubelet-root its --root-dir?"
        )
        raise PodResourcesError(msg, status="missing") from err
    except PermissionError as err:
        msg = f"permission denied on {str(path)!r}; run as root (the socket is root-only)"
        raise PodResourcesError(msg) from err
    except OSError as err:
        msg = f"cannot look at {str(path)!r}: {err.strerror or err}"
        raise PodResourcesError(msg) from err
    if stat.S_ISLNK(info.st_mode):
        msg = f"{str(path)!r} is a symbolic link; give the kubelet's socket itself"
        raise PodResourcesError(msg)
    if not stat.S_ISSOCK(info.st_mode):
        msg = f"{str(path)!r} is not a Unix socket; give the kubelet's pod-resources socket"
        raise PodResourcesError(msg)
    if not os.access(path, os.R_OK | os.W_OK):
        msg = f"permission denied on {str(path)!r}; run as root (the socket is root-only)"
        raise PodResourcesError(msg)


class PodResourcesClient:
    """One channel to the kubelet's socket; use as a context manager (or call ``close``)."""

    def __init__(
        self,
        socket_path: Path,
        *,
        timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
        max_receive_bytes: int = MAX_RECEIVE_BYTES,
    ) -> None:
        check_socket(socket_path)
        self._path = socket_path
        self._timeout = timeout_seconds
        self._limit = max_receive_bytes
        self._channel = grpc.insecure_channel(
            f"unix:{socket_path.absolute()}",
            options=[
                ("grpc.max_receive_message_length", max_receive_bytes),
                ("grpc.enable_retries", 0),
            ],
        )

    def __enter__(self) -> PodResourcesClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self._channel.close()

    def _call(self, method: str, request: Any) -> Any:
        request_name, response_name = METHODS[method]
        stub = self._channel.unary_unary(
            f"/{SERVICE}/{method}",
            request_serializer=message_class(request_name).SerializeToString,
            response_deserializer=message_class(response_name).FromString,
        )
        try:
            return stub(request, timeout=self._timeout)
        except grpc.RpcError as err:
            raise self._translate(method, err) from None

    def _translate(self, method: str, err: grpc.RpcError) -> PodResourcesError:
        # Failed calls raise an RpcError that is also a grpc.Call (code, details).
        code_of, details_of = getattr(err, "code", None), getattr(err, "details", None)
        code = code_of() if callable(code_of) else grpc.StatusCode.UNKNOWN
        details = _one_line(str(details_of() or "") if callable(details_of) else "")
        call = f"PodResources {method}"
        if code is grpc.StatusCode.UNIMPLEMENTED:
            return PodResourcesError(
                f"{call}: this kubelet does not implement it (an older kubelet); "
                "the snapshot goes on without it",
                status="unimplemented",
            )
        if code is grpc.StatusCode.UNKNOWN and "disabled" in details:
            return PodResourcesError(
                f"{call}: the kubelet says {details!r}; enable its feature gate "
                "(KubeletPodResourcesGet for Get) to get this answer",
                status="disabled",
            )
        if code is grpc.StatusCode.RESOURCE_EXHAUSTED and "rate limit" in details:
            return PodResourcesError(
                f"{call}: the kubelet's rate limit rejected the call ({details!r}); "
                "retry in a second",
                status="rate-limited",
            )
        if code is grpc.StatusCode.RESOURCE_EXHAUSTED:
            return PodResourcesError(
                f"{call}: the answer is larger than {self._limit // (1024 * 1024)} MiB, "
                f"the receive limit ({details!r})"
            )
        if code is grpc.StatusCode.DEADLINE_EXCEEDED:
            return PodResourcesError(
                f"{call}: no answer within {self._timeout:g} s; is the kubelet overloaded?"
            )
        if "ermission denied" in details:
            return PodResourcesError(
                f"{call}: permission denied on {str(self._path)!r}; run as root"
            )
        return PodResourcesError(f"{call} failed: {code.name}: {details or 'no details'}")

    def list(self) -> tuple[PodResources, ...]:
        """``List``: every pod the kubelet knows, with its containers' resources."""
        response = self._call("List", message_class("ListPodResourcesRequest")())
        return wire.pods_from_list(response)

    def allocatable(self) -> AllocatableResources:
        """``GetAllocatableResources``: what the managers can hand out."""
        response = self._call(
            "GetAllocatableResources", message_class("AllocatableResourcesRequest")()
        )
        return wire.allocatable_from_message(response)

    def get(self, namespace: str, name: str) -> PodResources:
        """``Get``: one pod's resources (kubelet 1.27+, gate KubeletPodResourcesGet)."""
        request = message_class("GetPodResourcesRequest")(pod_name=name, pod_namespace=namespace)
        response = self._call("Get", request)
        return wire.pod_from_message("Get", response.pod_resources)


def collect_answers(
    socket_path: Path, *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> PodResourcesAnswers:
    """The three calls' answers; a failed call is recorded, not raised.

    ``Get`` is probed with the first listed pod. Raises PodResourcesError only when there is
    no usable socket at all. When ``List`` cannot reach the kubelet (no answer, no
    connection), the other calls are not tried: they would wait out the same timeout.
    """
    calls: dict[str, CallResult] = {}
    pods: tuple[PodResources, ...] | None = None
    allocatable: AllocatableResources | None = None
    got: PodResources | None = None
    with PodResourcesClient(socket_path, timeout_seconds=timeout_seconds) as client:
        try:
            pods = client.list()
            calls["List"] = CallResult("ok")
        except PodResourcesError as err:
            calls["List"] = CallResult(_status(err), err.message)
            if err.status == "error":
                skipped = CallResult("skipped", "not tried: List could not reach the kubelet")
                calls["GetAllocatableResources"] = calls["Get"] = skipped
                return PodResourcesAnswers(pods=None, allocatable=None, calls=calls)
        try:
            allocatable = client.allocatable()
            calls["GetAllocatableResources"] = CallResult("ok")
        except PodResourcesError as err:
            calls["GetAllocatableResources"] = CallResult(_status(err), err.message)
        if not pods:
            calls["Get"] = CallResult("skipped", "not tried: List named no pod to ask about")
        else:
            try:
                got = client.get(pods[0].namespace, pods[0].name)
                calls["Get"] = CallResult("ok")
            except PodResourcesError as err:
                calls["Get"] = CallResult(_status(err), err.message)
    return PodResourcesAnswers(pods=pods, allocatable=allocatable, calls=calls, get=got)


def _status(err: PodResourcesError) -> Any:
    return err.status if err.status != "missing" else "error"
