"""An API server in memory for the bind verb (``binding.PodSource``) and a scheduler that
drives an extender the way kube-scheduler's cycle does: filter, prioritize, pick the
highest score (first on ties), bind; a refused bind sends the pod back to the queue."""

from __future__ import annotations

import copy
import threading
from dataclasses import dataclass, field
from typing import Any

from cpumanager.errors import CpuManagerError
from tests.extender.conftest import Extender


class BindFailedError(CpuManagerError):
    pass


@dataclass
class FakeApi:
    """Pods by (namespace, name); ``bind`` sets spec.nodeName like the Binding subresource
    (refused when already bound or when ``refuse_binds`` is set)."""

    pods: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    refuse_binds: bool = False
    calls: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, pod: dict[str, Any]) -> None:
        meta = pod["metadata"]
        with self.lock:
            self.pods[(meta["namespace"], meta["name"])] = copy.deepcopy(pod)

    def delete(self, namespace: str, name: str) -> None:
        with self.lock:
            self.pods.pop((namespace, name), None)

    def pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        with self.lock:
            self.calls.append("get")
            found = self.pods.get((namespace, name))
            return copy.deepcopy(found) if found else None

    def node_pods(
        self, node: str, *, active_only: bool = True, consistent: bool = False
    ) -> tuple[list[dict[str, Any]], str]:
        with self.lock:
            self.calls.append("list" if consistent else "list-cached")
            return [
                copy.deepcopy(p) for p in self.pods.values() if p["spec"].get("nodeName") == node
            ], "1"

    def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        with self.lock:
            self.calls.append("bind")
            pod = self.pods.get((namespace, name))
            if self.refuse_binds or pod is None or pod["spec"].get("nodeName"):
                msg = f"binding {namespace}/{name} refused"
                raise BindFailedError(msg)
            if pod["metadata"]["uid"] != uid:
                msg = "uid precondition failed"
                raise BindFailedError(msg)
            pod["spec"]["nodeName"] = node

    def bound(self) -> dict[str, list[dict[str, Any]]]:
        placed: dict[str, list[dict[str, Any]]] = {}
        with self.lock:
            for pod in self.pods.values():
                if pod["spec"].get("nodeName"):
                    placed.setdefault(pod["spec"]["nodeName"], []).append(copy.deepcopy(pod))
        return placed


def schedule(extender: Extender, pod: dict[str, Any], nodes: list[str]) -> tuple[str, str]:
    """One scheduling cycle of ``pod``: ("bound", node), ("unschedulable", "") or
    ("bind-refused", error)."""
    status, result = extender.call("POST", "/filter", {"Pod": pod, "NodeNames": nodes})
    if status != 200:
        msg = f"filter answered {status}: {result}"
        raise AssertionError(msg)
    feasible = result["NodeNames"]
    if not feasible:
        return "unschedulable", ""
    status, scores = extender.call("POST", "/prioritize", {"Pod": pod, "NodeNames": feasible})
    assert status == 200
    by_node = {entry["Host"]: entry["Score"] for entry in scores}
    best = max(feasible, key=lambda n: (by_node[n], -feasible.index(n)))
    meta = pod["metadata"]
    args = {"PodName": meta["name"], "PodNamespace": meta["namespace"], "PodUID": meta["uid"]}
    status, answer = extender.call("POST", "/bind", {**args, "Node": best})
    assert status == 200
    if answer["Error"]:
        return "bind-refused", answer["Error"]
    return "bound", best
