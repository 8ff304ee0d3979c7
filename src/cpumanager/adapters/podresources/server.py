"""A ``v1.PodResourcesLister`` server with fixed answers: a stand-in kubelet on a Unix socket.

The kubelet cannot run in tests or demos; its protocol can. :func:`serve` answers ``List``,
``GetAllocatableResources`` and ``Get`` from a :class:`PodResourcesAnswers` value and can
behave like the kubelets that fail: a call left out is UNIMPLEMENTED (an older kubelet),
``get_disabled`` answers Get as a kubelet with its gate off, ``rate_limit_after`` rejects
calls past a count with the kubelet's ResourceExhausted, ``delay_seconds`` answers late.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent import futures
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from cpumanager.adapters.podresources import wire
from cpumanager.adapters.podresources.messages import METHODS, SERVICE, message_class
from cpumanager.nodeview.podresources import PodResourcesAnswers

__all__ = ["ServerBehaviour", "serve"]


@dataclass(frozen=True, slots=True)
class ServerBehaviour:
    """How the stand-in kubelet misbehaves (all off by default)."""

    implemented: tuple[str, ...] = ("List", "GetAllocatableResources", "Get")
    get_disabled: bool = False
    rate_limit_after: int | None = None
    delay_seconds: float = 0.0


def serve(
    socket_path: Path,
    answers: PodResourcesAnswers,
    behaviour: ServerBehaviour = ServerBehaviour(),
) -> grpc.Server:
    """Start serving on ``socket_path``; the caller stops it (``server.stop(None)``)."""
    lock = threading.Lock()
    served = [0]
    pods = answers.pods or ()

    def gate(context: grpc.ServicerContext) -> None:
        with lock:
            served[0] += 1
            count = served[0]
        if behaviour.rate_limit_after is not None and count > behaviour.rate_limit_after:
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "rejected by rate limit")
        if behaviour.delay_seconds:
            time.sleep(behaviour.delay_seconds)

    def list_pods(_request: Any, context: grpc.ServicerContext) -> Any:
        gate(context)
        return wire.list_response(pods)

    def allocatable(_request: Any, context: grpc.ServicerContext) -> Any:
        gate(context)
        if answers.allocatable is None:
            return message_class("AllocatableResourcesResponse")()
        return wire.allocatable_response(answers.allocatable)

    def get(request: Any, context: grpc.ServicerContext) -> Any:
        gate(context)
        if behaviour.get_disabled:
            context.abort(grpc.StatusCode.UNKNOWN, "PodResources API Get method disabled")
        for pod in pods:
            if (pod.namespace, pod.name) == (request.pod_namespace, request.pod_name):
                return wire.get_response(pod)
        context.abort(
            grpc.StatusCode.UNKNOWN,
            f"pod {request.pod_name} in namespace {request.pod_namespace} not found",
        )
        raise AssertionError  # pragma: no cover - abort raises

    handlers: dict[str, Callable[[Any, grpc.ServicerContext], Any]] = {
        "List": list_pods,
        "GetAllocatableResources": allocatable,
        "Get": get,
    }
    rpc = {
        name: grpc.unary_unary_rpc_method_handler(
            handler,
            request_deserializer=message_class(METHODS[name][0]).FromString,
            response_serializer=message_class(METHODS[name][1]).SerializeToString,
        )
        for name, handler in handlers.items()
        if name in behaviour.implemented
    }
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, rpc),))
    server.add_insecure_port(f"unix:{socket_path.absolute()}")
    server.start()
    return server
